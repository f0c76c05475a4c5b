#include "accounting/shuffle_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <mutex>
#include <tuple>

#include "accounting/batch_passes.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "common/parallel.h"
#include "numerics/root_finding.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLogTailMass = -70.0;        // the statistic's working range ends where a tail holds e^{−70}
constexpr double kLogNegligibleMass = -69.0;  // slices lighter than ~1e−30 under P are dropped
constexpr std::int64_t kDefaultSlices = 50'000;
constexpr std::int64_t kMaxPassGridPoints = 16'000'000;
constexpr double kCompositionTau = 1e-14;
constexpr int kThresholdScanPoints = 600;

// Bisection for the c where a monotone f crosses 0 on [lo, hi] (f(lo) < 0 < f(hi)).
template <typename F>
double bisect(F&& f, double lo, double hi) {
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < 0.0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The best c of a threshold test: a scan of the working range, then Brent on the best cell.
template <typename F>
ShuffleThreshold bestThreshold(const ShuffleMaxStatistic& statistic, F&& objective) {
  const double lo = statistic.lowerEnd();
  const double hi = statistic.upperEnd();
  const double step = (hi - lo) / kThresholdScanPoints;
  int best = 0;
  double bestValue = -kInf;
  for (int k = 0; k <= kThresholdScanPoints; ++k) {
    const double value = objective(lo + step * k);
    if (value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  ShuffleThreshold result{bestValue, lo + step * best};
  if (!std::isfinite(bestValue)) return result;
  const double a = lo + step * std::max(best - 1, 0);
  const double b = lo + step * std::min(best + 1, kThresholdScanPoints);
  const Result<numerics::Minimum> refined = numerics::minimizeBrent([&](double c) { return -objective(c); }, a, b, 52);
  if (refined && -refined->value > bestValue) result = {-refined->value, refined->x};
  return result;
}

}  // namespace

ShuffleMaxStatistic::ShuffleMaxStatistic(double sigma, std::int64_t stepsPerEpoch, std::int64_t visibleSteps)
    : m_sigma(sigma), m_visible(static_cast<double>(visibleSteps)), m_stepsPerEpoch(stepsPerEpoch) {
  const double share = static_cast<double>(visibleSteps) / static_cast<double>(stepsPerEpoch);
  m_logVisibleShare = std::log(share);
  m_logHiddenShare = visibleSteps >= stepsPerEpoch ? -kInf : std::log1p(-share);
  m_visibleShare = std::exp(m_logVisibleShare);
  m_hiddenShare = m_logHiddenShare == -kInf ? 0.0 : std::exp(m_logHiddenShare);
  // Q's lower tail and P's upper tail bound both distributions' tails (P is shifted up).
  double lo = -2.0 - 60.0 * sigma;
  double hi = 3.0 + 60.0 * sigma;
  m_lowerEnd = bisect([&](double c) { return logCdf(c, false) - kLogTailMass; }, lo, hi);
  m_upperEnd = bisect([&](double c) { return kLogTailMass - logSf(c, true); }, lo, hi);
}

ShuffleMaxStatistic::NormalAt ShuffleMaxStatistic::normalAt(double x) {
  // Above 0, log Φ(x) = log(1 − Φ(−x)): logNormalCdf's own formula there, from the Φ(−x) the
  // upper tails need anyway.
  if (x == kInf) return {x, 0.0, 0.0};
  if (x >= 0.0) {
    const double complement = numerics::normalCdf(-x);
    return {x, std::log1p(-complement), complement};
  }
  return {x, numerics::logNormalCdf(x), std::numeric_limits<double>::quiet_NaN()};
}

double ShuffleMaxStatistic::NormalAt::upper() {
  if (std::isnan(complement)) complement = numerics::normalCdf(-x);
  return complement;
}

double ShuffleMaxStatistic::logCdf(double c, bool underP) const {
  if (c == kInf) return 0.0;
  if (c == -kInf) return -kInf;
  NormalAt base = normalAt(c / m_sigma);
  return logCdfAt(c, base, underP);
}

// Both at every cut of a slicing: the T − 1 batches without the record are alike under P and Q,
// so Φ at c/σ (and its complement) is evaluated once for both.
void ShuffleMaxStatistic::logCdfBoth(double c, double& underP, double& underQ) const {
  NormalAt base = normalAt(c / m_sigma);
  underP = logCdfAt(c, base, true);
  underQ = logCdfAt(c, base, false);
}

double ShuffleMaxStatistic::logCdfAt(double c, NormalAt& base, bool underP) const {
  const double shift = underP ? 2.0 : 1.0;
  NormalAt record = normalAt((c - shift) / m_sigma);
  // log(w·Φ(zRecord) + (1 − w)·Φ(z)): the batch holding the record is run with probability w.
  double mix = numerics::logAddExp(m_logVisibleShare + record.logCdf, m_logHiddenShare + base.logCdf);
  if (mix > -0.5) {
    // Near 1, from the upper tails, so P(max > c) keeps its digits far out.
    const double tail = m_visibleShare * record.upper() + (m_hiddenShare == 0.0 ? 0.0 : m_hiddenShare * base.upper());
    mix = std::log1p(-tail);
  }
  return (m_visible - 1.0) * base.logCdf + mix;
}

double ShuffleMaxStatistic::logSf(double c, bool underP) const {
  const double logCdfValue = logCdf(c, underP);
  return logCdfValue >= 0.0 ? -kInf : numerics::log1mExp(logCdfValue);
}

double ShuffleMaxStatistic::logMass(double a, double b, bool underP) const {
  if (b == kInf) return logSf(a, underP);
  const double upper = logCdf(b, underP);
  if (upper < std::log(0.5)) return numerics::logSubExp(upper, logCdf(a, underP));
  return numerics::logSubExp(logSf(a, underP), logSf(b, underP));
}

ShuffleThreshold shuffleThresholdEpsilon(const ShuffleMaxStatistic& statistic, double delta) {
  const double logDelta = std::log(delta);
  ShuffleThreshold best = bestThreshold(statistic, [&](double c) {
    const double logP = statistic.logSf(c, true);
    if (!(logP > logDelta)) return -kInf;
    return numerics::logSubExp(logP, logDelta) - statistic.logSf(c, false);
  });
  best.value = std::max(best.value, 0.0);
  return best;
}

ShuffleThreshold shuffleThresholdDelta(const ShuffleMaxStatistic& statistic, double epsilon) {
  ShuffleThreshold best = bestThreshold(statistic, [&](double c) {
    const double logP = statistic.logSf(c, true);
    const double logQ = epsilon + statistic.logSf(c, false);
    if (!(logP > logQ)) return -kInf;
    return numerics::logSubExp(logP, logQ);
  });
  best.value = std::isfinite(best.value) ? std::exp(best.value) : 0.0;
  return best;
}

namespace {

struct LossAtom {
  double loss;  // log(P-mass / Q-mass)
  double mass;  // P-mass
};

// The statistic's slices as (loss, P-mass), in increasing loss; slices lighter than ~1e−30 under P
// are dropped (an under-count of δ). Neighbouring slices share a cut, so the log-CDF (and, in the
// upper half, the log-survival) is evaluated once per cut and distribution (in parallel: 2 × 50 001
// evaluations of a mixture of normal CDFs) and each slice's mass is formed from its two cuts
// exactly as ShuffleMaxStatistic::logMass forms it. An ε-vs-K curve slices a new unfinished pass
// at almost every K.
Result<std::vector<LossAtom>> computeSliceAtoms(const ShuffleMaxStatistic& statistic, const ShuffleSlicing& cuts,
                                                const std::atomic<bool>* cancel) {
  if (!(cuts.hi > cuts.lo) || cuts.count < 1)
    return Status::invalidArgument("shuffle slicing needs lo < hi and ≥ 1 slice");
  const double width = (cuts.hi - cuts.lo) / static_cast<double>(cuts.count);
  const auto cutCount = static_cast<std::size_t>(cuts.count) + 1;  // cut j at lo + width·j
  std::vector<double> logCdfP(cutCount), logCdfQ(cutCount);
  // Tens of milliseconds at a new σ: a cancelled request stops within a chunk.
  const auto cancelled = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };
  parallelFor(tbb::blocked_range<std::size_t>(0, cutCount, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
    if (cancelled()) return;
    for (std::size_t j = r.begin(); j != r.end(); ++j) {
      statistic.logCdfBoth(cuts.lo + width * static_cast<double>(j), logCdfP[j], logCdfQ[j]);
    }
  });
  if (cancelled()) return Status::cancelled("the shuffle lower bound was cancelled");
  // log P(max > c) at the cuts whose slices read it, once per cut: the last cut (the slice above
  // hi) and the cuts of slices whose upper cut lies in the upper half (their masses come from
  // the tails).
  const double logHalf = std::log(0.5);
  const auto logSfOf = [](double logCdf) { return logCdf >= 0.0 ? -kInf : numerics::log1mExp(logCdf); };
  std::vector<double> logSfP(cutCount, kInf), logSfQ(cutCount, kInf);
  // Written as the negation of logMass's "upper < logHalf", so the two agree even on a NaN.
  const auto sfNeeded = [&](const std::vector<double>& logCdf, std::size_t j) {
    return j + 1 == cutCount || !(logCdf[j] < logHalf) || !(logCdf[j + 1] < logHalf);
  };
  parallelFor(tbb::blocked_range<std::size_t>(0, cutCount, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t j = r.begin(); j != r.end(); ++j) {
      if (sfNeeded(logCdfP, j)) logSfP[j] = logSfOf(logCdfP[j]);
      if (sfNeeded(logCdfQ, j)) logSfQ[j] = logSfOf(logCdfQ[j]);
    }
  });
  // logMass(a, b) of the slice between cuts j and j + 1 (j = −1: below lo; j = count: above hi).
  const auto logMass = [&](std::int64_t j, const std::vector<double>& logCdf, const std::vector<double>& logSf) {
    const auto at = [](const std::vector<double>& v, std::int64_t k) { return v[static_cast<std::size_t>(k)]; };
    if (j == cuts.count) return at(logSf, j);
    const double upper = at(logCdf, j + 1);
    if (upper < logHalf) return numerics::logSubExp(upper, j < 0 ? -kInf : at(logCdf, j));
    return numerics::logSubExp(j < 0 ? 0.0 : at(logSf, j), at(logSf, j + 1));
  };
  // Slice j + 1 of the vector is the slice above cut j; a dropped slice keeps mass 0 (a kept one
  // holds more than e^{−69}).
  std::vector<LossAtom> slices(cutCount + 1, LossAtom{0.0, 0.0});
  parallelFor(tbb::blocked_range<std::size_t>(0, cutCount + 1, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t k = r.begin(); k != r.end(); ++k) {
      const std::int64_t j = static_cast<std::int64_t>(k) - 1;
      const double logP = logMass(j, logCdfP, logSfP);
      if (logP > kLogNegligibleMass) slices[k] = {logP - logMass(j, logCdfQ, logSfQ), std::exp(logP)};
    }
  });
  std::vector<LossAtom> atoms;
  atoms.reserve(cutCount + 1);
  for (const LossAtom& slice : slices) {
    if (slice.mass > 0.0) atoms.push_back(slice);
  }
  if (atoms.empty()) return Status::numericalIssue("the shuffle statistic has no slice with mass under P");
  std::sort(atoms.begin(), atoms.end(), [](const LossAtom& x, const LossAtom& y) { return x.loss < y.loss; });
  return atoms;
}

// The slicing asked for, or the default: kDefaultSlices slices of the statistic's working range.
ShuffleSlicing slicingOf(const ShuffleMaxStatistic& statistic, const std::optional<ShuffleSlicing>& slicing) {
  return slicing.value_or(ShuffleSlicing{statistic.lowerEnd(), statistic.upperEnd(), kDefaultSlices});
}

// The atoms of the last few (statistic, slicing): a run's Δ is chosen from them and its passes are
// built from them again, and an ε-vs-K curve asks for the same whole pass at every K.
Result<std::shared_ptr<const std::vector<LossAtom>>> sliceAtoms(const ShuffleMaxStatistic& statistic,
                                                                const ShuffleSlicing& cuts,
                                                                const std::atomic<bool>* cancel) {
  using Key = std::tuple<double, double, std::int64_t, double, double, std::int64_t>;
  const Key key{statistic.sigma(), statistic.visibleSteps(), statistic.stepsPerEpoch(), cuts.lo, cuts.hi, cuts.count};
  static std::mutex mutex;
  static std::list<std::pair<Key, std::shared_ptr<const std::vector<LossAtom>>>> cache;  // most recent first
  {
    const std::lock_guard lock(mutex);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first != key) continue;
      cache.splice(cache.begin(), cache, it);
      return cache.front().second;
    }
  }
  DPX_ASSIGN_OR_RETURN(std::vector<LossAtom> computed, computeSliceAtoms(statistic, cuts, cancel));
  auto shared = std::make_shared<const std::vector<LossAtom>>(std::move(computed));
  const std::lock_guard lock(mutex);
  cache.emplace_front(key, shared);
  if (cache.size() > 8) cache.pop_back();
  return shared;
}

// Optimistic quantisation without rounding bias: consecutive atoms (in loss order) are merged
// into bins whose aggregated loss log(ΣP/ΣQ) is exactly a grid point, splitting an atom between
// two bins where needed (a randomised post-processing). Only the last bin, which never reaches
// its grid point, is rounded down. Q-masses are kept as e^{g}·Q relative to the bin's grid point
// g, which no atom of the bin exceeds by more than Δ, so nothing overflows.
std::vector<std::pair<std::int64_t, double>> quantiseAtoms(const std::vector<LossAtom>& atoms, double interval) {
  std::vector<std::pair<std::int64_t, double>> bins;
  std::int64_t target = static_cast<std::int64_t>(std::ceil(atoms.front().loss / interval));
  double binP = 0.0, binQ = 0.0;  // binQ in units of e^{−g}
  for (const LossAtom& atom : atoms) {
    double mass = atom.mass;
    while (mass > 0.0) {
      const double g = static_cast<double>(target) * interval;
      const double relativeQ = std::exp(g - atom.loss);  // e^{g}·Q-mass per unit P-mass
      if (atom.loss <= g || binP == 0.0) {
        if (binP == 0.0 && atom.loss > g) {
          target = static_cast<std::int64_t>(std::ceil(atom.loss / interval));
          continue;
        }
        binP += mass;
        binQ += mass * relativeQ;
        mass = 0.0;
        if (binP >= binQ) {  // the bin's loss reached g exactly (an atom on the grid point)
          bins.emplace_back(target, binP);
          binP = binQ = 0.0;
          ++target;
        }
        continue;
      }
      // Take the share t of this atom that brings the bin's loss to g: binP + t·P = binQ + t·P·relativeQ.
      const double share = (binQ - binP) / (1.0 - relativeQ);
      if (share >= mass) {  // the whole atom still leaves the bin below g
        binP += mass;
        binQ += mass * relativeQ;
        break;
      }
      bins.emplace_back(target, binP + share);
      mass -= share;
      binP = binQ = 0.0;
      target = static_cast<std::int64_t>(std::ceil(atom.loss / interval));
    }
  }
  if (binP > 0.0) {
    // Loss log(binP/binQ) + g lies below g: rounded down to the grid point under it.
    const double loss = static_cast<double>(target) * interval + std::log(binP / binQ);
    bins.emplace_back(static_cast<std::int64_t>(std::floor(loss / interval)), binP);
  }
  return bins;
}

}  // namespace

Result<pld::DiscretePld> slicedPassPld(const ShuffleMaxStatistic& statistic, double interval,
                                       const std::optional<ShuffleSlicing>& slicing, const std::atomic<bool>* cancel) {
  if (!(interval > 0.0)) return Status::invalidArgument("loss grid Δ must be > 0");
  DPX_ASSIGN_OR_RETURN(const auto sliced, sliceAtoms(statistic, slicingOf(statistic, slicing), cancel));
  const std::vector<LossAtom>& atoms = *sliced;
  const double span = (atoms.back().loss - atoms.front().loss) / interval;
  if (span > static_cast<double>(kMaxPassGridPoints)) {
    return Status::invalidArgument("one pass's losses need " + formatNumber(span) + " grid points at Δ = " +
                                   formatNumber(interval) + " (limit " + std::to_string(kMaxPassGridPoints) + ")");
  }
  const std::vector<std::pair<std::int64_t, double>> bins = quantiseAtoms(atoms, interval);
  std::int64_t first = bins.front().first, last = bins.front().first;
  for (const auto& bin : bins) {
    first = std::min(first, bin.first);
    last = std::max(last, bin.first);
  }
  std::vector<double> masses(static_cast<std::size_t>(last - first + 1), 0.0);
  for (const auto& [index, mass] : bins) masses[static_cast<std::size_t>(index - first)] += mass;
  return pld::DiscretePld(interval, first, std::move(masses), 0.0);
}

double ShuffleLowerBound::delta(double epsilon) const {
  double value = composed ? composed->delta(epsilon) : 0.0;
  if (onePass) value = std::max(value, shuffleThresholdDelta(*onePass, epsilon).value);
  return std::clamp(value, 0.0, 1.0);
}

Result<double> ShuffleLowerBound::epsilon(double delta) const {
  double value = 0.0;
  if (composed) {
    if (Result<double> eps = composed->epsilon(delta)) value = *eps;
  }
  if (onePass) value = std::max(value, shuffleThresholdEpsilon(*onePass, delta).value);
  return finiteOrStatus(value, "shuffle lower bound ε");
}

namespace {

// Δ for E passes: fine enough to resolve the composed loss (√E·sd/1000, at most 1e−3), coarse
// enough that the composed window (±9 standard deviations of the summed loss and one pass's
// range) fits in kWindowBudget points and one pass in a quarter of its grid limit.
Result<double> defaultInterval(const ShuffleMaxStatistic& statistic, double passes,
                               const std::optional<ShuffleSlicing>& slicing, const std::atomic<bool>* cancel) {
  constexpr double kWindowBudget = 2e6;
  DPX_ASSIGN_OR_RETURN(const auto sliced, sliceAtoms(statistic, slicingOf(statistic, slicing), cancel));
  const std::vector<LossAtom>& atoms = *sliced;
  double total = 0.0, mean = 0.0;
  for (const LossAtom& a : atoms) {
    total += a.mass;
    mean += a.mass * a.loss;
  }
  mean /= total;
  double variance = 0.0;
  for (const LossAtom& a : atoms) variance += a.mass * (a.loss - mean) * (a.loss - mean);
  const double spread = std::sqrt(variance / total * passes);
  const double range = atoms.back().loss - atoms.front().loss;
  const double resolution = std::min(1e-3, std::max(spread / 1000.0, 1e-9));
  return std::max(
      {resolution, (18.0 * spread + range) / kWindowBudget, 4.0 * range / static_cast<double>(kMaxPassGridPoints)});
}

// The sliced passes composed: E whole passes (and the unfinished one), fewer whole passes when
// the composed window would not fit — a lower bound from fewer passes is still a lower bound.
Status composePasses(ShuffleLowerBound& out, const pld::DiscretePld* whole, const pld::DiscretePld* partial,
                     const ShuffleRunOptions& options) {
  pld::ComputeControl control;
  control.cancel = options.cancel;
  for (std::int64_t passes = out.fullEpochs;; passes = passes / 2) {
    std::vector<pld::Segment> segments;
    if (whole && passes > 0) segments.push_back({whole, passes});
    if (partial && passes == out.fullEpochs) segments.push_back({partial, 1});
    if (segments.empty()) return Status::ok();
    if (segments.size() == 1 && segments.front().count == 1) {
      out.composed = std::make_shared<const pld::DiscretePld>(*segments.front().pld);
      out.epochsComposed = whole ? 1 : 0;
      return Status::ok();
    }
    Result<pld::DiscretePld> composed = pld::compose(segments, pld::Estimate::kOptimistic, kCompositionTau, control);
    if (composed) {
      out.composed = std::make_shared<const pld::DiscretePld>(std::move(*composed));
      out.epochsComposed = whole ? passes : 0;
      return Status::ok();
    }
    if (control.cancelled() || passes <= 1) return composed.status();
  }
}

}  // namespace

Result<ShuffleLowerBound> shuffleLowerBound(double sigma, std::int64_t stepsPerEpoch, std::int64_t fullEpochs,
                                            std::int64_t partialSteps, const ShuffleRunOptions& options) {
  if (!(sigma > 0.0) || !std::isfinite(sigma)) return Status::invalidArgument("noise multiplier σ must be > 0");
  if (stepsPerEpoch < 1 || fullEpochs < 0 || partialSteps < 0 || partialSteps >= stepsPerEpoch ||
      fullEpochs + partialSteps == 0) {
    return Status::invalidArgument("a shuffled run needs T ≥ 1 batches per pass and at least one batch run");
  }
  ShuffleLowerBound out;
  out.sigma = sigma;
  out.stepsPerEpoch = stepsPerEpoch;
  out.fullEpochs = fullEpochs;
  out.partialSteps = partialSteps;
  std::optional<ShuffleMaxStatistic> whole, partial;
  if (fullEpochs > 0) whole.emplace(sigma, stepsPerEpoch, stepsPerEpoch);
  if (partialSteps > 0) partial.emplace(sigma, stepsPerEpoch, partialSteps);
  out.onePass = whole ? whole : partial;
  const double passes = static_cast<double>(fullEpochs + (partialSteps > 0 ? 1 : 0));
  double interval = 0.0;
  if (options.interval) {
    interval = *options.interval;
  } else {
    DPX_ASSIGN_OR_RETURN(interval, defaultInterval(*out.onePass, passes, options.slicing, options.cancel));
  }
  for (;; interval *= 4.0) {
    out.interval = interval;
    Result<pld::DiscretePld> wholePld = whole ? slicedPassPld(*whole, interval, options.slicing, options.cancel)
                                              : Result<pld::DiscretePld>(pld::DiscretePld());
    Result<pld::DiscretePld> partialPld = partial ? slicedPassPld(*partial, interval, options.slicing, options.cancel)
                                                  : Result<pld::DiscretePld>(pld::DiscretePld());
    Status status = !wholePld ? wholePld.status() : (!partialPld ? partialPld.status() : Status::ok());
    if (status.isOk()) {
      status = composePasses(out, whole ? &*wholePld : nullptr, partial ? &*partialPld : nullptr, options);
    }
    if (status.isOk()) return out;
    if (options.interval || interval > 0.05 || (options.cancel && options.cancel->load())) return status;
  }
}

ShuffleAccountant::ShuffleAccountant()
    : Accountant({
          .id = "shuffle",
          .name = "Shuffled batches (lower bound)",
          .citation = "Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang 2024, How Private are DP-SGD "
                      "Implementations? (lower bound for shuffled batches, max-of-coordinates test) and Scalable "
                      "DP-SGD: Shuffling vs. Poisson Subsampling (multi-epoch composition)",
          .bound = BoundKind::kLower,
          .assumptions =
              {
                  .sampling = Sampling::kShuffle,
                  .neighbouring = Neighbouring::kAddRemove,
                  .release = Release::kAllIterates,
                  .statements = {"T = ⌈n/m⌉ batches per pass, a fresh random permutation every pass",
                                 "zero-out neighbours (a record's clipped gradient replaced by 0): sensitivity L",
                                 "a lower bound: some pair of datasets is at least this distinguishable, so no "
                                 "valid upper bound for shuffled batches can be smaller"},
              },
          .nativeKeys = {"steps_per_epoch", "epochs"},
          .color = 0xd62728,
          .isAnalytic = false,
          .crossMachineTolerance = 1e-7,
      }) {}

Result<std::shared_ptr<const ShuffleLowerBound>> ShuffleAccountant::bound(const Params& params,
                                                                          const ExactOptions& options) const {
  DPX_RETURN_IF_ERROR(params.validate());
  const BatchPasses passes = batchPasses(params);
  using Key = std::tuple<double, std::int64_t, std::int64_t, std::int64_t, double>;
  const Key key{params.sigma, passes.stepsPerEpoch, passes.fullEpochs, passes.partialSteps,
                options.discretisation.value_or(0.0)};
  static std::mutex mutex;
  static std::list<std::pair<Key, std::shared_ptr<const ShuffleLowerBound>>> cache;  // most recent first
  {
    const std::lock_guard lock(mutex);
    for (const auto& entry : cache) {
      if (entry.first == key) return entry.second;
    }
  }
  ShuffleRunOptions runOptions;
  runOptions.interval = options.discretisation;
  runOptions.cancel = options.cancel;
  DPX_ASSIGN_OR_RETURN(
      ShuffleLowerBound computed,
      shuffleLowerBound(params.sigma, passes.stepsPerEpoch, passes.fullEpochs, passes.partialSteps, runOptions));
  auto shared = std::make_shared<const ShuffleLowerBound>(std::move(computed));
  const std::lock_guard lock(mutex);
  cache.emplace_front(key, shared);
  if (cache.size() > 16) cache.pop_back();
  return shared;
}

Result<std::vector<NativeValue>> ShuffleAccountant::native(const Params& params) const {
  DPX_RETURN_IF_ERROR(params.validate());
  const BatchPasses passes = batchPasses(params);
  return std::vector<NativeValue>{
      {"steps_per_epoch", "batches per pass T = ⌈n/m⌉", static_cast<double>(passes.stepsPerEpoch)},
      {"epochs", "passes over the data", passes.epochs()},
  };
}

Result<EpsilonResult> ShuffleAccountant::epsilon(const Params& params, const EpsilonOptions& options) const {
  DPX_ASSIGN_OR_RETURN(const auto b, bound(params, options.exact));
  DPX_ASSIGN_OR_RETURN(const double eps, b->epsilon(params.delta));
  EpsilonResult result;
  result.epsilon = eps;
  result.delta = params.delta;
  result.bound = BoundKind::kLower;
  result.native = {{"epochs_composed", "whole passes composed", static_cast<double>(b->epochsComposed)},
                   {"discretisation", "loss grid Δ", b->interval}};
  return result;
}

Result<double> ShuffleAccountant::delta(const Params& params, double epsilon, const EpsilonOptions& options) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const auto b, bound(params, options.exact));
  return b->delta(epsilon);
}

Result<TradeoffCurve> ShuffleAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                                  const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  DPX_ASSIGN_OR_RETURN(const auto b, bound(params, options.exact));
  if (!b->composed) return Status::numericalIssue("the shuffle lower bound has no composed distribution");
  // Neyman–Pearson on the composed pair: reject the largest losses first. With losses rounded
  // down, the Q-masses P·e^{−ℓ} are over-counted, which moves every point right: the curve
  // stays on or above the true one.
  const pld::DiscretePld& d = *b->composed;
  std::vector<double> typeOneAt{0.0}, powerAt{0.0};
  for (std::size_t i = d.masses().size(); i-- > 0;) {
    const double p = d.masses()[i];
    if (p <= 0.0) continue;
    typeOneAt.push_back(typeOneAt.back() + p * std::exp(-d.loss(i)));
    powerAt.push_back(powerAt.back() + p);
  }
  TradeoffCurve curve;
  curve.typeOne.assign(typeOne.begin(), typeOne.end());
  for (double x : typeOne) {
    const auto it = std::lower_bound(typeOneAt.begin(), typeOneAt.end(), x);
    double power = powerAt.back();
    if (it != typeOneAt.end()) {
      const std::size_t k = static_cast<std::size_t>(it - typeOneAt.begin());
      if (k == 0) {
        power = 0.0;
      } else {
        const double t = (x - typeOneAt[k - 1]) / (typeOneAt[k] - typeOneAt[k - 1]);
        power = powerAt[k - 1] + t * (powerAt[k] - powerAt[k - 1]);
      }
    }
    curve.typeTwo.push_back(std::clamp(1.0 - power, 0.0, 1.0 - x));
  }
  return curve;
}

}  // namespace dpx::core::accounting
