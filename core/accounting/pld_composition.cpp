// Composition of discretised steps by FFT: the loss window exact Chernoff bounds keep, where the
// composed masses land, and the transform (or band) that composes them. Apart from the frequency
// domain (pld_spectrum.cpp) and from how a run schedules its jobs (pld_composed_run.cpp).
#include "accounting/pld_composition.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "accounting/pld_buffers.h"
#include "accounting/pld_internal.h"
#include "accounting/pld_spectrum.h"
#include "common/format.h"

namespace dpx::core::accounting::pld {
namespace {

using detail::cancelledStatus;
using detail::composeBand;
using detail::composeWith;
using detail::CompositionPlan;
using detail::CompositionRange;
using detail::KeptLosses;
using detail::kInf;
using detail::LossWindow;
using detail::planComposition;
using numerics::complexBuffer;
using numerics::ComplexBuffer;
using numerics::realBuffer;
using numerics::RealBuffer;
using numerics::RealTransform;

// Memory guard, checked before allocating: 64 M doubles in the composed window (≈ 1.5 GB with the
// FFT buffers). The automatic discretisation stays far below it.
constexpr std::int64_t kMaxComposedWindowPoints = 64'000'000;

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

}  // namespace

namespace detail {

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

}  // namespace detail

namespace {

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

}  // namespace

namespace detail {

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

Result<DiscretePld> composeWith(std::span<const Segment> segments, Estimate estimate, double tau,
                                const CompositionPlan& plan, const RealTransform& transform, KeptLosses kept,
                                const ComputeControl& control, CompositionInfo* info, BufferPool* pool) {
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

}  // namespace detail

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

}  // namespace dpx::core::accounting::pld
