// What the timed harnesses share: the p-quantile (nearest rank) of a sample of times.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dpx::bench {

inline double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace dpx::bench
