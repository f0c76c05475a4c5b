#include "numerics/band_dft.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "numerics/real_fft.h"

namespace dpx::core::numerics {

namespace {

// e^{iπe/n} for an integer e reduced mod 2n: the angle is exact before the sine and cosine.
std::complex<double> halfTurn(std::uint64_t e, std::size_t n) {
  const double angle = std::numbers::pi * static_cast<double>(e) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// Three transform buffers per thread, kept between calls up to this many points each.
constexpr std::size_t kKeptScratchPoints = std::size_t{1} << 16;

class Scratch {
 public:
  // Three buffers of `size` points (their contents are not cleared).
  std::complex<double>* buffer(int which, std::size_t size) {
    std::vector<std::complex<double>>& b = m_buffers[which];
    if (b.size() < size) b.resize(size);
    return b.data();
  }
  // Frees buffers beyond the kept size (a rare long step must not stay resident in a worker).
  void trim() {
    for (auto& b : m_buffers) {
      if (b.size() > kKeptScratchPoints) std::vector<std::complex<double>>().swap(b);
    }
  }

 private:
  std::vector<std::complex<double>> m_buffers[3];
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

}  // namespace

std::size_t bandDftSize(std::size_t length, std::size_t band) { return kissFftSize(length + band - 1); }

void bandDft(std::span<const double> x, std::size_t n, std::size_t first, std::span<std::complex<double>> out,
             std::size_t size) {
  assert(!x.empty() && n >= 1 && first + out.size() <= n);
  if (out.empty()) return;
  const std::size_t length = x.size();
  const std::size_t band = out.size();
  if (size == 0) size = bandDftSize(length, band);
  assert(size >= length + band - 1);
  const std::uint64_t twoN = 2 * static_cast<std::uint64_t>(n);
  Scratch& s = scratch();
  // b: the chirp W^{−d²/2} = e^{iπd²/n} on the circle, at d (0 ≤ d < band) and at size − d
  // (0 < d < length); zero between.
  std::complex<double>* b = s.buffer(0, size);
  std::fill(b, b + size, std::complex<double>(0.0, 0.0));
  for (std::uint64_t d = 0, e = 0; d < std::max(length, band); ++d) {  // e = d² mod 2n
    const std::complex<double> chirp = halfTurn(e, n);
    if (d < band) b[d] = chirp;
    if (d > 0 && d < length) b[size - d] = chirp;
    e = (e + 2 * d + 1) % twoN;
  }
  // The output's chirp W^{t²/2}, kept in `out` until the convolution is there.
  for (std::size_t t = 0; t < band; ++t) out[t] = std::conj(b[t]);
  std::complex<double>* bHat = s.buffer(1, size);
  complexForward(b, bHat, size);
  // a_j = x_j W^{j·first} W^{j²/2} = x_j e^{−iπ(j² + 2j·first)/n}, zero-padded to the size. The
  // chirps are b's (b_j for j < band, b_{size−j} otherwise), which b's transform left in place.
  std::complex<double>* a = s.buffer(2, size);
  const std::uint64_t shift = (2 * static_cast<std::uint64_t>(first)) % twoN;
  for (std::uint64_t j = 0, e = 0; j < length; ++j) {  // e = 2j·first mod 2n
    const std::complex<double> chirp = j < band ? b[j] : b[size - j];
    a[j] = first == 0 ? x[j] * std::conj(chirp) : x[j] * std::conj(chirp * halfTurn(e, n));
    e = (e + shift) % twoN;
  }
  std::fill(a + length, a + size, std::complex<double>(0.0, 0.0));
  complexForward(a, b, size);  // â, over the chirp (no longer needed)
  // The inverse as a forward transform of the conjugate: one set of twiddles per size.
  for (std::size_t k = 0; k < size; ++k) b[k] = std::conj(b[k] * bHat[k]);
  complexForward(b, a, size);
  const double scale = 1.0 / static_cast<double>(size);
  for (std::size_t t = 0; t < band; ++t) out[t] *= std::conj(a[t]) * scale;
  s.trim();
}

void dftMagnitudes(std::span<const double> x, std::size_t size, std::span<double> out) {
  assert(x.size() <= size && out.size() == size / 2 + 1);
  Scratch& s = scratch();
  std::complex<double>* in = s.buffer(0, size);
  std::copy(x.begin(), x.end(), in);
  std::fill(in + x.size(), in + size, std::complex<double>(0.0, 0.0));
  std::complex<double>* spectrum = s.buffer(1, size);
  complexForward(in, spectrum, size);
  for (std::size_t r = 0; r < out.size(); ++r) out[r] = std::abs(spectrum[r]);
  s.trim();
}

}  // namespace dpx::core::numerics
