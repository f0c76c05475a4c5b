// Where composed masses live: the FFT buffers a run's jobs hand on to each other, and the window of
// masses read out of a circular inverse transform. Apart from the arithmetic: what these save is
// fresh pages (each costs about an FFT pass over it), and DiscretePld::tables needs them too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "numerics/real_fft.h"

namespace dpx::core::accounting::pld::detail {

// Transform buffers for the jobs of a run: a job whose PLD keeps a spectrum hands its buffer
// to the next job, whose transform then runs on pages already touched (a fresh page costs about
// as much as an FFT pass over it).
class BufferPool {
 public:
  explicit BufferPool(std::size_t doubles) : m_doubles(doubles) {}
  numerics::RealBuffer take() {
    {
      const std::lock_guard lock(m_mutex);
      if (!m_free.empty()) {
        numerics::RealBuffer b = std::move(m_free.back());
        m_free.pop_back();
        return b;
      }
    }
    return numerics::realBuffer(m_doubles);
  }
  void give(numerics::RealBuffer buffer) {
    if (!buffer) return;
    const std::lock_guard lock(m_mutex);
    m_free.push_back(std::move(buffer));
  }
  std::size_t doubles() const { return m_doubles; }

 private:
  std::size_t m_doubles;
  std::mutex m_mutex;
  std::vector<numerics::RealBuffer> m_free;
};

// The composed masses (FFT round-off leaves ±1e−17·(largest mass) where the true mass is 0,
// clamped) of the `points` circular positions from `start` on, moved in place to
// circular[0 … points) (rotated first when they wrap around the end): no fresh pages for a
// composed run's masses. `circular` is an inverse transform of size n, unscaled by n.
void compactWindow(double* circular, std::size_t n, std::size_t start, std::size_t points);

// The composed masses of the `points` circular positions from `start` on (FFT round-off clamped,
// as compactWindow), copied out of the inverse transform `circular` of size n.
std::vector<double> readWindow(const double* circular, std::size_t n, std::size_t start, std::size_t points);

// The circular position of absolute grid index `index` in a composition whose position 0 holds
// absolute index `offset` (mod n).
std::size_t circularPosition(std::int64_t index, std::int64_t offset, std::size_t n);

}  // namespace dpx::core::accounting::pld::detail
