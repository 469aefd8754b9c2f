// inductive/random.h - seeded random draws that are the same in every build.
//
// std::uniform_int_distribution, std::uniform_real_distribution, std::normal_distribution and std::shuffle are
// implementation-defined: libstdc++ (the native build) and libc++ (Emscripten, the browser build) turn the same
// mt19937_64 stream into different numbers, so an unsupervised OTKE fit with the same seed gave another model in
// the browser than on the command line. The engine's output is standardised; these draws on it are defined here.
#pragma once

#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <utility>

namespace inductive {

// Uniform integer in [0, n), n >= 1, unbiased (draws in the incomplete top range are rejected).
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // a multiple of n
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

// A seed derived from (seed, stream) by a splitmix64 finaliser: distinct streams get unrelated engines.
inline uint64_t mix_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform double in [0, 1) from the top 53 bits of one draw.
inline double uniform_unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Standard normal (Box-Muller, two draws per value; the second value of the pair is not kept, so each call
// depends only on the engine's state).
inline double standard_normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform_unit(rng);  // (0, 1]: log is finite
  const double u2 = uniform_unit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Fisher-Yates shuffle of a random-access range.
template <typename It>
void shuffle_range(It begin, It end, std::mt19937_64& rng) {
  const auto n = static_cast<uint64_t>(std::distance(begin, end));
  for (uint64_t i = n; i > 1; --i) std::swap(begin[i - 1], begin[uniform_below(rng, i)]);
}

}  // namespace inductive
