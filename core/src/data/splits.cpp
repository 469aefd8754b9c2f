// Train/validation splits (see inductive/splits.h).
#include "inductive/splits.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "inductive/error.h"

namespace inductive {
namespace {

void check_fraction(double fraction) {
  INDUCTIVE_CHECK(fraction > 0 && fraction < 1, ErrorCode::kInvalidArgument, "--val-fraction must be in (0, 1): got ",
                  fraction);
}

// 0..n-1 in the seed's order (Fisher-Yates from the top, one mt19937_64 draw per step).
std::vector<int32_t> shuffled(size_t n, uint64_t seed) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

int64_t validation_count(double fraction, int64_t n) {
  return std::clamp<int64_t>(std::llround(fraction * n), 1, n - 1);
}

}  // namespace

void stratified_split(const std::vector<int32_t>& y, const std::vector<std::string>& names, double fraction,
                      uint64_t seed, std::vector<int32_t>& train, std::vector<int32_t>& val) {
  check_fraction(fraction);
  const std::vector<int32_t> order = shuffled(y.size(), seed);
  for (size_t c = 0; c < names.size(); ++c) {
    std::vector<int32_t> members;
    for (int32_t i : order)
      if (y[i] == static_cast<int32_t>(c)) members.push_back(i);
    const auto n = static_cast<int64_t>(members.size());
    INDUCTIVE_CHECK(n >= 2, ErrorCode::kInvalidArgument, "class '", names[c], "' has ", n,
                    " labelled sample(s); each class needs >= 2 (one to train, one to validate)");
    const int64_t n_val = validation_count(fraction, n);
    val.insert(val.end(), members.begin(), members.begin() + n_val);
    train.insert(train.end(), members.begin() + n_val, members.end());
  }
  std::sort(train.begin(), train.end());
  std::sort(val.begin(), val.end());
}

void random_split(int n, double fraction, uint64_t seed, std::vector<int32_t>& train, std::vector<int32_t>& val) {
  check_fraction(fraction);
  INDUCTIVE_CHECK(n >= 2, ErrorCode::kInvalidArgument, "a validation split needs >= 2 samples: got ", n);
  const std::vector<int32_t> order = shuffled(static_cast<size_t>(n), seed);
  const int64_t n_val = validation_count(fraction, n);
  val.assign(order.begin(), order.begin() + n_val);
  train.assign(order.begin() + n_val, order.end());
  std::sort(train.begin(), train.end());
  std::sort(val.begin(), val.end());
}

}  // namespace inductive
