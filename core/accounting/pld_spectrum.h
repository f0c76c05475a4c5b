// A composition in the frequency domain: the steps' spectra raised to their counts, the band of
// frequencies a long run's power leaves alive, and the spectrum a run's PLD keeps instead of its
// masses. Shared by the composition, which makes that spectrum, and DiscretePld, which reads it.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numbers>
#include <optional>
#include <span>
#include <vector>

#include "accounting/privacy_loss_distribution.h"

namespace dpx::core::accounting::pld {

// The composed masses of the kept window are x_i = Re Σ_k c_k ω^{ki} (i = 0 … W−1, ω = e^{2πi/n}),
// c_k = w_k Z_k ω^{k·start}/n with w_k = 2, but 1 at k = 0 and n/2 (the real inverse of the
// half spectrum Z_0 … Z_{n/2}). Their tail sums are geometric in ω^k:
//   Σ_{i=j}^{W−1} x_i           = Re Σ_k c_k (ω^{kj} − ω^{kW}) / (1 − ω^k),
//   Σ_{i=j}^{W−1} x_i e^{−(i−j)Δ} = Re Σ_k c_k ω^{kj} (1 − e^{−(W−j)Δ} ω^{k(W−j)}) / (1 − e^{−Δ}ω^k),
// and at k = 0 (W − j)·c_0 and c_0 (1 − e^{−(W−j)Δ})/(1 − e^{−Δ}). Each term is at most
// ~2|Z_k|/k (|1 − ω^k| ≥ 4k/n), so the sums carry ~1e−16·Σ|Z_k|/k ≈ 1e−15 of round-off, below
// the ~1e−12 an inverse transform leaves; frequencies with |Z_k| under 1e−17·|Z_0| over their
// number change them by less than 2e−17 together and are left out of the sums (most of the
// survivors of the K-th power: |Z_k| falls like a Gaussian in k).
struct DiscretePld::Spectrum {
  std::size_t n = 0;  // transform size, and the threads it was composed with: the tables
  int threads = 1;    // tables() makes are the ones an inverse right after composition gives
  std::size_t start = 0;
  std::size_t points = 0;
  double interval = 0.0;
  double constant = 0.0;                         // c_0
  std::vector<std::size_t> frequency;            // k ≥ 1 in the sums
  std::vector<std::complex<double>> sumWeight;   // c_k / (1 − ω^k)
  std::vector<std::complex<double>> tiltWeight;  // c_k / (1 − e^{−Δ}ω^k)
  std::vector<std::complex<double>> end;         // ω^{kW}
  // Every k with Z_k ≠ 0 (Z_0 first) and Z_k as the composition left them: the inverse.
  std::vector<std::size_t> rawFrequency;
  std::vector<std::complex<double>> raw;
  std::once_flag tabulated;
  DiscretePld tables;  // profileOnly, once made

  Tails tails(std::size_t j) const {
    const std::size_t rest = points - j;
    const double restLoss = static_cast<double>(rest) * interval;
    const double fade = std::exp(-restLoss);  // e^{−(W−j)Δ}
    double suffixSum = constant * static_cast<double>(rest);
    double tiltedSum = constant * (std::expm1(-restLoss) / std::expm1(-interval));
    const double radiansPerStep = 2.0 * std::numbers::pi / static_cast<double>(n);
    for (std::size_t f = 0; f < frequency.size(); ++f) {
      const std::uint64_t turn = (static_cast<std::uint64_t>(frequency[f]) * j) % n;
      const double angle = radiansPerStep * static_cast<double>(turn);
      const std::complex<double> at(std::cos(angle), std::sin(angle));  // ω^{kj}
      const std::complex<double> toEnd = end[f] * std::conj(at);        // ω^{k(W−j)}
      suffixSum += realOfProduct(sumWeight[f], at - end[f]);
      tiltedSum += realOfProduct(tiltWeight[f], at * (1.0 - fade * toEnd));
    }
    return {suffixSum, tiltedSum};
  }

 private:
  static double realOfProduct(std::complex<double> a, std::complex<double> b) {
    return a.real() * b.real() - a.imag() * b.imag();
  }
};

namespace detail {

// product[k] ·= spectrum[k]^count for every frequency k (product == spectrum: it becomes the
// power), in parallel. Returns how many frequencies of each block of them are not zero after the
// product (what liveFrequencies reads).
std::vector<std::size_t> multiplyByPower(std::complex<double>* product, const std::complex<double>* spectrum,
                                         std::size_t size, std::int64_t count, bool first);

// Whether a run's PLD keeps the spectrum of its composition (DiscretePld::spectral) rather than
// δ's tables, for `frequencies` surviving out of a transform of size n.
bool fewEnoughForSpectrum(std::size_t frequencies, std::size_t n);

// The half spectrum Z_0 … Z_{n/2} that an inverse of size n would read, as its frequencies with
// Z_k ≠ 0: k = 0 first, then increasing.
struct SparseHalfSpectrum {
  std::vector<std::size_t> frequency;
  std::vector<std::complex<double>> value;
};

// The spectrum a run's PLD keeps for the `points` composed masses from circular position `start`
// on, from the surviving half spectrum of a transform of size n composed on `threads` threads.
std::shared_ptr<DiscretePld::Spectrum> sparseSpectrum(SparseHalfSpectrum z, std::size_t n, int threads,
                                                      std::size_t start, std::size_t points, double interval);

// The nonzero frequencies of a half spectrum z of size n/2 + 1 (Z_0 always), from the blocks
// multiplyByPower left alive.
SparseHalfSpectrum liveFrequencies(const std::complex<double>* z, std::size_t n, std::span<const std::size_t> alive);

// Whether a composition on a transform of size n may take the band path (whether it does
// depends on the candidates).
bool bandPathPossible(std::span<const Segment> segments, std::size_t n);

// The spectrum of the composition at the frequencies that can survive, and nothing else (dead
// ones are 0, as in the full transform). Null when the band path is not the faster one: the
// full transform is less than bandMinimumRatio(n) times the short one, or the candidates are
// too many or too scattered.
std::optional<SparseHalfSpectrum> bandSpectrum(std::span<const Segment> segments, std::size_t n);

}  // namespace detail
}  // namespace dpx::core::accounting::pld
