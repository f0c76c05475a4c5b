#include "numerics/band_dft.h"

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

}  // namespace

std::size_t bandDftSize(std::size_t length, std::size_t band) { return kissFftSize(length + band - 1); }

void bandDft(std::span<const double> x, std::size_t n, std::size_t first, std::span<std::complex<double>> out) {
  assert(!x.empty() && n >= 1 && first + out.size() <= n);
  if (out.empty()) return;
  const std::size_t length = x.size();
  const std::size_t band = out.size();
  const std::size_t size = bandDftSize(length, band);
  const std::uint64_t twoN = 2 * static_cast<std::uint64_t>(n);
  // chirp[d] = W^{−d²/2} = e^{iπd²/n}, d = 0 … max(length, band) − 1 (the chirp is even in d).
  std::vector<std::complex<double>> chirp(std::max(length, band));
  for (std::uint64_t d = 0, e = 0; d < chirp.size(); ++d) {  // e = d² mod 2n
    chirp[d] = halfTurn(e, n);
    e = (e + 2 * d + 1) % twoN;
  }
  // a_j = x_j W^{j·first} W^{j²/2} = x_j e^{−iπ(j² + 2j·first)/n}, zero-padded to the size.
  std::vector<std::complex<double>> a(size), aHat(size);
  const std::uint64_t shift = (2 * static_cast<std::uint64_t>(first)) % twoN;
  for (std::uint64_t j = 0, e = 0; j < length; ++j) {  // e = 2j·first mod 2n
    a[j] = first == 0 ? x[j] * std::conj(chirp[j]) : x[j] * std::conj(chirp[j] * halfTurn(e, n));
    e = (e + shift) % twoN;
  }
  // The chirp on the circle: b_d at d (0 ≤ d < band) and at size − d (0 < d < length).
  std::vector<std::complex<double>> b(size), bHat(size);
  for (std::size_t d = 0; d < band; ++d) b[d] = chirp[d];
  for (std::size_t d = 1; d < length; ++d) b[size - d] = chirp[d];
  complexForward(a.data(), aHat.data(), size);
  complexForward(b.data(), bHat.data(), size);
  // The inverse as a forward transform of the conjugate: one set of twiddles per size.
  for (std::size_t k = 0; k < size; ++k) aHat[k] = std::conj(aHat[k] * bHat[k]);
  complexForward(aHat.data(), a.data(), size);
  const double scale = 1.0 / static_cast<double>(size);
  for (std::size_t t = 0; t < band; ++t) out[t] = std::conj(chirp[t]) * std::conj(a[t]) * scale;
}

}  // namespace dpx::core::numerics
