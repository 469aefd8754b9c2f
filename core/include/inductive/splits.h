// inductive/splits.h - train/validation splits that every front end (CLI, browser, MPI ranks) draws identically.
//
// Both shuffle with std::mt19937_64 directly (no std::uniform_int_distribution, whose output differs between
// standard libraries), seeded with seed ^ 0x9e3779b97f4a7c15, so one seed gives one split in every build. Indices
// come back sorted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace inductive {

// Stratified: per class c (labels y in [0, names.size())), round(fraction * count) samples, at least 1 and leaving
// at least 1 to train, validate. A class with fewer than 2 samples is an Error{kInvalidArgument} naming it.
void stratified_split(const std::vector<int32_t>& y, const std::vector<std::string>& names, double fraction,
                      uint64_t seed, std::vector<int32_t>& train, std::vector<int32_t>& val);

// Seeded random (regression: there are no classes to stratify by): round(fraction n) samples, at least 1, at most
// n - 1, validate.
void random_split(int n, double fraction, uint64_t seed, std::vector<int32_t>& train, std::vector<int32_t>& val);

}  // namespace inductive
