// One step's privacy loss distribution: the Poisson-subsampled Gaussian pair (P, Q) and its
// discretisation on the loss grid, pessimistic (connect the dots) or optimistic (quantisation).
// Apart from composition: continuous distributions in, one DiscretePld out, no transform.
#include <tbb/blocked_range.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "accounting/pld_internal.h"
#include "accounting/privacy_loss_distribution.h"
#include "common/format.h"
#include "common/parallel.h"
#include "numerics/special_functions.h"
#include "numerics/vector_math.h"

namespace dpx::core::accounting::pld {
namespace {

using detail::cancelledStatus;
using detail::kInf;
using numerics::logAddExp;
using numerics::logSubExp;
using numerics::normalCdf;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kInvSqrt2 = 0.70710678118654752440;

// Memory guard, checked before allocating: 16 M doubles per step grid. The automatic
// discretisation stays far below it.
constexpr std::int64_t kMaxStepGridPoints = 16'000'000;

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

}  // namespace dpx::core::accounting::pld
