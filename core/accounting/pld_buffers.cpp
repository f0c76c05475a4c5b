// The window of composed masses read out of a circular inverse transform, in place or copied out:
// shared by the composition, which makes the inverse, and by DiscretePld::tables, which makes the
// one a spectral PLD skipped.
#include "accounting/pld_buffers.h"

#include <algorithm>

namespace dpx::core::accounting::pld::detail {

void compactWindow(double* circular, std::size_t n, std::size_t start, std::size_t points) {
  if (start + points > n) {
    std::rotate(circular, circular + start, circular + n);
    start = 0;
  }
  const double scale = 1.0 / static_cast<double>(n);
  const double* from = circular + start;
  for (std::size_t i = 0; i < points; ++i) circular[i] = std::max(0.0, from[i] * scale);  // from ≥ to
}

std::vector<double> readWindow(const double* circular, std::size_t n, std::size_t start, std::size_t points) {
  std::vector<double> masses(points);
  const double scale = 1.0 / static_cast<double>(n);
  std::size_t out = 0;
  while (out < masses.size()) {
    const std::size_t run = std::min(masses.size() - out, n - start);
    for (std::size_t i = 0; i < run; ++i) masses[out + i] = std::max(0.0, circular[start + i] * scale);
    out += run;
    start = 0;
  }
  return masses;
}

std::size_t circularPosition(std::int64_t index, std::int64_t offset, std::size_t n) {
  const auto nn = static_cast<std::int64_t>(n);
  std::int64_t pos = (index - offset) % nn;
  if (pos < 0) pos += nn;
  return static_cast<std::size_t>(pos);
}

}  // namespace dpx::core::accounting::pld::detail
