#include "accounting/privacy_loss_distribution.h"

#include <tbb/blocked_range.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <numbers>
#include <optional>
#include <string>
#include <thread>

#include "common/format.h"
#include "common/parallel.h"
#include "numerics/band_dft.h"
#include "numerics/real_fft.h"
#include "numerics/root_finding.h"
#include "numerics/special_functions.h"
#include "numerics/vector_math.h"

namespace dpx::core::accounting::pld {
namespace {

using numerics::complexBuffer;
using numerics::ComplexBuffer;
using numerics::logAddExp;
using numerics::logSubExp;
using numerics::normalCdf;
using numerics::realBuffer;
using numerics::RealBuffer;
using numerics::RealTransform;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kInvSqrt2 = 0.70710678118654752440;

// Memory guards, checked before allocating: 16 M doubles per step grid, 64 M in the composed
// window (≈ 1.5 GB with the FFT buffers). The automatic discretisation stays far below both.
constexpr std::int64_t kMaxStepGridPoints = 16'000'000;
constexpr std::int64_t kMaxComposedWindowPoints = 64'000'000;

Status cancelledStatus() { return Status::cancelled("the privacy loss distribution computation was cancelled"); }

// z^k by squaring, with plain arithmetic (std::complex's operator* checks for NaN/∞ per C
// Annex G, which costs more than the multiplication).
inline void complexPower(double& re, double& im, std::int64_t k) {
  double rr = 1.0, ri = 0.0;
  double br = re, bi = im;
  while (k > 0) {
    if (k & 1) {
      const double t = rr * br - ri * bi;
      ri = rr * bi + ri * br;
      rr = t;
    }
    k >>= 1;
    if (k > 0) {
      const double t = br * br - bi * bi;
      bi = 2.0 * br * bi;
      br = t;
    }
  }
  re = rr;
  im = ri;
}

// The composed masses (FFT round-off leaves ±1e−17·(largest mass) where the true mass is 0,
// clamped) of the `points` circular positions from `start` on, moved in place to
// circular[0 … points) (rotated first when they wrap around the end): no fresh pages for a
// composed run's masses. `circular` is an inverse transform of size n, unscaled by n.
void compactWindow(double* circular, std::size_t n, std::size_t start, std::size_t points) {
  if (start + points > n) {
    std::rotate(circular, circular + start, circular + n);
    start = 0;
  }
  const double scale = 1.0 / static_cast<double>(n);
  const double* from = circular + start;
  for (std::size_t i = 0; i < points; ++i) circular[i] = std::max(0.0, from[i] * scale);  // from ≥ to
}

// The circular position of absolute grid index `index` in a composition whose position 0 holds
// absolute index `offset` (mod n).
std::size_t circularPosition(std::int64_t index, std::int64_t offset, std::size_t n) {
  const auto nn = static_cast<std::int64_t>(n);
  std::int64_t pos = (index - offset) % nn;
  if (pos < 0) pos += nn;
  return static_cast<std::size_t>(pos);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SubsampledGaussianPair

SubsampledGaussianPair::SubsampledGaussianPair(double q, double sigma, Direction direction)
    : m_q(q), m_sigma(sigma), m_direction(direction) {
  m_logQ = std::log(q);
  m_log1mQ = std::log1p(-q);  // −∞ at q = 1
  if (direction == Direction::kRemove) {
    // P = (1−q)N(0,σ²) + qN(1,σ²), Q = N(0,σ²); loss = log(1 − q + q e^{(2x−1)/(2σ²)}).
    m_pWeight = q;
    m_pShift = 1.0;
    m_qWeight = 0.0;
    m_qShift = 0.0;
    m_lossMin = m_log1mQ;
    m_lossMax = kInf;
  } else {
    // In y = −x: P = N(0,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²); loss = −log(1 − q + q e^{(−2y−1)/(2σ²)}).
    m_pWeight = 0.0;
    m_pShift = 0.0;
    m_qWeight = q;
    m_qShift = -1.0;
    m_lossMin = -kInf;
    m_lossMax = -m_log1mQ;
  }
}

double SubsampledGaussianPair::loss(double x) const {
  const double s2 = 2.0 * m_sigma * m_sigma;
  if (m_direction == Direction::kRemove) return logAddExp(m_log1mQ, m_logQ + (2.0 * x - 1.0) / s2);
  return -logAddExp(m_log1mQ, m_logQ + (-2.0 * x - 1.0) / s2);
}

double SubsampledGaussianPair::inverseLoss(double l) const {
  const double s2 = m_sigma * m_sigma;
  if (m_direction == Direction::kRemove) return s2 * (logSubExp(l, m_log1mQ) - m_logQ) + 0.5;
  return -s2 * (logSubExp(-l, m_log1mQ) - m_logQ) - 0.5;
}

double SubsampledGaussianPair::mixtureCdf(double x, double weight, double shift) const {
  const double base = normalCdf(x / m_sigma);
  return weight == 0.0 ? base : (1.0 - weight) * base + weight * normalCdf((x - shift) / m_sigma);
}

double SubsampledGaussianPair::mixtureSf(double x, double weight, double shift) const {
  const double base = normalCdf(-x / m_sigma);
  return weight == 0.0 ? base : (1.0 - weight) * base + weight * normalCdf((shift - x) / m_sigma);
}

double SubsampledGaussianPair::mixturePdf(double x, double weight, double shift) const {
  const double z0 = x / m_sigma;
  const double base = std::exp(-0.5 * z0 * z0);
  double value = base;
  if (weight != 0.0) {
    const double z1 = (x - shift) / m_sigma;
    value = (1.0 - weight) * base + weight * std::exp(-0.5 * z1 * z1);
  }
  return value * kInvSqrt2Pi / m_sigma;
}

// The mixed component (P's for remove, Q's for add; at q = 1 P is it entirely) and N(0, σ²) are
// evaluated together, one two-lane vector call for both.
void SubsampledGaussianPair::survival(double x, double& p, double& q) const {
  const double shift = m_pWeight != 0.0 ? m_pShift : m_qShift;
  const auto tails = numerics::erfcOfTwo(x / m_sigma * kInvSqrt2, (x - shift) / m_sigma * kInvSqrt2);
  const double base = 0.5 * tails[0];
  const double shifted = 0.5 * tails[1];
  p = m_pWeight == 0.0 ? base : (1.0 - m_pWeight) * base + m_pWeight * shifted;
  q = m_qWeight == 0.0 ? base : (1.0 - m_qWeight) * base + m_qWeight * shifted;
}

void SubsampledGaussianPair::distribution(double x, double& p, double& q) const {
  const double shift = m_pWeight != 0.0 ? m_pShift : m_qShift;
  const auto heads = numerics::erfcOfTwo(-x / m_sigma * kInvSqrt2, (shift - x) / m_sigma * kInvSqrt2);
  const double base = 0.5 * heads[0];
  const double shifted = 0.5 * heads[1];
  p = m_pWeight == 0.0 ? base : (1.0 - m_pWeight) * base + m_pWeight * shifted;
  q = m_qWeight == 0.0 ? base : (1.0 - m_qWeight) * base + m_qWeight * shifted;
}

void SubsampledGaussianPair::density(double x, double& p, double& q) const {
  double pSlope = 0.0;
  double qSlope = 0.0;
  density(x, p, q, pSlope, qSlope);
}

void SubsampledGaussianPair::density(double x, double& p, double& q, double& pSlope, double& qSlope) const {
  const double s2 = m_sigma * m_sigma;
  const double shift = m_pWeight != 0.0 ? m_pShift : m_qShift;
  const double z0 = x / m_sigma;
  const double z1 = (x - shift) / m_sigma;
  const auto kernels = numerics::expOfTwo(-0.5 * z0 * z0, -0.5 * z1 * z1);
  const double base = kernels[0] * kInvSqrt2Pi / m_sigma;
  const double shifted = kernels[1] * kInvSqrt2Pi / m_sigma;
  // A component N(μ, σ²) of weight w contributes w·φ and, to the slope, −w·φ·(x − μ)/σ².
  auto mixture = [&](double weight, double& value, double& slope) {
    if (weight == 0.0) {
      value = base;
      slope = -base * x / s2;
      return;
    }
    value = (1.0 - weight) * base + weight * shifted;
    slope = -((1.0 - weight) * base * x + weight * shifted * (x - shift)) / s2;
  };
  mixture(m_pWeight, p, pSlope);
  mixture(m_qWeight, q, qSlope);
}

double SubsampledGaussianPair::cdfP(double x) const { return mixtureCdf(x, m_pWeight, m_pShift); }
double SubsampledGaussianPair::sfP(double x) const { return mixtureSf(x, m_pWeight, m_pShift); }
double SubsampledGaussianPair::cdfQ(double x) const { return mixtureCdf(x, m_qWeight, m_qShift); }
double SubsampledGaussianPair::sfQ(double x) const { return mixtureSf(x, m_qWeight, m_qShift); }
double SubsampledGaussianPair::pdfP(double x) const { return mixturePdf(x, m_pWeight, m_pShift); }
double SubsampledGaussianPair::pdfQ(double x) const { return mixturePdf(x, m_qWeight, m_qShift); }

double SubsampledGaussianPair::massP(double a, double b) const {
  return a >= 0.0 ? sfP(a) - sfP(b) : cdfP(b) - cdfP(a);
}

double SubsampledGaussianPair::massQ(double a, double b) const {
  return a >= 0.0 ? sfQ(a) - sfQ(b) : cdfQ(b) - cdfQ(a);
}

double SubsampledGaussianPair::hockeyStick(double epsilon) const {
  if (epsilon <= m_lossMin) return -std::expm1(epsilon);  // every outcome has loss > ε
  if (epsilon >= m_lossMax) return 0.0;
  const double x = inverseLoss(epsilon);
  double p = 0.0;
  double q = 0.0;
  survival(x, p, q);
  return std::max(0.0, p - std::exp(epsilon) * q);
}

namespace {
// The batch functions work through their arrays in pieces of this many, in buffers on the stack.
constexpr std::size_t kBatchPiece = 256;
}  // namespace

void SubsampledGaussianPair::inverseLosses(std::span<const double> losses, std::span<double> xs) const {
  // inverseLoss with its sign s folded in: x = s·(σ²·(sℓ + log(1 − e^{log(1−q) − sℓ}) − log q) + ½).
  const double s = m_direction == Direction::kRemove ? 1.0 : -1.0;
  const double s2 = m_sigma * m_sigma;
  const std::size_t n = losses.size();
  if (m_log1mQ == -kInf) {  // q = 1
    for (std::size_t i = 0; i < n; ++i) xs[i] = s * (s2 * (s * losses[i] - m_logQ) + 0.5);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) xs[i] = m_log1mQ - s * losses[i];
  numerics::log1mExpInPlace(xs.first(n));
  for (std::size_t i = 0; i < n; ++i) xs[i] = s * (s2 * ((s * losses[i] + xs[i]) - m_logQ) + 0.5);
}

void SubsampledGaussianPair::mixtureTails(std::span<const double> xs, bool upper, std::span<double> p,
                                          std::span<double> q) const {
  // Φ of the standardised distance to each component's mean: −x/σ for a survival, x/σ for a CDF.
  const double sign = upper ? -1.0 : 1.0;
  const std::size_t n = xs.size();
  std::array<double, kBatchPiece> base{}, shiftedP{}, shiftedQ{};
  for (std::size_t start = 0; start < n; start += kBatchPiece) {
    const std::size_t size = std::min(kBatchPiece, n - start);
    for (std::size_t k = 0; k < size; ++k) {
      const double x = xs[start + k];
      base[k] = sign * x / m_sigma;
      shiftedP[k] = sign * (x - m_pShift) / m_sigma;
      shiftedQ[k] = sign * (x - m_qShift) / m_sigma;
    }
    numerics::normalCdfInPlace(std::span(base.data(), size));
    if (m_pWeight != 0.0) numerics::normalCdfInPlace(std::span(shiftedP.data(), size));
    if (m_qWeight != 0.0) numerics::normalCdfInPlace(std::span(shiftedQ.data(), size));
    for (std::size_t k = 0; k < size; ++k) {
      p[start + k] = m_pWeight == 0.0 ? base[k] : (1.0 - m_pWeight) * base[k] + m_pWeight * shiftedP[k];
      q[start + k] = m_qWeight == 0.0 ? base[k] : (1.0 - m_qWeight) * base[k] + m_qWeight * shiftedQ[k];
    }
  }
}

void SubsampledGaussianPair::hockeySticks(std::span<const double> epsilons, std::span<double> deltas) const {
  std::array<double, kBatchPiece> eps{}, x{}, p{}, q{};
  std::array<std::size_t, kBatchPiece> index{};
  for (std::size_t start = 0; start < epsilons.size(); start += kBatchPiece) {
    const std::size_t end = std::min(epsilons.size(), start + kBatchPiece);
    std::size_t inside = 0;
    for (std::size_t i = start; i < end; ++i) {
      const double e = epsilons[i];
      if (e <= m_lossMin || e >= m_lossMax) {
        deltas[i] = hockeyStick(e);  // every outcome's loss on one side of ε
      } else {
        index[inside] = i;
        eps[inside++] = e;
      }
    }
    const std::span<const double> in(eps.data(), inside);
    inverseLosses(in, x);
    mixtureTails(std::span<const double>(x.data(), inside), true, p, q);
    std::copy(eps.begin(), eps.begin() + static_cast<std::ptrdiff_t>(inside), x.begin());
    numerics::expInPlace(std::span(x.data(), inside));
    for (std::size_t k = 0; k < inside; ++k) deltas[index[k]] = std::max(0.0, p[k] - x[k] * q[k]);
  }
}

void SubsampledGaussianPair::headsAtLosses(std::span<const double> losses, std::span<double> p,
                                           std::span<double> q) const {
  std::array<double, kBatchPiece> l{}, x{}, headP{}, headQ{};
  std::array<std::size_t, kBatchPiece> index{};
  for (std::size_t start = 0; start < losses.size(); start += kBatchPiece) {
    const std::size_t end = std::min(losses.size(), start + kBatchPiece);
    std::size_t inside = 0;
    for (std::size_t i = start; i < end; ++i) {
      if (losses[i] <= m_lossMin) {
        p[i] = q[i] = 0.0;
      } else if (losses[i] >= m_lossMax) {
        p[i] = q[i] = 1.0;
      } else {
        index[inside] = i;
        l[inside++] = losses[i];
      }
    }
    inverseLosses(std::span<const double>(l.data(), inside), x);
    mixtureTails(std::span<const double>(x.data(), inside), false, headP, headQ);
    for (std::size_t k = 0; k < inside; ++k) {
      p[index[k]] = headP[k];
      q[index[k]] = headQ[k];
    }
  }
}

double SubsampledGaussianPair::upperTail(double tau) const {
  // Each component of P has survival ≤ τ beyond its mean + σz, so the mixture does too.
  const double z = numerics::normalQuantileComplement(tau);
  return std::max(0.0, m_pWeight > 0.0 ? m_pShift : 0.0) + m_sigma * z;
}

double SubsampledGaussianPair::lowerTail(double tau) const {
  const double z = numerics::normalQuantileComplement(tau);
  return std::min(0.0, m_pWeight > 0.0 ? m_pShift : 0.0) - m_sigma * z;
}

// ---------------------------------------------------------------------------------------------
// DiscretePld

struct DiscretePld::LazyTables {
  std::once_flag made;
  std::unique_ptr<double[]> storage;  // suffix[0 … n], then tilted[0 … n]
};

DiscretePld::DiscretePld(double interval, std::int64_t firstIndex, std::vector<double> masses, double infinityMass,
                         double deltaSlack)
    : m_interval(interval),
      m_firstIndex(firstIndex),
      m_points(masses.size()),
      m_masses(std::move(masses)),
      m_infinityMass(infinityMass),
      m_deltaSlack(deltaSlack),
      m_lazyTables(std::make_shared<LazyTables>()) {}

DiscretePld::DiscretePld(double interval, std::int64_t firstIndex, std::vector<double> masses, double infinityMass,
                         double deltaSlack, double lossOffset)
    : DiscretePld(interval, firstIndex, std::move(masses), infinityMass, deltaSlack) {
  m_lossOffset = lossOffset;
}

DiscretePld DiscretePld::profileOnly(double interval, std::int64_t firstIndex, std::shared_ptr<double[]> buffer,
                                     std::size_t points, double infinityMass, double deltaSlack) {
  DiscretePld pld;
  pld.m_interval = interval;
  pld.m_firstIndex = firstIndex;
  pld.m_points = points;
  pld.m_infinityMass = infinityMass;
  pld.m_deltaSlack = deltaSlack;
  std::shared_ptr<double[]> tilted(new double[points + 1]);
  fillTables(buffer.get(), points, interval, buffer.get(), tilted.get());
  pld.m_suffix = buffer.get();
  pld.m_tilted = tilted.get();
  pld.m_suffixStorage = std::move(buffer);
  pld.m_tiltedStorage = std::move(tilted);
  return pld;
}

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

DiscretePld DiscretePld::spectral(double interval, std::int64_t firstIndex, std::shared_ptr<Spectrum> spectrum,
                                  double infinityMass, double deltaSlack) {
  DiscretePld pld;
  pld.m_interval = interval;
  pld.m_firstIndex = firstIndex;
  pld.m_points = spectrum->points;
  pld.m_infinityMass = infinityMass;
  pld.m_deltaSlack = deltaSlack;
  pld.m_spectrum = std::move(spectrum);
  return pld;
}

const DiscretePld& DiscretePld::tables() const {
  if (!m_spectrum) return *this;
  Spectrum& s = *m_spectrum;
  std::call_once(s.tabulated, [this, &s] {
    const RealTransform transform(s.n, s.threads);
    const std::size_t half = s.n / 2 + 1;
    RealBuffer real = realBuffer(2 * half);
    ComplexBuffer ownSpectrum = transform.inPlace() ? nullptr : complexBuffer(half);
    std::complex<double>* z =
        transform.inPlace() ? reinterpret_cast<std::complex<double>*>(real.get()) : ownSpectrum.get();
    std::fill(z, z + half, std::complex<double>(0.0, 0.0));
    for (std::size_t f = 0; f < s.rawFrequency.size(); ++f) z[s.rawFrequency[f]] = s.raw[f];
    transform.inverse(z, real.get());
    compactWindow(real.get(), s.n, s.start, s.points);
    s.tables = profileOnly(m_interval, m_firstIndex, std::shared_ptr<double[]>(real.release(), numerics::FftwFree{}),
                           s.points, m_infinityMass, m_deltaSlack);
  });
  return s.tables;
}

DiscretePld::Tails DiscretePld::tailsAt(std::size_t j) const {
  if (m_spectrum) return m_spectrum->tails(j);
  if (m_suffix) return {m_suffix[j], m_tilted[j]};
  LazyTables& lazy = *m_lazyTables;
  const std::size_t n = m_points;
  std::call_once(lazy.made, [&] {
    lazy.storage = std::make_unique<double[]>(2 * (n + 1));
    fillTables(m_masses.data(), n, m_interval, lazy.storage.get(), lazy.storage.get() + n + 1);
  });
  return {lazy.storage[j], lazy.storage[n + 1 + j]};
}

void DiscretePld::fillTables(const double* masses, std::size_t n, double interval, double* suffix, double* tilted) {
  const double step = std::exp(-interval);
  double s = 0.0;
  double t = 0.0;
  suffix[n] = 0.0;
  tilted[n] = 0.0;
  for (std::size_t j = n; j-- > 0;) {
    const double w = masses[j];  // read before suffix[j] (which may be masses[j]) is written
    s += w;
    t = w + step * t;  // Σ_{i≥j} ω_i e^{ℓ_j − ℓ_i}
    suffix[j] = s;
    tilted[j] = t;
  }
}

double DiscretePld::delta(double epsilon) const {
  const std::size_t n = m_points;
  // First index j with ℓ_j > ε.
  const double position = (epsilon - m_lossOffset) / m_interval - static_cast<double>(m_firstIndex);
  std::size_t j;
  if (position < 0.0) {
    j = 0;
  } else if (position >= static_cast<double>(n)) {
    j = n;
  } else {
    j = static_cast<std::size_t>(std::floor(position)) + 1;
    if (j > 0 && loss(j - 1) > epsilon) --j;  // guard the rounding of ε/Δ
    if (j < n && !(loss(j) > epsilon)) ++j;
  }
  double value = m_infinityMass;
  if (j < n) {
    const Tails t = tailsAt(j);
    value += t.suffix - std::exp(epsilon - loss(j)) * t.tilted;
  }
  return std::clamp(value - m_deltaSlack, 0.0, 1.0);
}

Result<double> DiscretePld::epsilon(double delta) const {
  if (!(delta > 0.0 && delta < 1.0)) return Status::invalidArgument("δ must be in (0, 1)");
  if (this->delta(0.0) <= delta) return 0.0;
  const std::size_t n = m_points;
  if (m_infinityMass - m_deltaSlack >= delta || n == 0) {
    return Status::numericalIssue("δ = " + formatNumber(delta) + " is below the privacy loss mass at infinity (" +
                                  formatNumber(m_infinityMass) + "): no finite ε");
  }
  // δ at grid points decreases with the index; find the segment [ℓ_{j−1}, ℓ_j) holding the answer.
  std::size_t lo = 0;  // δ(ℓ_lo) > delta or below the positive losses
  std::size_t hi = n;  // δ(ℓ_{n−1}) = ω_∞ − slack ≤ delta
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (this->delta(loss(mid)) > delta) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  // On (ℓ_lo, ℓ_hi]: δ(ε) = ω_∞ − slack + S(hi) − e^{ε−ℓ_hi}·T(hi) for ε < ℓ_hi.
  double eps;
  const std::size_t j = std::min(hi, n - 1);
  const Tails t = tailsAt(j);
  const double numerator = m_infinityMass - m_deltaSlack + t.suffix - delta;
  if (t.tilted > 0.0 && numerator > 0.0) {
    eps = loss(j) + std::log(numerator / t.tilted);
  } else {
    eps = loss(j);
  }
  eps = std::clamp(eps, loss(lo), loss(j));
  return std::max(0.0, eps);
}

// ---------------------------------------------------------------------------------------------
// Trade-off of a discrete pair

namespace {

// The grid losses ε_j ≥ 0 of a PLD (ε = 0 first) with δ(ε_j): the lines of one family.
struct ProfileLines {
  std::vector<double> epsilon;
  std::vector<double> delta;
  double infinityMass = 0.0;  // δ(ε → ∞)
};

ProfileLines profileLines(const DiscretePld& pld) {
  ProfileLines lines;
  const auto n = static_cast<std::int64_t>(pld.size());
  const std::int64_t first = std::max<std::int64_t>(0, -pld.firstIndex());
  lines.epsilon.reserve(static_cast<std::size_t>(std::max<std::int64_t>(n - first, 0) + 1));
  lines.epsilon.push_back(0.0);
  for (std::int64_t i = first; i < n; ++i) {
    const double eps = pld.loss(static_cast<std::size_t>(i));
    if (eps > 0.0) lines.epsilon.push_back(eps);
  }
  lines.delta.resize(lines.epsilon.size());
  for (std::size_t j = 0; j < lines.epsilon.size(); ++j) lines.delta[j] = pld.delta(lines.epsilon[j]);
  lines.infinityMass = std::clamp(pld.infinityMass() - pld.deltaSlack(), 0.0, 1.0);
  return lines;
}

// A line y = a + b·x.
struct Line {
  double a;
  double b;
  double at(double x) const { return a + b * x; }
};

// Tests rejecting P below the loss ε ≥ 0: y ≥ e^{−ε}(1 − δ_{P‖Q}(ε) − x); slopes rise with ε.
std::vector<Line> flatLines(const ProfileLines& l) {
  std::vector<Line> lines;
  lines.reserve(l.epsilon.size());
  for (std::size_t j = 0; j < l.epsilon.size(); ++j) {
    const double w = std::exp(-l.epsilon[j]);
    lines.push_back({w * (1.0 - l.delta[j]), -w});
  }
  return lines;
}

// Tests rejecting P below the loss −ε ≤ 0: y ≥ 1 − δ_{Q‖P}(ε) − e^ε x; slopes rise as ε falls.
// Slopes beyond −1e300 only matter at x = 0, which the mass at +∞ answers.
std::vector<Line> steepLines(const ProfileLines& l) {
  std::vector<Line> lines;
  lines.reserve(l.epsilon.size());
  for (std::size_t j = l.epsilon.size(); j-- > 0;) {
    const double slope = -std::exp(l.epsilon[j]);
    if (slope >= -1e300) lines.push_back({1.0 - l.delta[j], slope});
  }
  return lines;
}

// The upper envelope of lines given by increasing slope (convex-hull trick). Exact whatever the
// noise in δ: a sweep that stops at the first local maximum is not (δ's round-off makes the line
// values along ε non-unimodal at K = 10⁶).
std::vector<Line> upperEnvelope(const std::vector<Line>& lines) {
  std::vector<Line> hull;
  for (const Line& l : lines) {
    if (!hull.empty() && l.b == hull.back().b) {
      if (l.a <= hull.back().a) continue;
      hull.pop_back();
    }
    while (hull.size() >= 2) {
      const Line& l1 = hull[hull.size() - 2];
      const Line& l2 = hull.back();
      // l2 is never above both: l1 and l meet at or left of where l1 and l2 meet.
      if ((l1.a - l.a) * (l2.b - l1.b) <= (l1.a - l2.a) * (l.b - l1.b)) {
        hull.pop_back();
      } else {
        break;
      }
    }
    hull.push_back(l);
  }
  return hull;
}

// max over the envelope at every x, visiting x in increasing order (the maximiser moves to
// larger slopes).
void maximiseOver(const std::vector<Line>& hull, std::span<const double> typeOne,
                  std::span<const std::size_t> ascending, std::vector<double>& best) {
  if (hull.empty()) return;
  std::size_t j = 0;
  for (std::size_t k : ascending) {
    const double x = typeOne[k];
    while (j + 1 < hull.size() && hull[j + 1].at(x) >= hull[j].at(x)) ++j;
    best[k] = std::max(best[k], hull[j].at(x));
  }
}

}  // namespace

Result<std::vector<double>> tradeoffOf(const DiscretePld& pld, const DiscretePld& reverse,
                                       std::span<const double> typeOne) {
  for (double x : typeOne) {
    if (!(x >= 0.0 && x <= 1.0)) {
      return Status::invalidArgument("type I error " + formatNumber(x) + " is outside [0, 1]");
    }
  }
  if (pld.interval() != reverse.interval()) {
    return Status::invalidArgument("the two directions of a trade-off must share the loss grid");
  }
  std::vector<std::size_t> ascending(typeOne.size());
  for (std::size_t k = 0; k < ascending.size(); ++k) ascending[k] = k;
  std::stable_sort(ascending.begin(), ascending.end(),
                   [&](std::size_t a, std::size_t b) { return typeOne[a] < typeOne[b]; });
  std::vector<double> y(typeOne.size(), 0.0);
  const ProfileLines forward = profileLines(pld.tables());  // δ at every grid loss ≥ 0
  const ProfileLines backward = profileLines(reverse.tables());
  maximiseOver(upperEnvelope(flatLines(forward)), typeOne, ascending, y);
  maximiseOver(upperEnvelope(steepLines(backward)), typeOne, ascending, y);
  for (std::size_t k = 0; k < y.size(); ++k) {
    const double x = typeOne[k];
    // ε → ∞ of the steep family: the tests that reject only where P has no mass.
    if (x == 0.0) y[k] = std::max(y[k], 1.0 - backward.infinityMass);
    y[k] = std::clamp(y[k], 0.0, 1.0 - x);
  }
  return y;
}

Result<DiscretePld> reversed(const DiscretePld& pld) {
  if (!pld.hasMasses()) {
    return Status::invalidArgument("a composed run's PLD keeps only its profile, not the masses reversing it needs");
  }
  const std::vector<double>& w = pld.masses();
  const std::size_t n = w.size();
  std::vector<double> q(n, 0.0);
  double total = 0.0;
  for (std::size_t i = n; i-- > 0;) {
    if (w[i] > 0.0) q[n - 1 - i] = std::exp(std::log(w[i]) - pld.loss(i));
    total += q[n - 1 - i];
  }
  const std::int64_t first = -(pld.firstIndex() + static_cast<std::int64_t>(n) - 1);
  return DiscretePld(pld.interval(), first, std::move(q), std::clamp(1.0 - total, 0.0, 1.0), pld.deltaSlack(),
                     -pld.lossOffset());
}

Result<std::vector<double>> tradeoffOf(const DiscretePld& pld, std::span<const double> typeOne) {
  DPX_ASSIGN_OR_RETURN(const DiscretePld reverse, reversed(pld));
  return tradeoffOf(pld, reverse, typeOne);
}

// ---------------------------------------------------------------------------------------------
// Discretisation

namespace {

// The grid indices [lo, hi] (losses ℓ_i = iΔ) covering one step's losses between its τ-tails.
struct StepGrid {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::size_t points() const { return static_cast<std::size_t>(hi - lo + 1); }
};

Result<StepGrid> stepGrid(const SubsampledGaussianPair& pair, double interval, double tau) {
  const double lossHi = std::min(pair.loss(pair.upperTail(tau)), pair.lossMax());
  const double lossLo = std::max(pair.loss(pair.lowerTail(tau)), pair.lossMin());
  const auto iHi = static_cast<std::int64_t>(std::ceil(lossHi / interval));
  const auto iLo = static_cast<std::int64_t>(std::floor(lossLo / interval));
  const std::int64_t count = iHi - iLo + 1;
  if (count < 2 || count > kMaxStepGridPoints) {
    return Status::invalidArgument("the loss grid of one step would need " + std::to_string(count) +
                                   " points at discretisation " + formatNumber(interval) + " (at most " +
                                   std::to_string(kMaxStepGridPoints) + "): choose a coarser discretisation");
  }
  return StepGrid{iLo, iHi};
}

Result<DiscretePld> discretisePessimistic(const SubsampledGaussianPair& pair, double interval, double tau,
                                          const ComputeControl& control) {
  DPX_ASSIGN_OR_RETURN(const StepGrid grid, stepGrid(pair, interval, tau));
  const std::int64_t iLo = grid.lo;
  const std::size_t n = grid.points();
  auto lossAt = [&](std::size_t i) { return static_cast<double>(iLo + static_cast<std::int64_t>(i)) * interval; };
  // The grid losses ε_0 … ε_{m−1} are ≤ 0, the rest > 0.
  const auto m = static_cast<std::size_t>(std::clamp<std::int64_t>(-iLo + 1, 0, static_cast<std::int64_t>(n)));
  const bool below = m + 1 < n;  // some masses from the heads (and ω_hi from δ)
  // At ε_i > 0 (and the two points below): δ(ε_i). At ε_i ≤ 0, where δ ≈ 1 and its differences
  // would keep only noise of ~1e−16/Δ where the true masses are far smaller, the masses with loss
  // ≤ ε_i instead: F_P(ε_i) = P(L ≤ ε_i) and F_Q(ε_i).
  std::vector<double> d(n, 0.0);
  std::vector<double> headP(below ? m : 0, 0.0);
  std::vector<double> headQ(below ? m : 0, 0.0);
  const std::size_t firstDelta = below && m >= 2 ? m - 2 : 0;
  std::atomic<bool> stop{false};
  parallelFor(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    if (control.cancelled()) {
      stop = true;
      return;
    }
    std::array<double, 512> eps{};
    for (std::size_t start = r.begin(); start < r.end(); start += eps.size()) {
      const std::size_t end = std::min(r.end(), start + eps.size());
      for (std::size_t i = start; i < end; ++i) eps[i - start] = lossAt(i);
      const std::size_t from = std::max(start, firstDelta);
      if (from < end) {
        pair.hockeySticks(std::span<const double>(eps.data() + (from - start), end - from),
                          std::span<double>(d.data() + from, end - from));
      }
      const std::size_t headEnd = std::min(end, headP.size());
      if (start < headEnd) {
        pair.headsAtLosses(std::span<const double>(eps.data(), headEnd - start),
                           std::span<double>(headP.data() + start, headEnd - start),
                           std::span<double>(headQ.data() + start, headEnd - start));
      }
    }
  });
  if (stop) return cancelledStatus();
  // Masses of the connect-the-dots pair, written without e^{ε_i} above 0 so no grid overflows:
  //   ω_i = [δ_{i+1} − (1 + e^Δ)δ_i + e^Δ δ_{i−1}] / (e^Δ − 1),
  //   ω_lo = (δ_{lo+1} − δ_lo)/(e^Δ − 1) + 1 − δ_lo   (the chord from (0, 1): all mass below),
  //   ω_hi = −e^Δ(δ_hi − δ_{hi−1})/(e^Δ − 1),   ω_∞ = δ_hi.
  // Below 0 the same masses in terms of the P- and Q-masses of the loss intervals
  // I_i = (ε_{i−1}, ε_i], P_i and Q_i, each bracket ≥ 0 (its integrand is):
  //   ω_i = ([e^{ε_{i+1}} Q_{i+1} − P_{i+1}] + e^Δ [P_i − e^{ε_{i−1}} Q_i]) / (e^Δ − 1),
  //   ω_lo = F_P(ε_lo) + e^{ε_lo} Q_{lo+1} − [P_{lo+1} − e^{ε_lo} Q_{lo+1}] / (e^Δ − 1).
  const double eD = std::exp(interval);
  const double em1 = std::expm1(interval);
  std::vector<double> w(n);
  auto intervalP = [&](std::size_t i) { return headP[i] - headP[i - 1]; };
  auto intervalQ = [&](std::size_t i) { return headQ[i] - headQ[i - 1]; };
  if (below && m >= 2) {
    const double e0 = std::exp(lossAt(0));
    w[0] = headP[0] + e0 * intervalQ(1) - (intervalP(1) - e0 * intervalQ(1)) / em1;
  } else {
    w[0] = (d[1] - d[0]) / em1 + (1.0 - d[0]);
  }
  for (std::size_t i = 1; i + 1 < n; ++i) {
    if (below && i + 1 < m) {
      const double upper = std::exp(lossAt(i + 1)) * intervalQ(i + 1) - intervalP(i + 1);
      const double lower = intervalP(i) - std::exp(lossAt(i - 1)) * intervalQ(i);
      w[i] = (upper + eD * lower) / em1;
    } else {
      w[i] = (d[i + 1] - (1.0 + eD) * d[i] + eD * d[i - 1]) / em1;
    }
  }
  w[n - 1] = -eD * (d[n - 1] - d[n - 2]) / em1;
  // Rounding can leave −1e−17 where the true mass is 0; a mass may not be negative.
  for (double& mass : w) mass = std::max(0.0, mass);
  return DiscretePld(interval, iLo, std::move(w), d[n - 1]);
}

// The P- and Q-masses beyond and below a point x: tails (survival) and heads (distribution).
// Below P's median the tails are ≈ 1 and a bin's mass, a difference of two of them, would keep
// only its leading digits (and Newton's method, fed rounding noise, would fall back to bisection
// for dozens of steps): there the heads are differenced instead.
struct SweepPoint {
  double x = 0.0;
  double tailP = 0.0;
  double tailQ = 0.0;
  double headP = 0.0;
  double headQ = 0.0;
  bool below() const { return headP < 0.5; }
};

SweepPoint sweepPoint(const SubsampledGaussianPair& pair, double x) {
  SweepPoint point{x};
  pair.survival(x, point.tailP, point.tailQ);
  pair.distribution(x, point.headP, point.headQ);
  return point;
}

// The right edge b of the bin [a, b) whose loss averages exactly to a grid point g, given e^g and
// x(g): P[a,b) = e^g·Q[a,b), i.e. G(b) = P[a,b) − e^g·Q[a,b) = 0, with G′(b) = p(b) − e^g q(b) > 0 past
// x(g). Every point of [a, x(g)) has loss < g, so G(x(g)) < 0. Newton, kept inside a shrinking
// bracket, from a guess that is usually within 1e−6 of the root, so that a bin costs one
// evaluation and a Taylor step (see below): a's mirror image 2x(g) − a (exact for a loss linear
// in x under a flat density) plus a correction in (a − x(g))², whose coefficient, set by how the
// densities and the loss bend, changes slowly along the line and is learnt from the previous bin
// (`asymmetry`, updated). (The mirror image in loss, x(2g − ℓ(a)), was no better a guess: 1.007
// evaluations a bin either way over 90 grids, and it cost an inverse loss.) Returns the point b,
// the bin's masses and the loss at b (at the last b evaluated, or extrapolated to it).
struct BinEdge {
  SweepPoint end;
  double massP = 0.0;
  double massQ = 0.0;
  double loss = 0.0;  // ℓ(end.x)
};

BinEdge binEdge(const SubsampledGaussianPair& pair, const SweepPoint& start, double eg, double xTarget,
                double& asymmetry) {
  const double a = start.x;
  const bool below = start.below();
  double lo = xTarget;
  double hi = kInf;
  double symmetric = 2.0 * lo - a;
  if (!(symmetric > lo) || !std::isfinite(symmetric)) symmetric = lo + (lo - a) + 1e-12;
  const double halfWidth = lo - a;  // from a to x(g)
  const double correction = asymmetry * halfWidth * halfWidth;
  double b = symmetric + correction;
  if (!(b > lo) || !std::isfinite(b) || std::fabs(correction) > 0.5 * halfWidth) b = symmetric;
  BinEdge out;
  double pdfP = 0.0;  // the densities at out.end.x (extrapolated with the masses)
  double pdfQ = 0.0;
  for (int it = 0; it < 80; ++it) {
    out.end.x = b;
    if (below) {
      pair.distribution(b, out.end.headP, out.end.headQ);
      out.massP = out.end.headP - start.headP;
      out.massQ = out.end.headQ - start.headQ;
    } else {
      pair.survival(b, out.end.tailP, out.end.tailQ);
      out.massP = start.tailP - out.end.tailP;
      out.massQ = start.tailQ - out.end.tailQ;
    }
    const double value = out.massP - eg * out.massQ;
    if (value > 0.0) {
      hi = b;
    } else {
      lo = b;
    }
    double pdfPb = 0.0;
    double pdfQb = 0.0;
    double slopePb = 0.0;
    double slopeQb = 0.0;
    pair.density(b, pdfPb, pdfQb, slopePb, slopeQb);
    pdfP = pdfPb;
    pdfQ = pdfQb;
    const double slope = pdfPb - eg * pdfQb;
    const bool newton = slope > 0.0 && b - value / slope > lo && b - value / slope < hi;
    double next = newton ? b - value / slope : kInf;
    if (!newton) next = std::isfinite(hi) ? 0.5 * (lo + hi) : lo + 2.0 * (lo - a) + 1e-12;
    const double scale = std::max(1.0, std::fabs(b));
    if (std::fabs(next - b) <= 1e-12 * scale || (std::isfinite(hi) && hi - lo <= 1e-12 * scale)) break;
    // The step Newton would take from `next` is about G″h²/(2G′) for this step h. When that is
    // below the tolerance, evaluating G at `next` would only confirm it: the edge is `next`, and
    // its masses follow from those at b by Taylor's formula to second order (for h ≤ 1e−6 the
    // third-order term, p″h³/6, is far below what the tolerance on the edge leaves in a mass).
    // The guess is usually that close, so a bin costs one evaluation instead of two.
    const double h = next - b;
    const double curvature = slopePb - eg * slopeQb;
    if (newton && std::fabs(h) <= 1e-6 * scale &&
        std::fabs(curvature) * h * h <= 2e-12 * std::max(1.0, std::fabs(next)) * slope) {
      const double dP = h * (pdfPb + 0.5 * h * slopePb);
      const double dQ = h * (pdfQb + 0.5 * h * slopeQb);
      pdfP = pdfPb + h * slopePb;
      pdfQ = pdfQb + h * slopeQb;
      out.end.x = next;
      if (below) {
        out.end.headP += dP;
        out.end.headQ += dQ;
        out.massP = out.end.headP - start.headP;
        out.massQ = out.end.headQ - start.headQ;
      } else {
        out.end.tailP -= dP;
        out.end.tailQ -= dQ;
        out.massP = start.tailP - out.end.tailP;
        out.massQ = start.tailQ - out.end.tailQ;
      }
      b = next;
      break;
    }
    b = next;
  }
  if (halfWidth > 0.0 && std::isfinite(b)) asymmetry = (b - symmetric) / (halfWidth * halfWidth);
  // The loss at b is log(p(b)/q(b)): one logarithm from the densities at hand (to ~1e−12 after
  // the Taylor step: the next bin's guess and grid point read it), unless they underflowed.
  out.loss = pdfQ > 1e-300 && pdfP > 1e-300 ? std::log(pdfP / pdfQ) : pair.loss(out.end.x);
  // The other side at b. Below the median the tails are ≈ 1 and only their leading digits are
  // read (the loop's end, the last bin's loss); above it the heads are, only to tell the side.
  if (!below) {
    out.end.headP = 1.0 - out.end.tailP;
    out.end.headQ = 1.0 - out.end.tailQ;
  } else if (out.end.below()) {
    out.end.tailP = 1.0 - out.end.headP;
    out.end.tailQ = 1.0 - out.end.headQ;
  } else {
    pair.survival(b, out.end.tailP, out.end.tailQ);
  }
  return out;
}

// The sweep's targets ahead: e^{ℓ_g} and x(ℓ_g) at the grid losses ℓ_g = c + gΔ, a window of
// them at a time, the inverse losses computed together on arrays (two scalar transcendental
// calls a bin, with the exp a third of its cost). The sweep reads them in increasing g.
class TargetWindow {
 public:
  TargetWindow(const SubsampledGaussianPair& pair, double offset, double interval)
      : m_pair(pair), m_offset(offset), m_interval(interval) {}
  // The grid loss, computed as the sweep computes its target.
  double loss(std::int64_t g) const { return m_offset + static_cast<double>(g) * m_interval; }
  double ratio(std::int64_t g) { return m_ratio[at(g)]; }  // e^{ℓ_g}
  double point(std::int64_t g) { return m_point[at(g)]; }  // x(ℓ_g); NaN outside (lossMin, lossMax)

 private:
  static constexpr std::size_t kSize = 128;
  std::size_t at(std::int64_t g) {
    if (g < m_first || g >= m_first + static_cast<std::int64_t>(kSize)) fill(g);
    return static_cast<std::size_t>(g - m_first);
  }
  void fill(std::int64_t first) {
    m_first = first;
    std::array<double, kSize> inside{};
    std::size_t count = 0;
    for (std::size_t k = 0; k < kSize; ++k) {
      const double l = loss(first + static_cast<std::int64_t>(k));
      // The ratio sets the loss a bin aggregates to, which must not fall below its grid loss (the
      // bound would then place mass above its loss): <cmath>'s exp, within an ulp, as before,
      // not the vector one's four (which let the optimistic δ exceed the true one by 1.3e−15
      // at q = 0.3, σ = 0.6, Δ = 1e−4).
      m_ratio[k] = std::exp(l);
      // The losses rise with k: those inside the pair's range are a run from the start.
      if (l > m_pair.lossMin() && l < m_pair.lossMax()) inside[count++] = l;
    }
    std::size_t k = 0;
    while (k < kSize && !(loss(first + static_cast<std::int64_t>(k)) > m_pair.lossMin())) m_point[k++] = kNaN;
    m_pair.inverseLosses(std::span<const double>(inside.data(), count), std::span<double>(m_point.data() + k, count));
    for (k += count; k < kSize; ++k) m_point[k] = kNaN;
  }
  const SubsampledGaussianPair& m_pair;
  double m_offset, m_interval;
  std::int64_t m_first = std::numeric_limits<std::int64_t>::min() / 2;  // no window yet
  std::array<double, kSize> m_ratio{}, m_point{};
};

Result<DiscretePld> discretiseOptimistic(const SubsampledGaussianPair& pair, double interval, double tau,
                                         const ComputeControl& control) {
  DPX_ASSIGN_OR_RETURN(const StepGrid grid, stepGrid(pair, interval, tau));
  std::vector<double> w(grid.points(), 0.0);
  auto slot = [&](std::int64_t index) -> double& {
    return w[static_cast<std::size_t>(std::clamp(index, grid.lo, grid.hi) - grid.lo)];
  };
  double slack = 0.0;  // mass placed above its true loss (only at the truncated bottom)
  // Bins aggregate to grid losses c + gΔ. With c = 0 and a smallest loss ℓ_min > −Δ (the remove
  // direction once Δ ≥ −log(1 − q)), the first bin would have to average to 0, which only the
  // whole line does: every step would be quantised to loss 0 and the bound would say ε = 0. The
  // grid is then shifted to start just above ℓ_min, at the loss of a bin holding a fraction
  // 10⁻⁶ of the subsampled component's mass per unit of the base one (e^c = 1 − q + 10⁻⁶q).
  double c = 0.0;
  if (std::isfinite(pair.lossMin()) && pair.lossMin() > -interval) {
    const double q = -std::expm1(pair.lossMin());
    c = std::log1p(-q * (1.0 - 1e-6));
  }

  // Bottom bin (−∞, a): its aggregate loss may lie below the grid; placing it at ε_lo can only
  // raise losses, so its mass is charged as slack.
  SweepPoint at = sweepPoint(pair, pair.lowerTail(tau));
  const double bottom = at.headP;
  slot(grid.lo) += bottom;
  slack += bottom;

  // The masses beyond (and below) the current left edge, kept from one bin to the next: a bin
  // costs about one evaluation of two erfc (1.03–1.07 at q = 0.004, σ = 1, Δ = 1e−3; two
  // before the Taylor step).
  std::int64_t iterations = 0;
  double asymmetry = 0.0;
  TargetWindow targets(pair, c, interval);
  double la = pair.loss(at.x);  // the loss at the left edge
  while (at.tailP > tau) {
    if ((++iterations & 1023) == 0 && control.cancelled()) return cancelledStatus();
    // The next grid point strictly above the loss at a. A bin's right edge lies about as far
    // above its grid loss as its left edge lies below, so a run of bins can drift onto edges a
    // hair below a grid point: the bin there would be a sliver, G a near-double root (G′ = 0 at
    // x(g)) that Newton approaches only linearly, a dozen steps to place next to nothing. Such
    // an edge aims at the grid point after (any target above ℓ(a) gives an exact bin; this one
    // is about twice as wide). A sliver in x, not in loss: near the smallest loss the loss is
    // flat and a bin just above it is wide (the shifted grid's first bin).
    std::int64_t g = static_cast<std::int64_t>(std::floor((la - c) / interval)) + 1;
    if (targets.loss(g) - la < 1e-3 * interval && targets.loss(g + 1) < pair.lossMax()) {
      const double xg = targets.point(g);
      if (xg - at.x < 1e-3 * (targets.point(g + 1) - xg)) ++g;
    }
    const double target = targets.loss(g);
    const double eg = targets.ratio(g);
    // If the whole remaining tail cannot average up to the target (its loss, log(P/Q) of the
    // tail, is not above it), it is the last bin.
    if (!(!(at.tailQ > 0.0) || at.tailP > eg * at.tailQ) || target >= pair.lossMax()) {
      const double tailLoss = at.tailQ > 0.0 ? std::log(at.tailP / at.tailQ) : kInf;
      const double l = std::min(tailLoss, pair.lossMax());
      slot(static_cast<std::int64_t>(std::floor((l - c) / interval))) += at.tailP;
      break;
    }
    const BinEdge edge = binEdge(pair, at, eg, targets.point(g), asymmetry);
    slot(g) += std::max(0.0, edge.massP);
    at = edge.end;
    la = edge.loss;
  }
  // The sliver above the truncation point (P-mass ≤ τ) is dropped: as if its loss were −∞.
  return DiscretePld(interval, grid.lo, std::move(w), 0.0, slack, c);
}

}  // namespace

Result<DiscretePld> discretise(const SubsampledGaussianPair& pair, double interval, Estimate estimate, double tau,
                               const ComputeControl& control) {
  if (!(interval > 0.0) || !std::isfinite(interval)) {
    return Status::invalidArgument("discretisation = " + formatNumber(interval) + " must be > 0");
  }
  if (!(tau > 0.0 && tau < 1e-3)) return Status::invalidArgument("truncation mass must be in (0, 1e-3)");
  return estimate == Estimate::kPessimistic ? discretisePessimistic(pair, interval, tau, control)
                                            : discretiseOptimistic(pair, interval, tau, control);
}

// ---------------------------------------------------------------------------------------------
// Composition

namespace {

// log Σ_i ω_i e^{λℓ_i} of a PLD's finite part and its first two derivatives in λ, exact (a
// pooled bound would shift every step's loss by the pool width and, over K steps, widen the
// window K-fold), and an approximation from runs of masses that guides the search for λ.
class MomentBound {
 public:
  explicit MomentBound(const DiscretePld& pld) {
    // The positive masses and their losses go straight into the two arrays kept (the masses
    // replaced by their logarithms at the end): each array of a step's size is ten fresh pages.
    const auto& m = pld.masses();
    const auto count = static_cast<Eigen::Index>(std::count_if(m.begin(), m.end(), [](double v) { return v > 0.0; }));
    m_loss.resize(count);
    m_logMass.resize(count);
    Eigen::Index k = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (m[i] <= 0.0) continue;
      m_logMass[k] = m[i];
      // Grid index times Δ, without a step's loss offset: the window is found in index space.
      m_loss[k++] = static_cast<double>(pld.firstIndex() + static_cast<std::int64_t>(i)) * pld.interval();
    }
    const Eigen::ArrayXd& mass = m_logMass;
    const double total = mass.sum();
    if (total > 0.0) {
      const double mean = (mass * m_loss).sum() / total;
      m_variance = (mass * (m_loss - mean).square()).sum() / total;
    }
    // Runs of kBlock masses, each as its total, mean loss and loss variance: log M_b(λ) ≈
    // log W_b + λ·mean_b + λ²·var_b/2.
    const Eigen::Index blocks = (count + kBlock - 1) / kBlock;
    m_blockLogMass.resize(blocks);
    m_blockMean.resize(blocks);
    m_blockVariance.resize(blocks);
    for (Eigen::Index b = 0; b < blocks; ++b) {
      const Eigen::Index first = b * kBlock;
      const Eigen::Index size = std::min<Eigen::Index>(kBlock, count - first);
      const auto w = mass.segment(first, size);
      const auto l = m_loss.segment(first, size);
      const double weight = w.sum();
      const double mean = (w * l).sum() / weight;
      m_blockLogMass[b] = std::log(weight);
      m_blockMean[b] = mean;
      m_blockVariance[b] = (w * (l - mean).square()).sum() / weight;
    }
    m_logMass = m_logMass.log();
  }
  double variance() const { return m_variance; }
  bool empty() const { return m_logMass.size() == 0; }
  // The largest (upper) or smallest finite loss with a mass, and the log of that mass.
  double endLoss(bool upper) const { return m_loss[upper ? m_loss.size() - 1 : 0]; }
  double endLogMass(bool upper) const { return m_logMass[upper ? m_logMass.size() - 1 : 0]; }
  struct Moments {
    double value = -kInf;  // log M(λ)
    double slope = 0.0;    // d/dλ: the mean loss under the tilted masses
    double curvature = 0.0;
  };
  Moments at(double lambda) const {
    Moments out;
    if (m_logMass.size() == 0) return out;
    const double hi = (m_logMass + lambda * m_loss).maxCoeff();
    const Eigen::ArrayXd w = (m_logMass + lambda * m_loss - hi).exp();
    const double s0 = w.sum();
    const double s1 = (w * m_loss).sum();
    const double s2 = (w * m_loss.square()).sum();
    out.value = hi + std::log(s0);
    out.slope = s1 / s0;
    out.curvature = std::max(0.0, s2 / s0 - out.slope * out.slope);
    return out;
  }
  // The same from the blocks: a guide to where the exact moments are worth taking.
  Moments approximatelyAt(double lambda) const {
    Moments out;
    if (m_blockLogMass.size() == 0) return out;
    const Eigen::ArrayXd slopes = m_blockMean + lambda * m_blockVariance;
    const Eigen::ArrayXd terms = m_blockLogMass + lambda * (m_blockMean + 0.5 * lambda * m_blockVariance);
    const double hi = terms.maxCoeff();
    const Eigen::ArrayXd w = (terms - hi).exp();
    const double s0 = w.sum();
    const double s1 = (w * slopes).sum();
    const double s2 = (w * (slopes.square() + m_blockVariance)).sum();
    out.value = hi + std::log(s0);
    out.slope = s1 / s0;
    out.curvature = std::max(0.0, s2 / s0 - out.slope * out.slope);
    return out;
  }

 private:
  static constexpr Eigen::Index kBlock = 16;
  Eigen::ArrayXd m_logMass, m_loss;
  Eigen::ArrayXd m_blockLogMass, m_blockMean, m_blockVariance;
  double m_variance = 0.0;
};

// Chernoff: the composed finite mass above t is ≤ e^{−λt}·Π M_s(λ)^{c_s} for λ > 0, below t
// for λ < 0. Every λ gives a valid threshold, so the search for the tightest may run on the blocks'
// approximate moments; the threshold is taken from the exact ones, at the λ found and after
// Newton steps on them until the next would gain less than a twentieth of a grid step.
double chernoffThreshold(const std::vector<MomentBound>& bounds, std::span<const Segment> segments, double tau,
                         bool upper, double interval) {
  const double logTau = std::log(tau);
  const double logTarget = std::log(-logTau);
  const double sign = upper ? 1.0 : -1.0;
  // With λ = sign·μ, the threshold is sign·g(μ), g(μ) = (F(μ) − log τ)/μ, F = Σ c_s log M_s(λ);
  // g is least where S(μ) = μF′(μ) − F(μ), which grows from 0 (dS/dμ = μF″ ≥ 0), reaches −log τ.
  double best = kInf;
  auto evaluate = [&](double logMu, bool exact) {
    const double mu = std::exp(logMu);
    double f = 0.0;
    double slope = 0.0;
    double curvature = 0.0;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const MomentBound::Moments m = exact ? bounds[s].at(sign * mu) : bounds[s].approximatelyAt(sign * mu);
      const double c = static_cast<double>(segments[s].count);
      f += c * m.value;
      slope += c * sign * m.slope;
      curvature += c * m.curvature;
    }
    if (exact) {
      const double g = (f - logTau) / mu;
      if (std::isfinite(g)) best = std::min(best, g);
    }
    return std::pair{mu * slope - f, mu * mu * curvature};  // S and dS/d(log μ)
  };
  const double minLog = std::log(1e-8);
  const double maxLog = std::log(1e8);
  // Newton's method on log S − log(−log τ) against x = log μ (S grows like e^{aμ} past the root,
  // log S about linearly), kept in a shrinking bracket: a step that leaves it, or is not half the
  // one before once both ends are known, bisects it; with one end unknown, a step of e² at most.
  auto search = [&](double x, bool exact) {
    double lo = minLog;
    double hi = maxLog;
    double lastStep = kInf;
    for (int it = 0; it < 40; ++it) {
      const auto [s, ds] = evaluate(x, exact);
      if (!std::isfinite(s) || !std::isfinite(ds)) break;
      const double h = s + logTau;
      if (h < 0.0) {
        lo = x;
      } else {
        hi = x;
      }
      // About g(x) − min g = h²/(2μ·dS/dx).
      if (exact && 0.5 * h * h <= 0.05 * interval * std::exp(x) * ds) break;
      double next = s > 0.0 && ds > 0.0 ? x - (std::log(s) - logTarget) * s / ds : kInf;
      const bool bothEnds = lo > minLog && hi < maxLog;
      if (!(next > lo && next < hi) || (bothEnds && std::fabs(next - x) > 0.5 * lastStep)) {
        if (h < 0.0) {
          next = hi < maxLog ? 0.5 * (x + hi) : std::min(x + 2.0, 0.5 * (x + hi));
        } else {
          next = lo > minLog ? 0.5 * (lo + x) : std::max(x - 2.0, 0.5 * (lo + x));
        }
      }
      if (std::fabs(next - x) < 1e-3 || hi - lo < 1e-3) break;
      lastStep = std::fabs(next - x);
      x = next;
    }
    return x;
  };
  // As μ → ∞, S tends to −Σ c_s log ω_s and g to Σ c_s ℓ_s, the composed mass and loss at the far
  // end of the support: if that mass is at least τ, g has no minimum and its infimum, the far
  // end, is the threshold.
  bool someEmpty = false;
  double farMass = 0.0;
  double farLoss = 0.0;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    someEmpty = someEmpty || bounds[s].empty();
    if (someEmpty) break;
    farMass += static_cast<double>(segments[s].count) * bounds[s].endLogMass(upper);
    farLoss += static_cast<double>(segments[s].count) * bounds[s].endLoss(upper);
  }
  if (!someEmpty && farMass >= logTau) return farLoss;
  double variance = 0.0;
  for (std::size_t s = 0; s < segments.size(); ++s)
    variance += static_cast<double>(segments[s].count) * bounds[s].variance();
  // The Gaussian approximation of the sum gives μ* ≈ √(2 log(1/τ)/Var).
  const double start = std::clamp(variance > 0.0 ? std::log(std::sqrt(2.0 * -logTau / variance)) : 0.0, minLog, maxLog);
  search(search(start, false), true);
  if (!std::isfinite(best)) return upper ? kInf : -kInf;
  return sign * best;
}

// The range of the composed losses in grid steps, and log Π(1 − ω_∞)^{c}: the log of the
// probability that no step's loss is infinite.
struct CompositionRange {
  double interval = 0.0;
  std::int64_t minIndex = 0;
  std::int64_t maxIndex = 0;
  double logFinite = 0.0;
};

Result<CompositionRange> compositionRange(std::span<const Segment> segments) {
  if (segments.empty()) return Status::invalidArgument("nothing to compose");
  CompositionRange range;
  range.interval = segments.front().pld->interval();
  for (const Segment& s : segments) {
    if (s.count < 1) return Status::invalidArgument("a composition segment needs count ≥ 1");
    if (s.pld->interval() != range.interval) return Status::invalidArgument("segments differ in discretisation");
    if (!s.pld->hasMasses()) {
      return Status::invalidArgument("a composed run's PLD keeps only its profile, not the masses composing it needs");
    }
    range.minIndex += s.count * s.pld->firstIndex();
    range.maxIndex += s.count * (s.pld->firstIndex() + static_cast<std::int64_t>(s.pld->masses().size()) - 1);
    range.logFinite += static_cast<double>(s.count) * std::log1p(-std::min(s.pld->infinityMass(), 1.0 - 1e-16));
  }
  return range;
}

// Grid indices [lo, hi] of the composed losses that are kept.
struct LossWindow {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::int64_t points() const { return hi - lo + 1; }
};

// The window holding all but τ/2 of the composed finite mass on each side.
LossWindow composedWindow(std::span<const Segment> segments, const CompositionRange& range, double tau) {
  std::vector<MomentBound> bounds;
  for (const Segment& s : segments) bounds.emplace_back(*s.pld);
  const double tHi = chernoffThreshold(bounds, segments, tau / 2, true, range.interval);
  const double tLo = chernoffThreshold(bounds, segments, tau / 2, false, range.interval);
  std::int64_t wHi = std::isfinite(tHi) ? static_cast<std::int64_t>(std::ceil(tHi / range.interval)) : range.maxIndex;
  std::int64_t wLo = std::isfinite(tLo) ? static_cast<std::int64_t>(std::floor(tLo / range.interval)) : range.minIndex;
  wHi = std::min(wHi, range.maxIndex);
  wLo = std::max(wLo, range.minIndex);
  if (wHi < wLo) wHi = wLo;
  return {wLo, wHi};
}

// A composition up to its transform: the range, the window kept and the fewest points a
// transform needs (the window, and every step's grid).
struct CompositionPlan {
  CompositionRange range;
  LossWindow window;
  std::size_t points = 0;
};

Result<CompositionPlan> planComposition(std::span<const Segment> segments, double tau) {
  CompositionPlan plan;
  DPX_ASSIGN_OR_RETURN(plan.range, compositionRange(segments));
  plan.window = composedWindow(segments, plan.range, tau);
  if (plan.window.points() > kMaxComposedWindowPoints) {
    return Status::invalidArgument("the composed loss window needs " + std::to_string(plan.window.points()) +
                                   " grid points at discretisation " + formatNumber(plan.range.interval) +
                                   " (at most " + std::to_string(kMaxComposedWindowPoints) +
                                   "): choose a coarser discretisation");
  }
  std::size_t baseMax = 0;
  for (const Segment& s : segments) baseMax = std::max(baseMax, s.pld->masses().size());
  plan.points = std::max<std::size_t>(static_cast<std::size_t>(plan.window.points()), baseMax);
  return plan;
}

// Frequencies are powered in blocks of this many; a block's count of surviving ones lets a
// sparse spectrum be collected from the few live blocks.
constexpr std::size_t kPowerBlock = 8192;

// |z|^count below 1e−300 contributes nothing a double can hold: such a z (most high frequencies
// of a many-step composition) is dead, tested on |z|² against e^{−1380/count} without a logarithm.
double smallestLivingSquare(std::int64_t count) { return std::exp(-1380.0 / static_cast<double>(count)); }

// product[k] ·= spectrum[k]^count for every frequency k (product == spectrum: it becomes the
// power), in parallel. Returns how many frequencies of each block of kPowerBlock are not zero
// after the product.
std::vector<std::size_t> multiplyByPower(std::complex<double>* product, const std::complex<double>* spectrum,
                                         std::size_t size, std::int64_t count, bool first) {
  const double smallest = smallestLivingSquare(count);
  std::vector<std::size_t> alive((size + kPowerBlock - 1) / kPowerBlock, 0);
  parallelFor(std::size_t{0}, alive.size(), [&](std::size_t block) {
    std::size_t live = 0;
    const std::size_t end = std::min(size, (block + 1) * kPowerBlock);
    for (std::size_t k = block * kPowerBlock; k != end; ++k) {
      double re = spectrum[k].real();
      double im = spectrum[k].imag();
      if (re * re + im * im < smallest || (!first && product[k] == 0.0)) {
        product[k] = 0.0;
        continue;
      }
      complexPower(re, im, count);
      if (first) {
        product[k] = std::complex<double>(re, im);
      } else {
        const double pr = product[k].real();
        const double pi = product[k].imag();
        product[k] = std::complex<double>(pr * re - pi * im, pr * im + pi * re);
      }
      live += product[k] != 0.0 ? 1 : 0;
    }
    alive[block] = live;
  });
  return alive;
}

// Transform buffers for the jobs of a run: a job whose PLD keeps a spectrum hands its buffer
// to the next job, whose transform then runs on pages already touched (a fresh page costs about
// as much as an FFT pass over it).
class BufferPool {
 public:
  explicit BufferPool(std::size_t doubles) : m_doubles(doubles) {}
  RealBuffer take() {
    {
      const std::lock_guard lock(m_mutex);
      if (!m_free.empty()) {
        RealBuffer b = std::move(m_free.back());
        m_free.pop_back();
        return b;
      }
    }
    return realBuffer(m_doubles);
  }
  void give(RealBuffer buffer) {
    if (!buffer) return;
    const std::lock_guard lock(m_mutex);
    m_free.push_back(std::move(buffer));
  }
  std::size_t doubles() const { return m_doubles; }

 private:
  std::size_t m_doubles;
  std::mutex m_mutex;
  std::vector<RealBuffer> m_free;
};

// The composed masses of the `points` circular positions from `start` on (FFT round-off clamped,
// as compactWindow), copied out of the inverse transform `circular` of size n.
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

// A run's PLD as the spectrum of its composition, when few enough frequencies survived the K-th
// power (null otherwise). δ from a spectrum costs ~25 ns a frequency, ε about forty δs; the
// inverse and tables it replaces ~10 ns a transform point. Beyond one frequency per 64 points
// the tables win.
constexpr std::size_t kTransformPointsPerSpectralFrequency = 64;

bool fewEnoughForSpectrum(std::size_t frequencies, std::size_t n) {
  return frequencies * kTransformPointsPerSpectralFrequency <= n;
}

// The half spectrum Z_0 … Z_{n/2} that an inverse of size n would read, as its frequencies with
// Z_k ≠ 0: k = 0 first, then increasing.
struct SparseHalfSpectrum {
  std::vector<std::size_t> frequency;
  std::vector<std::complex<double>> value;
};

std::shared_ptr<DiscretePld::Spectrum> sparseSpectrum(SparseHalfSpectrum z, std::size_t n, int threads,
                                                      std::size_t start, std::size_t points, double interval) {
  auto s = std::make_shared<DiscretePld::Spectrum>();
  s->n = n;
  s->threads = threads;
  s->start = start;
  s->points = points;
  s->interval = interval;
  const double scale = 1.0 / static_cast<double>(n);
  const std::size_t count = z.frequency.size();
  s->constant = z.value[0].real() * scale;
  const double negligible = 1e-17 * std::abs(z.value[0]) / static_cast<double>(std::max<std::size_t>(count, 1));
  s->frequency.reserve(count);
  s->sumWeight.reserve(count);
  s->tiltWeight.reserve(count);
  s->end.reserve(count);
  const double radiansPerStep = 2.0 * std::numbers::pi / static_cast<double>(n);
  auto root = [&](std::size_t k, std::size_t power) {  // ω^{k·power}
    const double angle = radiansPerStep * static_cast<double>((static_cast<std::uint64_t>(k) * power) % n);
    return std::complex<double>(std::cos(angle), std::sin(angle));
  };
  const double decay = std::exp(-interval);
  const double oneMinusDecay = -std::expm1(-interval);
  for (std::size_t f = 1; f < count; ++f) {
    const std::size_t k = z.frequency[f];
    const std::complex<double> zk = z.value[f];
    if (std::abs(zk) < negligible) continue;
    s->frequency.push_back(k);
    const bool nyquist = 2 * k == n;  // the real inverse reads its real part once
    const std::complex<double> value = nyquist ? std::complex<double>(zk.real(), 0.0) : 2.0 * zk;
    const std::complex<double> c = value * root(k, start) * scale;
    const double angle = radiansPerStep * static_cast<double>(k);
    const double halfSine = std::sin(0.5 * angle);
    const double versine = 2.0 * halfSine * halfSine;  // 1 − cos θ, without cancellation
    const double sine = std::sin(angle);
    s->sumWeight.push_back(c / std::complex<double>(versine, -sine));
    s->tiltWeight.push_back(c / std::complex<double>(oneMinusDecay + decay * versine, -decay * sine));
    s->end.push_back(root(k, points));
  }
  s->rawFrequency = std::move(z.frequency);
  s->raw = std::move(z.value);
  return s;
}

// The nonzero frequencies of a half spectrum z of size n/2 + 1 (Z_0 always), from the blocks
// multiplyByPower left alive.
SparseHalfSpectrum liveFrequencies(const std::complex<double>* z, std::size_t n, std::span<const std::size_t> alive) {
  std::size_t count = 0;
  for (std::size_t live : alive) count += live;
  SparseHalfSpectrum out;
  out.frequency.reserve(count + 1);
  out.value.reserve(count + 1);
  out.frequency.push_back(0);
  out.value.push_back(z[0]);
  const std::size_t half = n / 2 + 1;
  for (std::size_t block = 0; block < alive.size(); ++block) {
    if (alive[block] == 0) continue;
    for (std::size_t k = std::max<std::size_t>(1, block * kPowerBlock); k < std::min(half, (block + 1) * kPowerBlock);
         ++k) {
      if (z[k] == 0.0) continue;
      out.frequency.push_back(k);
      out.value.push_back(z[k]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The surviving band of a long composition
//
// At K = 10⁶ (q = 0.004, σ = 1, Δ = 1e−3) a step has ~5 000 grid points, the composed window
// ~10⁵, and about 120 of the transform's 51 201 frequencies survive the K-th power: the spectrum
// of a long run is a narrow band around 0 (|z(θ)| ≈ 1 − Var·θ²/2). The survivors are found from
// a transform of the step's own length and computed by chirp-z (numerics/band_dft), with no
// transform of the window's length at all.
//
// Which frequencies can survive: with z(θ) = Σ_j ω_j e^{−ijθ} and any centre c,
// |d/dθ (e^{icθ} z(θ))| ≤ D = Σ_j ω_j |j − c|, so ||z(θ)| − |z(θ′)|| ≤ D|θ − θ′|. A transform of
// size N samples z at θ_r = 2πr/N; every fine frequency θ_k = 2πk/n lies within π/N of one of
// them, so |z(θ_k)| ≤ |z(θ_r)| + Dπ/N, and where that bound's count-th power is dead (the test of
// multiplyByPower) the frequency is dead too. The others are computed exactly and powered as
// the full transform's would be: the spectrum is the same up to round-off.

// The band path is taken when the full transform is at least this many times the short one:
// it costs about four complex transforms of the short size, the full one a real transform of
// size n and its twiddles. At K = 10⁵, Δ = 1e−3 (n = 32 400, steps of 5 500 points, ratio 5.6)
// the band was as fast in a fresh process and slower in a warm one (1.8 against 0.7–1.2 ms); at
// K = 10⁶ (n = 102 400, ratio 18) 1.6–2.5 against 4.6 ms warm, 7–11 against 18–21 ms cold.
// FFTW's transforms (n ≥ 2¹⁷), planned once per process, are several times faster than
// kissfft's: at K = 10⁶, Δ = 1e−4 (n = 2²⁰, steps of 55 000 points, ratio 19) the band took
// 45 ms against FFTW's 27 ms in a process that had planned before (and 87 against 98 ms in one
// that had not: the path may not depend on what a process did before, or its digits would).
constexpr std::size_t kBandMinimumRatio = 8;
constexpr std::size_t kBandMinimumRatioAgainstFftw = 32;
std::size_t bandMinimumRatio(std::size_t n) {
  return numerics::usesFftw(n) ? kBandMinimumRatioAgainstFftw : kBandMinimumRatio;
}
// Candidate frequencies closer than this are computed in one band (a chirp-z costs three
// transforms: a few extra frequencies cost less).
constexpr std::size_t kBandMergeGap = 256;
// At most this many bands: more means a spectrum the full transform computes faster.
constexpr std::size_t kMaxBands = 4;

// Fine frequency ranges [first, last].
struct FrequencyRange {
  std::size_t first = 0;
  std::size_t last = 0;
};

// The fine frequencies 0 … n/2 whose bound on |z|^count is not dead, for one step's masses,
// from their magnitudes on a coarse grid of `size` points (its cells are what a chirp-z of that
// size then runs on; it also shares that transform's twiddles); nothing when the coarse
// transform would be longer than n/bandMinimumRatio(n).
//
// The bound admits frequencies the power kills: near θ = 0, |z|² ≈ 1 − Var·θ², the survivors
// reach |z|² = e^{−1380/K} and the candidates |z| + Dπ/N as far, about √(1 + DπK/(690N)) times
// wider. A coarse transform of at least DK/1757 points keeps that below 3 (and costs less than
// the band it saves); a step's long tails usually make its own length longer than that already
// (D ≈ 3 points against 5 754 at q = 0.004, σ = 1, Δ = 1e−3: 2.4 times the 116 survivors).
// The grid has room for a band of an eighth of the step (at least 512) beside it, so the
// chirp-z usually runs on the same size.
struct Candidates {
  std::size_t size = 0;  // of the coarse grid
  std::vector<FrequencyRange> ranges;
};

std::optional<Candidates> candidateFrequencies(const std::vector<double>& masses, std::int64_t count, std::size_t n) {
  double total = 0.0;
  double mean = 0.0;
  for (std::size_t j = 0; j < masses.size(); ++j) {
    total += masses[j];
    mean += static_cast<double>(j) * masses[j];
  }
  mean = total > 0.0 ? mean / total : 0.0;
  double spread = 0.0;  // D about the mean
  for (std::size_t j = 0; j < masses.size(); ++j) spread += std::fabs(static_cast<double>(j) - mean) * masses[j];
  const double wanted = std::ceil(spread * static_cast<double>(count) / 1757.0);
  const double withBand = static_cast<double>(masses.size() + std::max<std::size_t>(masses.size() / 8, 512));
  const double least = std::max(withBand, wanted);
  if (static_cast<double>(bandMinimumRatio(n)) * least > static_cast<double>(n)) return std::nullopt;
  Candidates out;
  out.size = numerics::kissFftSize(static_cast<std::size_t>(least));
  std::vector<double> magnitude(out.size / 2 + 1);
  numerics::dftMagnitudes(masses, out.size, magnitude);
  const double smallest = smallestLivingSquare(count);
  // The bound's own round-off: the transform's (~1e−16·log N·Σω) and D's, far below this.
  const double slack = spread * std::numbers::pi / static_cast<double>(out.size) + 1e-12 * std::max(1.0, total);
  const auto nn = static_cast<std::uint64_t>(n);
  const auto size2 = 2 * static_cast<std::uint64_t>(out.size);
  for (std::size_t r = 0; r < magnitude.size(); ++r) {
    const double bound = magnitude[r] + slack;
    if (bound * bound < smallest) continue;
    // k with |k/n − r/N| ≤ 1/(2N): (2r − 1)n/(2N) ≤ k ≤ (2r + 1)n/(2N).
    const std::uint64_t lo = r == 0 ? 0 : ((2 * r - 1) * nn + size2 - 1) / size2;
    const std::uint64_t hi = std::min<std::uint64_t>(nn / 2, (2 * r + 1) * nn / size2);
    if (lo > hi) continue;
    if (!out.ranges.empty() && lo <= out.ranges.back().last + 1) {
      out.ranges.back().last = std::max<std::size_t>(out.ranges.back().last, hi);
    } else {
      out.ranges.push_back({lo, hi});
    }
  }
  return out;
}

// The ranges in both a and b.
std::vector<FrequencyRange> intersect(const std::vector<FrequencyRange>& a, const std::vector<FrequencyRange>& b) {
  std::vector<FrequencyRange> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::size_t lo = std::max(a[i].first, b[j].first);
    const std::size_t hi = std::min(a[i].last, b[j].last);
    if (lo <= hi) out.push_back({lo, hi});
    (a[i].last < b[j].last ? i : j)++;
  }
  return out;
}

std::size_t longestStep(std::span<const Segment> segments) {
  std::size_t longest = 0;
  for (const Segment& s : segments) longest = std::max(longest, s.pld->masses().size());
  return longest;
}

// Whether a composition on a transform of size n may take the band path (whether it does
// depends on the candidates).
bool bandPathPossible(std::span<const Segment> segments, std::size_t n) {
  return n >= bandMinimumRatio(n) * numerics::kissFftSize(longestStep(segments));
}

// The spectrum of the composition at the frequencies that can survive, and nothing else (dead
// ones are 0, as in the full transform). Null when the band path is not the faster one: the
// full transform is less than bandMinimumRatio(n) times the short one, or the candidates are
// too many or too scattered.
std::optional<SparseHalfSpectrum> bandSpectrum(std::span<const Segment> segments, std::size_t n) {
  if (!bandPathPossible(segments, n)) return std::nullopt;
  const std::size_t longest = longestStep(segments);
  std::vector<FrequencyRange> candidates;
  std::vector<std::size_t> sizes;  // each segment's coarse grid
  for (std::size_t si = 0; si < segments.size(); ++si) {
    std::optional<Candidates> own = candidateFrequencies(segments[si].pld->masses(), segments[si].count, n);
    if (!own) return std::nullopt;
    sizes.push_back(own->size);
    candidates = si == 0 ? std::move(own->ranges) : intersect(candidates, own->ranges);
  }
  std::vector<FrequencyRange> bands{{0, 0}};  // Z_0 is always kept
  for (const FrequencyRange& c : candidates) {
    if (c.first <= bands.back().last + kBandMergeGap) {
      bands.back().last = std::max(bands.back().last, c.last);
    } else {
      bands.push_back(c);
    }
  }
  std::size_t total = 0;
  std::size_t widest = 0;
  for (const FrequencyRange& b : bands) {
    total += b.last - b.first + 1;
    widest = std::max(widest, b.last - b.first + 1);
  }
  if (bands.size() > kMaxBands || !fewEnoughForSpectrum(total, n) ||
      bandMinimumRatio(n) * numerics::bandDftSize(longest, widest) > n) {
    return std::nullopt;
  }
  SparseHalfSpectrum out;
  std::vector<std::complex<double>> product, z;
  for (const FrequencyRange& b : bands) {
    const std::size_t width = b.last - b.first + 1;
    product.assign(width, 0.0);
    z.resize(width);
    for (std::size_t si = 0; si < segments.size(); ++si) {
      const std::vector<double>& masses = segments[si].pld->masses();
      // On the coarse grid's size where the band fits beside the step (its twiddles are made).
      const std::size_t least = numerics::bandDftSize(masses.size(), width);
      numerics::bandDft(masses, n, b.first, z, sizes[si] >= least ? sizes[si] : least);
      multiplyByPower(product.data(), z.data(), width, segments[si].count, si == 0);
    }
    for (std::size_t t = 0; t < width; ++t) {
      if (product[t] == 0.0 && b.first + t != 0) continue;
      out.frequency.push_back(b.first + t);
      out.value.push_back(product[t]);
    }
  }
  return out;
}

// Which composed losses a composition keeps.
enum class KeptLosses {
  kAll,
  // Losses ≥ 0 only: δ(ε) at ε ≥ 0 reads nothing below (the hockey stick counts losses above ε),
  // and every query of a run is at ε ≥ 0. About half of a long run's window lies below 0;
  // leaving it out spares its masses and both prefix tables, in time as well as memory (a fresh
  // page costs as much to fault in as several FFT passes over it). The PLD keeps the spectrum
  // (DiscretePld::spectral) where few frequencies survive the K-th power, and no inverse is
  // made; elsewhere its tables only (DiscretePld::profileOnly), the suffix table written over the
  // FFT buffer.
  kNonNegative,
};

// Where a composition's masses land: the absolute grid index at circular position 0 (`offset`),
// the shift of the steps' loss offsets, the window kept, and the masses at +∞ and of slack.
struct ComposedFrame {
  std::int64_t offset = 0;
  std::int64_t shift = 0;
  LossWindow window;
  double infinity = 0.0;
  double slack = 0.0;
  std::size_t points() const { return static_cast<std::size_t>(window.points()); }
};

ComposedFrame composedFrame(std::span<const Segment> segments, Estimate estimate, double tau,
                            const CompositionPlan& plan, KeptLosses kept) {
  ComposedFrame frame;
  double lossOffset = 0.0;  // Σ count·(a step's loss offset), ≤ 0
  for (const Segment& s : segments) {
    frame.offset += s.count * s.pld->firstIndex();
    lossOffset += static_cast<double>(s.count) * s.pld->lossOffset();
  }
  // Only optimistic steps have offsets, all ≤ 0: rounding the composed one down lowers every
  // loss by less than Δ once, which keeps the composition optimistic.
  frame.shift = static_cast<std::int64_t>(std::floor(lossOffset / plan.range.interval));
  frame.window = plan.window;
  if (kept == KeptLosses::kNonNegative && frame.window.lo + frame.shift < 0) {
    frame.window.lo = std::min(frame.window.hi + 1, -frame.shift);  // the index of loss 0, or an empty window
  }
  frame.infinity = -std::expm1(plan.range.logFinite);
  if (estimate == Estimate::kPessimistic) {
    frame.infinity += tau / 2;  // finite mass above the window, counted at +∞
  } else {
    // Wrap-around can fold up to τ/2 of the lower tail onto high losses, and a step whose
    // truncated bottom was moved up raises the composed loss with probability ≤ its slack.
    frame.slack = tau / 2;
    for (const Segment& s : segments) frame.slack += static_cast<double>(s.count) * s.pld->deltaSlack();
  }
  frame.infinity = std::min(1.0, frame.infinity);
  return frame;
}

void describe(CompositionInfo* info, std::size_t n, const CompositionPlan& plan, double tau, bool fromWisdom) {
  if (!info) return;
  *info = CompositionInfo{};
  info->fftSize = n;
  info->windowPoints = static_cast<std::size_t>(plan.window.points());
  info->truncatedMass = tau;
  info->fftFromWisdom = fromWisdom;
}

// A run's composition (losses ≥ 0) kept as its spectrum on a transform of size n ≥ plan.points,
// from the band that survives the powers (bandSpectrum); nothing when the full transform is the
// faster way.
std::optional<DiscretePld> composeBand(std::span<const Segment> segments, Estimate estimate, double tau,
                                       const CompositionPlan& plan, std::size_t n, int threads, CompositionInfo* info) {
  std::optional<SparseHalfSpectrum> band = bandSpectrum(segments, n);
  if (!band) return std::nullopt;
  const ComposedFrame frame = composedFrame(segments, estimate, tau, plan, KeptLosses::kNonNegative);
  describe(info, n, plan, tau, false);
  if (info) info->bandFrequencies = band->frequency.size();
  const std::size_t start = circularPosition(frame.window.lo, frame.offset, n);
  return DiscretePld::spectral(plan.range.interval, frame.window.lo + frame.shift,
                               sparseSpectrum(std::move(*band), n, threads, start, frame.points(), plan.range.interval),
                               frame.infinity, frame.slack);
}

// Composition of all segments on a transform of size transform.size() ≥ plan.points.
Result<DiscretePld> composeWith(std::span<const Segment> segments, Estimate estimate, double tau,
                                const CompositionPlan& plan, const RealTransform& transform, KeptLosses kept,
                                const ComputeControl& control, CompositionInfo* info, BufferPool* pool = nullptr) {
  const std::size_t n = transform.size();
  const std::size_t half = n / 2 + 1;
  // n + 2 doubles: room for a window of n points and its tables' end.
  const bool pooled = pool && pool->doubles() == 2 * half;
  RealBuffer real = pooled ? pool->take() : realBuffer(2 * half);
  // An out-of-place spectrum (kissfft's) of n/2 + 1 values fills a buffer of the pool's size: the
  // run's next job takes it again instead of faulting in fresh pages.
  RealBuffer ownSpectrum = transform.inPlace() ? nullptr : pooled ? pool->take() : realBuffer(2 * half);
  std::complex<double>* spectrum =
      reinterpret_cast<std::complex<double>*>(transform.inPlace() ? real.get() : ownSpectrum.get());
  ComplexBuffer product = segments.size() > 1 ? complexBuffer(half) : nullptr;
  std::vector<std::size_t> alive;  // surviving frequencies per block, after the last product
  for (std::size_t si = 0; si < segments.size(); ++si) {
    const Segment& s = segments[si];
    const auto& m = s.pld->masses();
    std::copy(m.begin(), m.end(), real.get());
    std::fill(real.get() + m.size(), real.get() + n, 0.0);
    transform.forward(real.get(), spectrum);
    if (control.cancelled()) return cancelledStatus();
    std::complex<double>* target = product ? product.get() : spectrum;
    alive = multiplyByPower(target, spectrum, half, s.count, si == 0);
    control.report(0.8 * static_cast<double>(si + 1) / static_cast<double>(segments.size()));
    if (control.cancelled()) return cancelledStatus();
  }
  const ComposedFrame frame = composedFrame(segments, estimate, tau, plan, kept);
  describe(info, n, plan, tau, transform.forwardFromWisdom());  // and the inverse's, if one is made
  const std::size_t points = frame.points();
  const std::size_t start = circularPosition(frame.window.lo, frame.offset, n);
  if (kept == KeptLosses::kNonNegative) {
    const std::complex<double>* composed = product ? product.get() : spectrum;
    std::size_t count = 0;
    for (std::size_t live : alive) count += live;
    if (fewEnoughForSpectrum(count, n)) {
      auto sparse = sparseSpectrum(liveFrequencies(composed, n, alive), n, transform.threads(), start, points,
                                   plan.range.interval);
      if (pooled) {
        pool->give(std::move(real));
        pool->give(std::move(ownSpectrum));
      }
      control.report(1.0);
      return DiscretePld::spectral(plan.range.interval, frame.window.lo + frame.shift, std::move(sparse),
                                   frame.infinity, frame.slack);
    }
  }
  if (product) std::copy(product.get(), product.get() + half, spectrum);  // where the inverse reads
  product.reset();
  transform.inverse(spectrum, real.get());
  if (pooled) pool->give(std::move(ownSpectrum));
  if (info) info->fftFromWisdom = transform.fromWisdom();
  if (control.cancelled()) return cancelledStatus();
  control.report(1.0);
  if (kept == KeptLosses::kNonNegative) {
    compactWindow(real.get(), n, start, points);
    return DiscretePld::profileOnly(plan.range.interval, frame.window.lo + frame.shift,
                                    std::shared_ptr<double[]>(real.release(), numerics::FftwFree{}), points,
                                    frame.infinity, frame.slack);
  }
  std::vector<double> masses = readWindow(real.get(), n, start, points);
  return DiscretePld(plan.range.interval, frame.window.lo + frame.shift, std::move(masses), frame.infinity,
                     frame.slack);
}

}  // namespace

Result<DiscretePld> composeNonNegative(std::span<const Segment> segments, Estimate estimate, double tau,
                                       const ComputeControl& control, CompositionInfo* info) {
  DPX_ASSIGN_OR_RETURN(const CompositionPlan plan, planComposition(segments, tau));
  if (control.cancelled()) return cancelledStatus();
  const std::size_t n = numerics::realFftSize(plan.points);
  const int threads = n >= (std::size_t{1} << 18) ? 2 : 1;  // as compose()
  if (std::optional<DiscretePld> banded = composeBand(segments, estimate, tau, plan, n, threads, info)) {
    control.report(1.0);
    return std::move(*banded);
  }
  const RealTransform transform(n, threads);
  return composeWith(segments, estimate, tau, plan, transform, KeptLosses::kNonNegative, control, info);
}

Result<DiscretePld> compose(std::span<const Segment> segments, Estimate estimate, double tau,
                            const ComputeControl& control, CompositionInfo* info) {
  DPX_ASSIGN_OR_RETURN(const CompositionPlan plan, planComposition(segments, tau));
  if (control.cancelled()) return cancelledStatus();
  const std::size_t n = numerics::realFftSize(plan.points);
  const RealTransform transform(n, n >= (std::size_t{1} << 18) ? 2 : 1);
  return composeWith(segments, estimate, tau, plan, transform, KeptLosses::kAll, control, info);
}

// ---------------------------------------------------------------------------------------------
// Runs

double ComposedRun::deltaUpper(double epsilon) const {
  return std::max(remove[0].delta(epsilon), add[0].delta(epsilon));
}

double ComposedRun::deltaLower(double epsilon) const {
  return std::max(remove[1].delta(epsilon), add[1].delta(epsilon));
}

Result<double> ComposedRun::epsilonUpper(double delta) const {
  DPX_ASSIGN_OR_RETURN(const double r, remove[0].epsilon(delta));
  DPX_ASSIGN_OR_RETURN(const double a, add[0].epsilon(delta));
  return std::max(r, a);
}

Result<double> ComposedRun::epsilonLower(double delta) const {
  DPX_ASSIGN_OR_RETURN(const double r, remove[1].epsilon(delta));
  DPX_ASSIGN_OR_RETURN(const double a, add[1].epsilon(delta));
  return std::max(r, a);
}

namespace {

// Progress of jobs running on several threads, reported as their mean and only from the thread
// that started them: a caller's progress callback (a GUI's) need not be thread-safe.
class JobProgress {
 public:
  JobProgress(const ComputeControl& control, std::size_t jobs)
      : m_control(control), m_fractions(jobs), m_caller(std::this_thread::get_id()) {
    for (auto& f : m_fractions) f.store(0.0, std::memory_order_relaxed);
  }
  ComputeControl job(std::size_t k) {
    ComputeControl c;
    c.cancel = m_control.cancel;
    if (m_control.progress) c.progress = [this, k](double f) { update(k, f); };
    return c;
  }

 private:
  void update(std::size_t k, double fraction) {
    m_fractions[k].store(fraction, std::memory_order_relaxed);
    if (std::this_thread::get_id() != m_caller) return;
    double sum = 0.0;
    for (const auto& f : m_fractions) sum += f.load(std::memory_order_relaxed);
    m_reported = std::max(m_reported, sum / static_cast<double>(m_fractions.size()));
    m_control.report(m_reported);
  }
  const ComputeControl& m_control;
  std::vector<std::atomic<double>> m_fractions;
  std::thread::id m_caller;
  double m_reported = 0.0;  // touched by the caller's thread only
};

// One step's discretisation, as a run asks for it.
struct StepKey {
  double q;
  double sigma;
  Direction direction;
  Estimate estimate;
  double interval;
  double tau;
  bool operator==(const StepKey&) const = default;
};

// The discretised steps of the last few runs: the points of an ε-vs-K curve, composed on one grid
// with truncations that agree within each power of 10 of K, share them. Discretised outside the
// lock (two runs asking for one step at once each discretise it: the curve composes a decade's
// points one after another, so it does not).
Result<std::shared_ptr<const DiscretePld>> sharedStep(const StepKey& key, const ComputeControl& control) {
  static std::mutex mutex;
  static std::list<std::pair<StepKey, std::shared_ptr<const DiscretePld>>> cache;  // most recent first
  constexpr std::size_t kCachedSteps = 16;
  {
    const std::lock_guard lock(mutex);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (!(it->first == key)) continue;
      cache.splice(cache.begin(), cache, it);
      return cache.front().second;
    }
  }
  DPX_ASSIGN_OR_RETURN(DiscretePld step, discretise(SubsampledGaussianPair(key.q, key.sigma, key.direction),
                                                    key.interval, key.estimate, key.tau, control));
  auto shared = std::make_shared<const DiscretePld>(std::move(step));
  const std::lock_guard lock(mutex);
  cache.emplace_front(key, shared);
  if (cache.size() > kCachedSteps) cache.pop_back();
  return shared;
}

// One composed PLD of a run: a direction and an estimate.
struct RunJob {
  Direction direction;
  Estimate estimate;
  std::vector<std::shared_ptr<const DiscretePld>> bases;
  std::vector<Segment> parts;
  CompositionPlan plan;
  Status status = Status::ok();
  DiscretePld composed;
  CompositionInfo info;
};

// Above this many transform points the jobs of a run are composed one after the other (each
// transform on two threads), so at most one set of buffers is alive: the memory guards were
// set for one.
constexpr std::size_t kParallelJobsMaximumSize = std::size_t{1} << 22;

// FFTW's planner takes ~3–8 ms at 2^18–2^20 points (the forward plan), and the transform size is known only once
// every job of a run is planned; the optimistic quantisation (a sequential root-finding sweep) is
// the longest part of that, while the pessimistic steps are done early. The size their windows
// need is usually the run's (their windows are the wider), so it is planned then, on a thread of
// its own, beside the optimistic sweeps; a wrong guess costs only CPU time (the plan is made
// again at the right size, and a plan depends on its size alone). kissfft's twiddles (~0.4 ms at
// 32 400 points, for sizes below FFTW's) are made instead by the lane that ends its steps first,
// while the other lane still quantises: composing, both lanes would wait for them. Out of line:
// inlined into the job loop, it changed how the compiler contracted the arithmetic around it.
class EarlyPlanner {
 public:
  explicit EarlyPlanner(std::size_t pessimisticJobs) : m_left(pessimisticJobs) {}
  [[gnu::noinline]] void pessimisticDone(std::size_t points) {
    std::size_t seen = m_points.load();
    while (points > seen && !m_points.compare_exchange_weak(seen, points)) {
    }
    if (m_left.fetch_sub(1) != 1) return;
    const std::size_t n = numerics::realFftSize(m_points.load());
    if (!numerics::usesFftw(n)) return;
    m_thread = std::jthread([n] { numerics::prepareRealTransform(n, n <= kParallelJobsMaximumSize ? 1 : 2); });
  }
  // A lane has discretised its jobs; the first of the two makes kissfft's plan if the
  // pessimistic jobs need one.
  [[gnu::noinline]] void laneDone() {
    if (m_lanesDone.fetch_add(1) != 0 || m_left.load() != 0 || m_points.load() == 0) return;
    const std::size_t n = numerics::realFftSize(m_points.load());
    if (!numerics::usesFftw(n)) numerics::prepareRealTransform(n, 1);
  }
  [[gnu::noinline]] void join() {
    if (m_thread.joinable()) m_thread.join();
  }

 private:
  std::atomic<std::size_t> m_left;
  std::atomic<std::size_t> m_points{0};
  std::atomic<int> m_lanesDone{0};
  std::jthread m_thread;  // joined on every path out
};

}  // namespace

double stepTruncation(double tau, std::int64_t count) {
  double decade = 1.0;
  while (decade < static_cast<double>(count)) decade *= 10.0;
  return tau / (4.0 * decade);
}

Result<ComposedRun> composeRun(std::span<const GaussianSegment> segments, double interval, double tau,
                               bool withOptimistic, const ComputeControl& control) {
  if (segments.empty()) return Status::invalidArgument("a run needs at least one segment");
  for (const GaussianSegment& s : segments) {
    if (!(s.q > 0.0 && s.q <= 1.0))
      return Status::invalidArgument("sampling rate q = " + formatNumber(s.q) + " must be in (0, 1]");
    if (!(s.sigma > 0.0) || !std::isfinite(s.sigma)) {
      return Status::invalidArgument("noise multiplier σ = " + formatNumber(s.sigma) + " must be > 0");
    }
    if (s.count < 1) return Status::invalidArgument("steps K = " + std::to_string(s.count) + " must be ≥ 1");
  }
  std::vector<RunJob> jobs;
  for (Direction direction : {Direction::kRemove, Direction::kAdd}) {
    jobs.push_back({direction, Estimate::kPessimistic, {}, {}, {}, Status::ok(), {}, {}});
    if (withOptimistic) jobs.push_back({direction, Estimate::kOptimistic, {}, {}, {}, Status::ok(), {}, {}});
  }
  JobProgress progress(control, jobs.size());
  std::vector<ComputeControl> controls;
  for (std::size_t k = 0; k < jobs.size(); ++k) controls.push_back(progress.job(k));

  EarlyPlanner planner(withOptimistic ? jobs.size() / 2 : jobs.size());
  // The jobs are independent: discretised and planned side by side in two lanes, one per core.
  // A lane takes a direction's pessimistic step first (parallel inside when the lanes run on
  // oneTBB, and done early so FFTW is planned beside the rest), then the other direction's optimistic step, a
  // sequential root-finding sweep and the longest part of a small run: with a direction per lane, the lane of the
  // shorter sweep sat idle for a third of the stage.
  using Lane = std::vector<std::size_t>;  // indices into jobs: remove, add; pessimistic first
  const std::vector<Lane> lanes = withOptimistic ? std::vector<Lane>{{0, 3}, {2, 1}} : std::vector<Lane>{{0}, {1}};
  auto discretiseJob = [&](std::size_t k) {
    RunJob& job = jobs[k];
    ComputeControl sub = controls[k];
    sub.progress = nullptr;  // reported by the composition
    job.bases.reserve(segments.size());
    for (const GaussianSegment& s : segments) {
      Result<std::shared_ptr<const DiscretePld>> base =
          sharedStep({s.q, s.sigma, job.direction, job.estimate, interval, stepTruncation(tau, s.count)}, sub);
      if (!base) {
        job.status = base.status();
        return;
      }
      job.bases.push_back(std::move(*base));
    }
    for (std::size_t i = 0; i < segments.size(); ++i) job.parts.push_back({job.bases[i].get(), segments[i].count});
    Result<CompositionPlan> plan = planComposition(job.parts, tau);
    if (!plan) {
      job.status = plan.status();
      return;
    }
    job.plan = *plan;
    // A job that will likely take the band path needs no transform of its window's size.
    if (job.estimate == Estimate::kPessimistic) {
      const bool band = bandPathPossible(job.parts, numerics::realFftSize(job.plan.points));
      planner.pessimisticDone(band ? 0 : job.plan.points);
    }
  };
  twoLanes(
      [&] {
        for (std::size_t k : lanes[0]) discretiseJob(k);
        planner.laneDone();
      },
      [&] {
        for (std::size_t k : lanes[1]) discretiseJob(k);
        planner.laneDone();
      });
  planner.join();
  for (const RunJob& job : jobs) DPX_RETURN_IF_ERROR(job.status);
  if (control.cancelled()) return cancelledStatus();

  // One transform size for every job, so a large run plans FFTW once.
  std::size_t points = 0;
  for (const RunJob& job : jobs) points = std::max(points, job.plan.points);
  const std::size_t n = numerics::realFftSize(points);
  const bool sideBySide = n <= kParallelJobsMaximumSize;
  const int threads = sideBySide ? 1 : 2;
  // Made by the first job that needs it: a long run's jobs usually take the band path, which
  // needs no transform of size n (nor FFTW's plans for it).
  std::optional<RealTransform> transform;
  std::once_flag transformMade;
  BufferPool buffers(2 * (n / 2 + 1));
  auto composeJob = [&](std::size_t k) {
    RunJob& job = jobs[k];
    if (std::optional<DiscretePld> banded =
            composeBand(job.parts, job.estimate, tau, job.plan, n, threads, &job.info)) {
      job.composed = std::move(*banded);
      controls[k].report(1.0);
      return;
    }
    std::call_once(transformMade, [&] { transform.emplace(n, threads); });
    Result<DiscretePld> composed = composeWith(job.parts, job.estimate, tau, job.plan, *transform,
                                               KeptLosses::kNonNegative, controls[k], &job.info, &buffers);
    if (composed) {
      job.composed = std::move(*composed);
    } else {
      job.status = composed.status();
    }
  };
  if (sideBySide) {
    auto every = [&](std::size_t from) {
      for (std::size_t k = from; k < jobs.size(); k += 2) composeJob(k);
    };
    twoLanes([&] { every(0); }, [&] { every(1); });
  } else {
    for (std::size_t k = 0; k < jobs.size(); ++k) composeJob(k);
  }
  for (const RunJob& job : jobs) DPX_RETURN_IF_ERROR(job.status);

  ComposedRun run;
  run.interval = interval;
  run.tau = tau;
  run.info = jobs.front().info;
  for (RunJob& job : jobs) {
    (job.direction == Direction::kRemove ? run.remove : run.add)[job.estimate == Estimate::kPessimistic ? 0 : 1] =
        std::move(job.composed);
  }
  if (!withOptimistic) {
    run.remove[1] = run.remove[0];
    run.add[1] = run.add[0];
  }
  control.report(1.0);
  return run;
}

namespace {

// Each PLD replaced by its tables, side by side as the run was composed (copies share a
// spectrum: its tables are made once).
void replaceByTables(std::span<DiscretePld* const> plds, std::size_t fftSize) {
  auto tabulate = [&](std::size_t k) { *plds[k] = plds[k]->tables(); };
  if (fftSize <= kParallelJobsMaximumSize) {
    auto every = [&](std::size_t from) {
      for (std::size_t k = from; k < plds.size(); k += 2) tabulate(k);
    };
    twoLanes([&] { every(0); }, [&] { every(1); });
  } else {
    for (std::size_t k = 0; k < plds.size(); ++k) tabulate(k);
  }
}

}  // namespace

ComposedRun ComposedRun::tabulated() const {
  ComposedRun out = *this;
  DiscretePld* const plds[] = {&out.remove[0], &out.remove[1], &out.add[0], &out.add[1]};
  replaceByTables(plds, info.fftSize);
  return out;
}

ComposedRun ComposedRun::tabulated(Estimate only) const {
  ComposedRun out = *this;
  const int e = only == Estimate::kPessimistic ? 0 : 1;
  DiscretePld* const plds[] = {&out.remove[e], &out.add[e]};
  replaceByTables(plds, info.fftSize);
  return out;
}

}  // namespace dpx::core::accounting::pld
