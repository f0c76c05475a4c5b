#include "accounting/random_allocation_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <tuple>

#include "accounting/pld_accountant.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "common/parallel.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {
namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return -floorDiv(-a, b); }

}  // namespace

namespace random_allocation {
namespace {

// Guards a grid rounding against the last bits of log1p/exp: an increment computed a hair below
// an integer multiple of h is still rounded up past it (one grid step too far is conservative).
constexpr double kRoundingGuard = 1e-9;

// Grid steps c(d) that log(e^a + e^b) lies above max(a, b) when |a − b| = d·h, rounded.
std::int64_t increment(std::int64_t d, double h, Rounding rounding) {
  const double g = std::log1p(std::exp(-static_cast<double>(d) * h)) / h;
  if (rounding == Rounding::kUp) return static_cast<std::int64_t>(std::ceil(g + kRoundingGuard));
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(g - kRoundingGuard)));
}

// Offsets d in [first, last] that share one rounded increment c.
struct Run {
  std::int64_t c, first, last;
};

std::vector<Run> incrementRuns(std::int64_t maxOffset, double h, Rounding rounding) {
  std::vector<Run> runs;
  const std::int64_t floorValue = rounding == Rounding::kUp ? 1 : 0;  // c(d) for large d
  for (std::int64_t d = 0; d <= maxOffset; ++d) {
    const std::int64_t c = increment(d, h, rounding);
    if (!runs.empty() && runs.back().c == c) {
      runs.back().last = d;
    } else {
      runs.push_back({c, d, d});
    }
    if (c == floorValue) {  // c is non-increasing in d and never below its limit
      runs.back().last = maxOffset;
      break;
    }
  }
  return runs;
}

// Window sums Σ_{k=l}^{h} x_k of a mass vector, each taken from the side (prefix or suffix) on
// which its terms are small, so tail windows keep their digits.
class WindowSums {
 public:
  explicit WindowSums(const std::vector<double>& x) : m_prefix(x.size() + 1, 0.0), m_suffix(x.size() + 1, 0.0) {
    for (std::size_t k = 0; k < x.size(); ++k) m_prefix[k + 1] = m_prefix[k] + x[k];
    for (std::size_t k = x.size(); k-- > 0;) m_suffix[k] = m_suffix[k + 1] + x[k];
    m_half = 0.5 * m_prefix.back();
  }
  double operator()(std::size_t l, std::size_t h) const {
    const double value = m_prefix[h + 1] <= m_half ? m_prefix[h + 1] - m_prefix[l] : m_suffix[l] - m_suffix[h + 1];
    return value > 0.0 ? value : 0.0;
  }

 private:
  std::vector<double> m_prefix, m_suffix;
  double m_half;
};

bool isEmpty(const LogGridDistribution& d) { return d.masses.empty(); }

// Drops exact zeros at the ends and tails of mass ≤ trimMass, moved as `rounding` allows.
void trim(LogGridDistribution& d, Rounding rounding, double trimMass) {
  std::size_t lo = 0, hi = d.masses.size();
  double low = 0.0, high = 0.0;
  while (lo < hi && low + d.masses[lo] <= trimMass) low += d.masses[lo++];
  while (hi > lo && high + d.masses[hi - 1] <= trimMass) high += d.masses[--hi];
  if (lo == hi) {  // everything is negligible: keep the heaviest point
    const auto it = std::max_element(d.masses.begin(), d.masses.end());
    lo = static_cast<std::size_t>(it - d.masses.begin());
    hi = lo + 1;
    low = high = 0.0;
    for (std::size_t k = 0; k < d.masses.size(); ++k) {
      if (k < lo) low += d.masses[k];
      if (k > lo) high += d.masses[k];
    }
  }
  std::vector<double> kept(d.masses.begin() + static_cast<std::ptrdiff_t>(lo),
                           d.masses.begin() + static_cast<std::ptrdiff_t>(hi));
  if (rounding == Rounding::kUp) {
    kept.front() += low;
    d.infinityMass += high;
  } else {
    d.zeroMass += low;
    kept.back() += high;
  }
  d.first += static_cast<std::int64_t>(lo);
  d.masses = std::move(kept);
}

}  // namespace

Result<LogGridDistribution> lognormalOnGrid(double mean, double sd, double origin, double spacing, Rounding rounding,
                                            double tailMass, std::int64_t maxPoints) {
  if (!(sd > 0.0) || !(spacing > 0.0) || !(tailMass > 0.0 && tailMass < 0.5)) {
    return Status::invalidArgument("a lognormal term needs sd > 0, grid spacing > 0 and tail mass in (0, 0.5)");
  }
  const double z = numerics::normalQuantileComplement(tailMass);
  const double lo = std::floor((mean - z * sd - origin) / spacing);
  const double hi = std::ceil((mean + z * sd - origin) / spacing);
  if (hi - lo + 1.0 > static_cast<double>(maxPoints)) {
    return Status::invalidArgument("a lognormal term needs " + formatNumber(hi - lo + 1.0) +
                                   " log-grid points at spacing " + formatNumber(spacing) + " (limit " +
                                   std::to_string(maxPoints) + ")");
  }
  const auto jlo = static_cast<std::int64_t>(lo), jhi = static_cast<std::int64_t>(hi);
  const auto cuts = static_cast<std::size_t>(jhi - jlo + 1);
  // Φ and 1 − Φ of the standardised cut points, each where it keeps its digits.
  std::vector<double> cdf(cuts), sf(cuts);
  parallelFor(tbb::blocked_range<std::size_t>(0, cuts, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t k = r.begin(); k != r.end(); ++k) {
      const double x = (origin + static_cast<double>(jlo + static_cast<std::int64_t>(k)) * spacing - mean) / sd;
      cdf[k] = numerics::normalCdf(x);
      sf[k] = numerics::normalCdf(-x);
    }
  });
  // Mass of the interval between cuts k and k + 1.
  auto between = [&](std::size_t k) {
    const double value = cdf[k + 1] <= 0.5 ? cdf[k + 1] - cdf[k] : sf[k] - sf[k + 1];
    return value > 0.0 ? value : 0.0;
  };
  LogGridDistribution d;
  d.origin = origin;
  d.spacing = spacing;
  d.masses.resize(cuts - 1);
  for (std::size_t k = 0; k + 1 < cuts; ++k) d.masses[k] = between(k);
  if (rounding == Rounding::kUp) {
    d.first = jlo + 1;  // interval k's mass on its upper end point
    d.masses.front() += cdf.front();
    d.infinityMass = sf.back();
  } else {
    d.first = jlo;  // on its lower end point
    d.zeroMass = cdf.front();
    d.masses.back() += sf.back();
  }
  return d;
}

LogGridDistribution sumOf(const LogGridDistribution& a, const LogGridDistribution& b, Rounding rounding,
                          double trimMass) {
  LogGridDistribution r;
  r.origin = a.origin;
  r.spacing = a.spacing;
  r.zeroMass = a.zeroMass * b.zeroMass;
  r.infinityMass = a.infinityMass + b.infinityMass - a.infinityMass * b.infinityMass;
  if (isEmpty(a) && isEmpty(b)) return r;
  const double h = a.spacing;
  const std::int64_t a0 = isEmpty(a) ? b.first : a.first, a1 = isEmpty(a) ? b.first : a.last();
  const std::int64_t b0 = isEmpty(b) ? a.first : b.first, b1 = isEmpty(b) ? a.first : b.last();
  const std::int64_t lo = std::min(a0, b0);
  const std::int64_t top = std::max(a1, b1);
  const std::int64_t cMax = increment(0, h, rounding);
  r.first = lo;  // an atom at 0 keeps the other term's lowest points
  r.masses.assign(static_cast<std::size_t>(top + cMax - r.first + 1), 0.0);
  auto add = [&](std::int64_t index, double mass) { r.masses[static_cast<std::size_t>(index - r.first)] += mass; };
  // An atom at 0 leaves the other term as it is.
  if (!isEmpty(b) && a.zeroMass > 0.0) {
    for (std::size_t k = 0; k < b.masses.size(); ++k)
      add(b.first + static_cast<std::int64_t>(k), a.zeroMass * b.masses[k]);
  }
  if (!isEmpty(a) && b.zeroMass > 0.0) {
    for (std::size_t k = 0; k < a.masses.size(); ++k)
      add(a.first + static_cast<std::int64_t>(k), b.zeroMass * a.masses[k]);
  }
  if (!isEmpty(a) && !isEmpty(b)) {
    const std::vector<Run> runs = incrementRuns(top - lo, h, rounding);
    const WindowSums windowA(a.masses), windowB(b.masses);
    // The pairs (i, j) with d = |i − j| in a run land at max(i, j) + c. Pieces of the index axis
    // are done in parallel, each into its own buffer (its writes reach c_max past its end).
    const std::int64_t span = top - lo + 1;
    const std::int64_t pieces = std::clamp<std::int64_t>(span / 2048, 1, 64);
    const std::int64_t pieceLength = (span + pieces - 1) / pieces;
    std::vector<std::vector<double>> buffers(static_cast<std::size_t>(pieces));
    parallelFor(std::int64_t{0}, pieces, [&](std::int64_t p) {
      const std::int64_t from = lo + p * pieceLength, to = std::min(top, from + pieceLength - 1);
      std::vector<double>& out = buffers[static_cast<std::size_t>(p)];
      out.assign(static_cast<std::size_t>(to - from + 1 + cMax + 1), 0.0);
      for (const Run& run : runs) {
        // j ≤ i: i from A, j = i − d from B.
        for (std::int64_t i = std::max({a0, b0 + run.first, from}); i <= std::min({a1, b1 + run.last, to}); ++i) {
          const std::int64_t jl = std::max(b0, i - run.last), jh = std::min(b1, i - run.first);
          out[static_cast<std::size_t>(i - from + run.c)] +=
              a.masses[static_cast<std::size_t>(i - a0)] *
              windowB(static_cast<std::size_t>(jl - b0), static_cast<std::size_t>(jh - b0));
        }
        // i < j: j from B, i = j − d from A, d ≥ 1.
        const std::int64_t dFirst = std::max<std::int64_t>(run.first, 1);
        if (dFirst > run.last) continue;
        for (std::int64_t j = std::max({b0, a0 + dFirst, from}); j <= std::min({b1, a1 + run.last, to}); ++j) {
          const std::int64_t il = std::max(a0, j - run.last), ih = std::min(a1, j - dFirst);
          out[static_cast<std::size_t>(j - from + run.c)] +=
              b.masses[static_cast<std::size_t>(j - b0)] *
              windowA(static_cast<std::size_t>(il - a0), static_cast<std::size_t>(ih - a0));
        }
      }
    });
    for (std::int64_t p = 0; p < pieces; ++p) {
      const std::int64_t from = lo + p * pieceLength;
      const std::vector<double>& out = buffers[static_cast<std::size_t>(p)];
      for (std::size_t k = 0; k < out.size(); ++k) {
        if (out[k] != 0.0) add(from + static_cast<std::int64_t>(k), out[k]);
      }
    }
  }
  trim(r, rounding, trimMass);
  return r;
}

Result<LogGridDistribution> sumOfCopies(const LogGridDistribution& term, std::int64_t count, Rounding rounding,
                                        double trimMass, const pld::ComputeControl& control) {
  LogGridDistribution result;
  result.origin = term.origin;
  result.spacing = term.spacing;
  result.zeroMass = 1.0;  // the empty sum
  LogGridDistribution power = term;
  while (count > 0) {
    if (control.cancelled()) return Status::cancelled("the random-allocation accountant was cancelled");
    if (count & 1) result = sumOf(result, power, rounding, trimMass);
    count >>= 1;
    if (count > 0) power = sumOf(power, power, rounding, trimMass);
  }
  return result;
}

}  // namespace random_allocation

namespace {

using random_allocation::LogGridDistribution;
using random_allocation::Rounding;

// Log-grid points per loss-grid point: each of the ~2·log₂ t sums moves log S by < h = Δ/M.
constexpr std::int64_t kSubdivision = 4;
constexpr std::int64_t kMaxTermPoints = 3'000'000;

Status cancelledStatus() { return Status::cancelled("the random-allocation accountant was cancelled"); }

// The loss distribution of S on the loss grid: loss = sign·(u_j − log t) = sign·j·h with
// h = Δ/M, rounded up (pessimistic) or down (optimistic) onto iΔ. `toInfinity` is the mass of
// the atom whose loss is +∞ (kept); the other atom's loss is −∞ and it is dropped.
pld::DiscretePld toLossGrid(const LogGridDistribution& s, int sign, bool up, double interval, double toInfinity) {
  if (s.masses.empty()) return pld::DiscretePld(interval, 0, {0.0}, toInfinity);
  auto indexOf = [&](std::int64_t j) {
    const std::int64_t scaled = sign * j;
    return up ? ceilDiv(scaled, kSubdivision) : floorDiv(scaled, kSubdivision);
  };
  const std::int64_t a = indexOf(s.first), b = indexOf(s.last());
  const std::int64_t first = std::min(a, b), last = std::max(a, b);
  std::vector<double> masses(static_cast<std::size_t>(last - first + 1), 0.0);
  for (std::size_t k = 0; k < s.masses.size(); ++k) {
    masses[static_cast<std::size_t>(indexOf(s.first + static_cast<std::int64_t>(k)) - first)] += s.masses[k];
  }
  return pld::DiscretePld(interval, first, std::move(masses), toInfinity);
}

// One rounding's chain: S_remove = U + V₂ + … + V_t and S_add = W₁ + … + W_t.
struct SumsOfStep {
  LogGridDistribution remove, add;
};

Result<SumsOfStep> sumsOfStep(double sigma, std::int64_t t, double spacing, double tailMass, Rounding rounding,
                              const pld::ComputeControl& control) {
  const double s = 1.0 / sigma;
  const double origin = std::log(static_cast<double>(t));
  DPX_ASSIGN_OR_RETURN(
      const LogGridDistribution w,
      random_allocation::lognormalOnGrid(-0.5 * s * s, s, origin, spacing, rounding, tailMass, kMaxTermPoints));
  DPX_ASSIGN_OR_RETURN(
      const LogGridDistribution u,
      random_allocation::lognormalOnGrid(0.5 * s * s, s, origin, spacing, rounding, tailMass, kMaxTermPoints));
  DPX_ASSIGN_OR_RETURN(const LogGridDistribution others,
                       random_allocation::sumOfCopies(w, t - 1, rounding, tailMass, control));
  if (control.cancelled()) return cancelledStatus();
  SumsOfStep sums;
  sums.remove = random_allocation::sumOf(u, others, rounding, tailMass);
  sums.add = random_allocation::sumOf(w, others, rounding, tailMass);
  return sums;
}

struct StepCache {
  using Key = std::tuple<double, std::int64_t, double, double>;
  std::mutex mutex;
  std::list<std::pair<Key, std::shared_ptr<const RandomAllocationStepPlds>>> entries;  // most recent first
};

StepCache& stepCache() {
  static StepCache c;
  return c;
}

}  // namespace

Result<std::shared_ptr<const RandomAllocationStepPlds>> randomAllocationSteps(double sigma, std::int64_t t,
                                                                              double interval, double tau,
                                                                              const pld::ComputeControl& control) {
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    return Status::invalidArgument("noise multiplier σ = " + formatNumber(sigma) + " must be > 0");
  }
  if (t < 1) return Status::invalidArgument("steps per epoch t = " + std::to_string(t) + " must be ≥ 1");
  if (!(interval > 0.0) || !(interval <= 1.0)) {
    return Status::invalidArgument("loss grid Δ = " + formatNumber(interval) + " must be in (0, 1]");
  }
  if (!(tau > 0.0) || !(tau < 1e-3)) {
    return Status::invalidArgument("truncation mass τ = " + formatNumber(tau) + " must be in (0, 1e−3)");
  }
  const StepCache::Key key{sigma, t, interval, tau};
  {
    std::lock_guard lock(stepCache().mutex);
    for (auto it = stepCache().entries.begin(); it != stepCache().entries.end(); ++it) {
      if (it->first != key) continue;
      stepCache().entries.splice(stepCache().entries.begin(), stepCache().entries, it);
      return stepCache().entries.front().second;
    }
  }
  const double spacing = interval / static_cast<double>(kSubdivision);
  // Each of the t + 1 terms sends at most tailMass to an atom and each of the ~4·log₂ t sums at
  // most 2·tailMass: the step's atoms stay below tau.
  const double tailMass = tau / (4.0 * static_cast<double>(t) + 16.0 * (std::log2(static_cast<double>(t)) + 2.0));
  std::optional<Result<SumsOfStep>> up, down;
  twoLanes([&] { up.emplace(sumsOfStep(sigma, t, spacing, tailMass, Rounding::kUp, control)); },
           [&] { down.emplace(sumsOfStep(sigma, t, spacing, tailMass, Rounding::kDown, control)); });
  if (!*up) return up->status();
  if (!*down) return down->status();
  auto steps = std::make_shared<RandomAllocationStepPlds>();
  const SumsOfStep& hi = **up;
  const SumsOfStep& lo = **down;
  // remove: L = log(S/t) grows with S; add: L = −log(S/t) falls with S.
  steps->remove[0] = toLossGrid(hi.remove, +1, true, interval, hi.remove.infinityMass);
  steps->remove[1] = toLossGrid(lo.remove, +1, false, interval, 0.0);
  steps->add[0] = toLossGrid(lo.add, -1, true, interval, lo.add.zeroMass);
  steps->add[1] = toLossGrid(hi.add, -1, false, interval, 0.0);
  std::shared_ptr<const RandomAllocationStepPlds> shared = std::move(steps);
  std::lock_guard lock(stepCache().mutex);
  stepCache().entries.emplace_front(key, shared);
  while (stepCache().entries.size() > 6) stepCache().entries.pop_back();
  return shared;
}

Result<pld::DiscretePld> randomAllocationStep(double sigma, std::int64_t stepsPerEpoch, pld::Direction direction,
                                              pld::Estimate estimate, double interval, double tau,
                                              const pld::ComputeControl& control) {
  DPX_ASSIGN_OR_RETURN(const auto steps, randomAllocationSteps(sigma, stepsPerEpoch, interval, tau, control));
  const int e = estimate == pld::Estimate::kPessimistic ? 0 : 1;
  return direction == pld::Direction::kRemove ? steps->remove[e] : steps->add[e];
}

namespace {

Status validateRunSpec(const RandomAllocationRunSpec& spec) {
  if (spec.selections < 1 || spec.stepsPerEpoch < spec.selections || spec.epochs < 1) {
    return Status::invalidArgument(
        "random allocation needs 1 ≤ k ≤ t and E ≥ 1 (k = " + std::to_string(spec.selections) +
        ", t = " + std::to_string(spec.stepsPerEpoch) + ", E = " + std::to_string(spec.epochs) + ")");
  }
  return Status::ok();
}

// One kind of 1-of-t epoch in a run: t steps, σ, and how many such epochs the run composes.
struct AllocationStepKind {
  double sigma;
  std::int64_t stepsPerEpoch;
  std::int64_t count;
};

// k-of-t ≤ (k − r) copies of 1-of-⌊t/k⌋ and r of 1-of-(⌊t/k⌋ + 1) per epoch (r = t mod k).
std::vector<AllocationStepKind> stepKindsOf(std::span<const RandomAllocationRunSpec> allocations) {
  std::vector<AllocationStepKind> kinds;
  auto add = [&](double sigma, std::int64_t t, std::int64_t count) {
    if (count <= 0) return;
    for (AllocationStepKind& k : kinds) {
      if (k.sigma == sigma && k.stepsPerEpoch == t) {
        k.count += count;
        return;
      }
    }
    kinds.push_back({sigma, t, count});
  };
  for (const RandomAllocationRunSpec& spec : allocations) {
    const std::int64_t base = spec.stepsPerEpoch / spec.selections;
    const std::int64_t longer = spec.stepsPerEpoch - spec.selections * base;
    add(spec.sigma, base, (spec.selections - longer) * spec.epochs);
    add(spec.sigma, base + 1, longer * spec.epochs);
  }
  return kinds;
}

}  // namespace

Result<pld::ComposedRun> randomAllocationRun(std::span<const RandomAllocationRunSpec> allocations,
                                             std::span<const pld::GaussianSegment> gaussian, double interval,
                                             double tau, const pld::ComputeControl& control) {
  if (allocations.empty()) return Status::invalidArgument("a random-allocation run needs at least one allocation");
  for (const RandomAllocationRunSpec& spec : allocations) DPX_RETURN_IF_ERROR(validateRunSpec(spec));
  const std::vector<AllocationStepKind> kinds = stepKindsOf(allocations);
  pld::ComputeControl stepControl;
  stepControl.cancel = control.cancel;
  std::vector<std::shared_ptr<const RandomAllocationStepPlds>> steps;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    DPX_ASSIGN_OR_RETURN(auto s, randomAllocationSteps(kinds[i].sigma, kinds[i].stepsPerEpoch, interval,
                                                       pld::stepTruncation(tau, kinds[i].count), stepControl));
    steps.push_back(std::move(s));
    control.report(0.5 * static_cast<double>(i + 1) / static_cast<double>(kinds.size()));
  }
  pld::ComposedRun run;
  run.interval = interval;
  run.tau = tau;
  int done = 0;
  for (const pld::Direction direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
    for (int e = 0; e < 2; ++e) {
      if (control.cancelled()) return cancelledStatus();
      const pld::Estimate estimate = e == 0 ? pld::Estimate::kPessimistic : pld::Estimate::kOptimistic;
      std::vector<pld::Segment> segments;
      for (std::size_t i = 0; i < kinds.size(); ++i) {
        const RandomAllocationStepPlds& s = *steps[i];
        segments.push_back({direction == pld::Direction::kRemove ? &s.remove[e] : &s.add[e], kinds[i].count});
      }
      // The Gaussian steps of the run, discretised on the same grid with the same estimate.
      std::vector<pld::DiscretePld> gaussianSteps;
      gaussianSteps.reserve(gaussian.size());
      for (const pld::GaussianSegment& g : gaussian) {
        DPX_ASSIGN_OR_RETURN(pld::DiscretePld step,
                             pld::discretise(pld::SubsampledGaussianPair(g.q, g.sigma, direction), interval, estimate,
                                             pld::stepTruncation(tau, g.count), stepControl));
        gaussianSteps.push_back(std::move(step));
      }
      for (std::size_t i = 0; i < gaussian.size(); ++i) segments.push_back({&gaussianSteps[i], gaussian[i].count});
      pld::ComputeControl composeControl;
      composeControl.cancel = control.cancel;
      pld::CompositionInfo info;
      DPX_ASSIGN_OR_RETURN(pld::DiscretePld composed,
                           pld::composeNonNegative(segments, estimate, tau, composeControl, &info));
      if (direction == pld::Direction::kRemove && e == 0) run.info = info;
      (direction == pld::Direction::kRemove ? run.remove : run.add)[e] = std::move(composed);
      control.report(0.5 + 0.125 * ++done);
    }
  }
  return run;
}

Result<pld::ComposedRun> randomAllocationRun(const RandomAllocationRunSpec& spec, double interval, double tau,
                                             const pld::ComputeControl& control) {
  return randomAllocationRun(std::span(&spec, 1), {}, interval, tau, control);
}

namespace {

constexpr int kMaxRefinements = 6;
constexpr double kCoarseStart = 8.0;
// The automatic grid stops refining where one step's two chains would cost more than this many
// inner-loop operations (a few seconds on two cores): a coarser grid still gives a rigorous
// bracket, reported with its width and a caveat.
constexpr double kWorkBudget = 1.5e9;

// Inner-loop operations of one step of 1-of-t at grid Δ: a term spans ±10 sd of log-values on
// h = Δ/M, a sum visits ~log 2/h increment runs per point for both orders of the pair, and the
// binary powers take ~2·log₂ t + 3 sums.
double stepWork(double sigma, std::int64_t t, double interval) {
  const double h = interval / static_cast<double>(kSubdivision);
  const double points = 20.0 / sigma / h + 1.0;
  const double runs = std::min(points, std::log(2.0) / h + 1.0);
  const double sums = 2.0 * std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(t, 2)))) + 3.0;
  return 2.0 * points * runs * sums;
}

// The finest Δ whose steps fit kWorkBudget (work falls about as 1/Δ²).
double finestInterval(std::span<const AllocationStepKind> kinds) {
  const double reference = 1e-2;
  double work = 0.0;
  for (const AllocationStepKind& k : kinds) work += stepWork(k.sigma, k.stepsPerEpoch, reference);
  return reference * std::sqrt(work / kWorkBudget);
}

pld::ComputeControl controlFor(const ExactOptions& o, double from, double to) {
  pld::ComputeControl c;
  c.cancel = o.cancel;
  if (o.progress) c.progress = [f = o.progress, from, to](double x) { f(from + (to - from) * x); };
  return c;
}

// A first, cheap grid: a step's loss spreads about √log(1 + χ²) (1-of-t: χ² = (e^{1/σ²} − 1)/t;
// a subsampled Gaussian step: q²(e^{1/σ²} − 1)); the composed window should have a few thousand
// points.
double initialInterval(std::span<const AllocationStepKind> kinds, std::span<const pld::GaussianSegment> gaussian) {
  double variance = 0.0, widest = 0.0, narrowest = INFINITY;
  auto add = [&](double sigma, double chiSquareScale, std::int64_t count) {
    const double s2 = std::min(1.0 / (sigma * sigma), 700.0);
    const double spread = std::sqrt(std::log1p(std::expm1(s2) * chiSquareScale));
    variance += spread * spread * static_cast<double>(count);
    widest = std::max(widest, spread);
    narrowest = std::min(narrowest, spread);
  };
  for (const AllocationStepKind& k : kinds) add(k.sigma, 1.0 / static_cast<double>(k.stepsPerEpoch), k.count);
  for (const pld::GaussianSegment& g : gaussian) add(g.sigma, g.q * g.q, g.count);
  const double mu = std::sqrt(variance);
  const double window = mu * mu / 2.0 + 14.0 * mu + 20.0 * widest;
  return std::clamp(std::min(window / 4096.0, narrowest / 4.0), 1e-6, 0.25);
}

}  // namespace

Result<RandomAllocationRunResult> randomAllocationRun(std::span<const RandomAllocationRunSpec> allocations,
                                                      std::span<const pld::GaussianSegment> gaussian, double delta,
                                                      const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(validateExactOptions(options));
  if (allocations.empty()) return Status::invalidArgument("a random-allocation run needs at least one allocation");
  for (const RandomAllocationRunSpec& spec : allocations) DPX_RETURN_IF_ERROR(validateRunSpec(spec));
  constexpr double tau = RandomAllocationAccountant::kTruncation;
  RandomAllocationRunResult result;
  std::optional<pld::ComposedRun> run;
  if (options.discretisation) {
    DPX_ASSIGN_OR_RETURN(pld::ComposedRun fixed, randomAllocationRun(allocations, gaussian, *options.discretisation,
                                                                     tau, controlFor(options, 0.0, 1.0)));
    result.achievedWidth = bracketWidth(fixed, delta, options);
    run.emplace(std::move(fixed));
  } else {
    const std::vector<AllocationStepKind> kinds = stepKindsOf(allocations);
    const double finest = finestInterval(kinds);
    // The composition's window alone would often start at the finest grid the work allows; a
    // first grid 8 times coarser costs 1/64 of that and measures the width the refinement aims from.
    double interval = std::max(initialInterval(kinds, gaussian), std::min(kCoarseStart * finest, 0.25));
    interval = std::max(interval, finest);
    DPX_ASSIGN_OR_RETURN(pld::ComposedRun first,
                         randomAllocationRun(allocations, gaussian, interval, tau, controlFor(options, 0.0, 0.25)));
    double width = bracketWidth(first, delta, options);
    run.emplace(std::move(first));
    double progress = 0.25;
    while (width > options.accuracy && result.refinements < kMaxRefinements) {
      // The bracket narrows about linearly in Δ (the log-grid roundings shift each step's loss).
      const double ratio = std::isfinite(width) ? options.accuracy / width * 0.8 : 0.25;
      if (interval <= finest * (1.0 + 1e-9)) {
        result.limited = true;
        break;
      }
      interval = std::max(finest, interval * std::clamp(ratio, 0.1, 0.5));
      const double span = (1.0 - progress) / 2.0;
      Result<pld::ComposedRun> finer =
          randomAllocationRun(allocations, gaussian, interval, tau, controlFor(options, progress, progress + span));
      progress += span;
      if (!finer && finer.status().code() == StatusCode::kCancelled) return finer.status();
      if (!finer) {  // the finer grid would not fit: the coarser bracket stands
        result.limited = true;
        break;
      }
      run.emplace(std::move(*finer));
      width = bracketWidth(*run, delta, options);
      ++result.refinements;
    }
    result.achievedWidth = width;
  }
  result.run = std::make_shared<const pld::ComposedRun>(std::move(*run));
  if (options.progress) options.progress(1.0);
  return result;
}

namespace {

struct RunKey {
  double sigma;
  std::int64_t k, t, epochs;
  double discretisation, accuracy, delta;
  double deltaAtEpsilon;  // −1: the grid targets the ε bracket at delta
  bool operator==(const RunKey&) const = default;
};

struct RunCache {
  std::mutex mutex;
  std::list<std::pair<RunKey, RandomAllocationRunResult>> entries;  // most recent first
};

RunCache& runCache() {
  static RunCache c;
  return c;
}

}  // namespace

RandomAllocationRunSpec RandomAllocationAccountant::specOf(const Params& p) {
  RandomAllocationRunSpec spec;
  spec.sigma = p.sigma;
  spec.selections = p.allocationSelections();
  spec.stepsPerEpoch = p.allocationSteps();
  // A fractional last epoch counts as a whole one (an upper bound); 1e−9 absorbs K·m/n's rounding.
  spec.epochs = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(nominalEpochs(p) - 1e-9)));
  return spec;
}

Result<RandomAllocationRunResult> RandomAllocationAccountant::run(const Params& params, const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(validateExactOptions(options));
  const RandomAllocationRunSpec spec = specOf(params);
  const RunKey key{spec.sigma,
                   spec.selections,
                   spec.stepsPerEpoch,
                   spec.epochs,
                   options.discretisation.value_or(0.0),
                   options.accuracy,
                   options.discretisation ? 0.0 : params.delta,
                   options.discretisation || !options.deltaAtEpsilon ? -1.0 : *options.deltaAtEpsilon};
  {
    std::lock_guard lock(runCache().mutex);
    auto& entries = runCache().entries;
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (!(it->first == key)) continue;
      entries.splice(entries.begin(), entries, it);
      if (options.progress) options.progress(1.0);
      return entries.front().second;
    }
  }
  DPX_ASSIGN_OR_RETURN(RandomAllocationRunResult result,
                       randomAllocationRun(std::span(&spec, 1), {}, params.delta, options));
  std::lock_guard lock(runCache().mutex);
  runCache().entries.emplace_front(key, result);
  while (runCache().entries.size() > 4) runCache().entries.pop_back();
  return result;
}

RandomAllocationAccountant::RandomAllocationAccountant()
    : Accountant({
          .id = "random-allocation",
          .name = "Random allocation (balls in bins)",
          .citation = "Feldman & Shenfeld 2025, Privacy amplification by random allocation (arXiv 2502.08202); "
                      "Feldman & Shenfeld 2026, The privacy loss distribution of random allocation (ICML 2026, "
                      "arXiv 2602.17284)",
          .bound = BoundKind::kUpper,
          .assumptions =
              {
                  .sampling = Sampling::kBallsInBins,
                  .neighbouring = Neighbouring::kAddRemove,
                  .release = Release::kAllIterates,
                  .statements = {"balls-in-bins batching: every epoch puts each record in exactly k of its t steps, "
                                 "uniformly at random (default k = 1, t = ⌈n/m⌉); batch sizes vary",
                                 "Gaussian noise σ·L on the sum of clipped gradients; add/remove neighbours, both "
                                 "directions composed",
                                 "k-of-t bounded by compositions of 1-of-⌊t/k⌋ and 1-of-(⌊t/k⌋ + 1); a fractional "
                                 "last epoch counted as a whole one",
                                 "numerical: sums of lognormals on a geometric grid, losses on a grid Δ, tails beyond "
                                 "1e−20 mass truncated; the bracket is rigorous",
                                 "not a bound for shuffled fixed-size batches, nor for Poisson sampling"},
              },
          .nativeKeys = {"steps_per_epoch", "selections", "epochs", "epsilon_upper", "epsilon_lower", "discretisation"},
          .color = 0xff9896,
          .isAnalytic = false,
          .crossMachineTolerance = 1e-6,
      }) {}

Result<std::vector<NativeValue>> RandomAllocationAccountant::native(const Params& params) const {
  DPX_RETURN_IF_ERROR(params.validate());
  const RandomAllocationRunSpec spec = specOf(params);
  return std::vector<NativeValue>{
      {"steps_per_epoch", "steps per epoch t", static_cast<double>(spec.stepsPerEpoch)},
      {"selections", "steps per epoch a record is in, k", static_cast<double>(spec.selections)},
      {"epochs", "epochs E (a fractional last one counted whole)", static_cast<double>(spec.epochs)},
  };
}

Result<EpsilonResult> RandomAllocationAccountant::epsilon(const Params& params, const EpsilonOptions& options) const {
  DPX_ASSIGN_OR_RETURN(const RandomAllocationRunResult r, run(params, options.exact));
  DPX_ASSIGN_OR_RETURN(const double upper, r.run->epsilonUpper(params.delta));
  DPX_ASSIGN_OR_RETURN(const double lower, r.run->epsilonLower(params.delta));
  EpsilonResult e;
  e.epsilon = upper;
  e.delta = params.delta;
  e.bound = BoundKind::kUpper;
  e.epsilonUpper = upper;
  e.epsilonLower = std::min(lower, upper);
  e.native = {
      {"epsilon_upper", "ε, pessimistic discretisation (upper bound)", upper},
      {"epsilon_lower", "ε, optimistic discretisation (lower end of the bracket)", *e.epsilonLower},
      {"discretisation", "loss grid Δ", r.run->interval},
      {"relative_width", "bracket width (ε_upper − ε_lower)/ε_upper", r.achievedWidth},
      {"requested_width", "bracket width asked for (met when relative_width ≤ it)", options.exact.accuracy},
      {"truncation", "tail mass truncated", r.run->tau},
  };
  if (!options.exact.discretisation && r.achievedWidth > options.exact.accuracy) {
    e.caveats.push_back("the bracket is wider than the accuracy asked for (" + formatNumber(r.achievedWidth, 4) +
                        " > " + formatNumber(options.exact.accuracy, 4) + "): " +
                        (r.limited ? std::string("a finer grid would exceed the work limit")
                                   : "the loss grid was refined " + std::to_string(kMaxRefinements) + " times") +
                        "; ε_upper is still an upper bound");
  }
  return e;
}

Result<double> RandomAllocationAccountant::delta(const Params& params, double epsilon,
                                                 const EpsilonOptions& options) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const RandomAllocationRunResult r, run(params, options.exact));
  return r.run->deltaUpper(epsilon);
}

Result<TradeoffCurve> RandomAllocationAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                                           const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  DPX_ASSIGN_OR_RETURN(const RandomAllocationRunResult r, run(params, options.exact));
  const pld::ComposedRun tabulated = r.run->tabulated(pld::Estimate::kPessimistic);
  double top = 1.0;
  while (tabulated.deltaUpper(top) > 1e-12 && top < 1e6) top *= 2.0;
  TradeoffCurve curve;
  curve.typeOne.assign(typeOne.begin(), typeOne.end());
  curve.typeTwo.assign(typeOne.size(), 0.0);
  constexpr int kPoints = 2000;
  for (int i = 0; i <= kPoints; ++i) {
    const double eps = top * std::pow(static_cast<double>(i) / kPoints, 2.0);
    const double d = tabulated.deltaUpper(eps);
    for (std::size_t k = 0; k < typeOne.size(); ++k) {
      curve.typeTwo[k] = std::max(curve.typeTwo[k], epsilonDeltaTradeoff(eps, d, typeOne[k]));
    }
  }
  return curve;
}

}  // namespace dpx::core::accounting
