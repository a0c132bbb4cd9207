// The median of a set of measured figures (calibrate's priors and sibling boards).
#pragma once
#include <algorithm>
#include <vector>

namespace kcast {

// The middle value of `v`, or the mean of the two middle ones; `v` must not be empty.
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace kcast
