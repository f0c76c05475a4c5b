#include "accounting/pld_accountant.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "accounting/rdp_accountant.h"
#include "accounting/tradeoff.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// Largest composed window we allow (points): 2²³ doubles ≈ 64 MB per array.
constexpr double kMaxWindowPoints = 8.0 * 1024 * 1024;
constexpr int kMaxRefinements = 6;  // of the automatic grid

pld::ComputeControl controlFor(const ExactOptions& o, double from, double to) {
  pld::ComputeControl c;
  c.cancel = o.cancel;
  if (o.progress) c.progress = [f = o.progress, from, to](double x) { f(from + (to - from) * x); };
  return c;
}

struct CacheKey {
  std::vector<std::tuple<double, double, std::int64_t>> segments;  // (q, σ, K) of each segment
  double discretisation;                                           // 0: automatic
  double accuracy;
  double delta;    // the δ the automatic choice targets
  double epsilon;  // or the ε whose δ bracket it targets (NaN: the δ's ε bracket)
  bool operator==(const CacheKey& o) const {
    const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    return segments == o.segments && discretisation == o.discretisation && accuracy == o.accuracy && delta == o.delta &&
           same(epsilon, o.epsilon);
  }
};

struct Cache {
  std::mutex mutex;
  std::list<std::pair<CacheKey, PldRunResult>> entries;  // most recent first
};

Cache& cache() {
  static Cache c;
  return c;
}

// Loss grid for a first, cheap look: fine enough to resolve one step's loss (its std is about
// q√(e^{1/σ²} − 1)) and coarse enough that the composed window has a few thousand points. For
// several segments, the finest step and the spread of the whole composition (whose variance is
// the sum of the segments'); one segment is the knob run's grid, to the last bit.
double initialInterval(std::span<const pld::GaussianSegment> segments) {
  auto spreadOf = [](const pld::GaussianSegment& s) {
    return s.q * std::sqrt(std::expm1(std::min(1.0 / (s.sigma * s.sigma), 700.0)));
  };
  double finest = INFINITY;
  double widest = 0.0;
  double variance = 0.0;
  for (const pld::GaussianSegment& s : segments) {
    const double spread = spreadOf(s);
    finest = std::min(finest, spread);
    widest = std::max(widest, spread);
    variance += spread * spread * static_cast<double>(s.count);
  }
  const double mu = segments.size() == 1
                        ? spreadOf(segments.front()) * std::sqrt(static_cast<double>(segments.front().count))
                        : std::sqrt(variance);
  const double window = mu * mu / 2.0 + 14.0 * mu + 20.0 * widest;
  return std::clamp(std::min(window / 4096.0, finest / 4.0), 1e-6, 0.5);
}

double relativeDeltaWidth(const pld::ComposedRun& run, double epsilon) {
  const double up = run.deltaUpper(epsilon);
  if (up <= PldAccountant::kDeltaRoundOff) return 0.0;  // the bracket cannot narrow there
  return std::max(0.0, (up - std::min(up, run.deltaLower(epsilon))) / up);
}

double relativeWidth(const pld::ComposedRun& run, double delta) {
  Result<double> up = run.epsilonUpper(delta);
  Result<double> lo = run.epsilonLower(delta);
  if (!up || !lo) return INFINITY;
  if (*up <= 1e-12) return 0.0;
  // On a very fine grid the FFT's round-off (~1e−12 in δ) can put the optimistic end a hair
  // above the pessimistic one; the bracket reported is [min, upper], of width 0 then.
  return std::max(0.0, (*up - *lo) / *up);
}

}  // namespace

double bracketWidth(const pld::ComposedRun& run, double delta, const ExactOptions& options) {
  return options.deltaAtEpsilon ? relativeDeltaWidth(run, *options.deltaAtEpsilon) : relativeWidth(run, delta);
}

namespace {

// A run computed before with the same key (the most recent first), moved to the front.
std::optional<PldRunResult> findCached(const CacheKey& key, const ExactOptions& options) {
  std::lock_guard lock(cache().mutex);
  auto& entries = cache().entries;
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (it->first == key) {
      entries.splice(entries.begin(), entries, it);
      if (options.progress) options.progress(1.0);
      return entries.front().second;
    }
  }
  return std::nullopt;
}

void storeInCache(const CacheKey& key, const PldRunResult& result) {
  std::lock_guard lock(cache().mutex);
  auto& entries = cache().entries;
  entries.emplace_front(key, result);
  while (entries.size() > 3) entries.pop_back();
}

// The run on the loss grid `interval`, its progress mapped to [from, to].
Result<pld::ComposedRun> composeAt(std::span<const pld::GaussianSegment> segments, double interval,
                                   const ExactOptions& options, double from, double to) {
  return pld::composeRun(segments, interval, PldAccountant::kTruncation, true, controlFor(options, from, to));
}

// The run on the caller's grid.
Result<pld::ComposedRun> fixedGridRun(std::span<const pld::GaussianSegment> segments, double delta,
                                      const ExactOptions& options, PldRunResult& result) {
  DPX_ASSIGN_OR_RETURN(pld::ComposedRun run, composeAt(segments, *options.discretisation, options, 0.0, 1.0));
  result.achievedWidth = bracketWidth(run, delta, options);
  return run;
}

// The grid chosen for the requested width. Widths shrink about as Δ²: from a coarse run, aim
// below the target, then halve until met.
Result<pld::ComposedRun> automaticGridRun(std::span<const pld::GaussianSegment> segments, double delta,
                                          const ExactOptions& options, PldRunResult& result) {
  double interval = initialInterval(segments);
  DPX_ASSIGN_OR_RETURN(pld::ComposedRun run, composeAt(segments, interval, options, 0.0, 0.25));
  const auto widthOf = [&](const pld::ComposedRun& r) { return bracketWidth(r, delta, options); };
  double width = widthOf(run);
  double progress = 0.25;
  while (width > options.accuracy && result.refinements < kMaxRefinements) {
    const double ratio = std::isfinite(width) ? std::sqrt(options.accuracy / width) * 0.8 : 0.25;
    const double next = interval * std::clamp(ratio, 0.05, 0.5);
    if (static_cast<double>(run.info.windowPoints) * interval / next > kMaxWindowPoints) break;
    interval = next;
    const double span = (1.0 - progress) / 2.0;
    Result<pld::ComposedRun> finer = composeAt(segments, interval, options, progress, progress + span);
    progress += span;
    // A finer grid that would not fit in memory leaves the coarser bracket standing: it is
    // still a valid bracket, and its width is reported next to the requested one.
    if (!finer && finer.status().code() == StatusCode::kCancelled) return finer.status();
    if (!finer) break;
    run = std::move(*finer);
    width = widthOf(run);
    ++result.refinements;
  }
  result.achievedWidth = width;
  return run;
}

}  // namespace

Result<pld::ComposedRun> pldComposeSegments(std::span<const pld::GaussianSegment> segments, double interval,
                                            const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(validateExactOptions(options));
  return pld::composeRun(segments, interval, PldAccountant::kTruncation, true, controlFor(options, 0.0, 1.0));
}

Status validateExactOptions(const ExactOptions& o) {
  if (o.discretisation &&
      (!(*o.discretisation > 0.0) || !std::isfinite(*o.discretisation) || *o.discretisation > 1.0)) {
    return Status::invalidArgument("discretisation = " + formatNumber(*o.discretisation) +
                                   " is out of range: the loss grid Δ must be in (0, 1]");
  }
  if (!(o.accuracy > 0.0) || !(o.accuracy <= 0.5)) {
    return Status::invalidArgument("accuracy = " + formatNumber(o.accuracy) +
                                   " is out of range: the relative bracket width must be in (0, 0.5]");
  }
  return Status::ok();
}

Result<PldRunResult> pldRun(const Params& p, const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(p.validate());
  const pld::GaussianSegment segment{p.q(), p.sigma, p.K};
  return pldRunSegments(std::span<const pld::GaussianSegment>(&segment, 1), p.delta, options);
}

Result<PldRunResult> pldRunSegments(std::span<const pld::GaussianSegment> segments, double delta,
                                    const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(validateExactOptions(options));
  if (segments.empty()) return Status::invalidArgument("a run needs at least one segment");
  if (!(delta > 0.0 && delta < 1.0)) {
    return Status::invalidArgument("delta = " + formatNumber(delta) + " is out of range: δ must be in (0, 1)");
  }
  CacheKey key{{},
               options.discretisation.value_or(0.0),
               options.accuracy,
               options.discretisation || options.deltaAtEpsilon ? 0.0 : delta,
               options.discretisation || !options.deltaAtEpsilon ? NAN : *options.deltaAtEpsilon};
  for (const pld::GaussianSegment& s : segments) key.segments.emplace_back(s.q, s.sigma, s.count);
  if (std::optional<PldRunResult> cached = findCached(key, options)) return *std::move(cached);
  PldRunResult result;
  DPX_ASSIGN_OR_RETURN(pld::ComposedRun run, options.discretisation
                                                 ? fixedGridRun(segments, delta, options, result)
                                                 : automaticGridRun(segments, delta, options, result));
  result.run = std::make_shared<const pld::ComposedRun>(std::move(run));
  if (options.progress) options.progress(1.0);
  storeInCache(key, result);
  return result;
}

Result<EpsilonResult> pldEpsilonOf(const PldRunResult& r, double delta, const ExactOptions& options) {
  DPX_ASSIGN_OR_RETURN(const double upper, r.run->epsilonUpper(delta));
  DPX_ASSIGN_OR_RETURN(const double lower, r.run->epsilonLower(delta));
  EpsilonResult e;
  e.epsilon = upper;
  e.delta = delta;
  e.bound = BoundKind::kUpper;
  e.epsilonUpper = upper;
  e.epsilonLower = std::min(lower, upper);
  e.native = {
      {"epsilon_upper", "ε, pessimistic discretisation (upper bound)", upper},
      {"epsilon_lower", "ε, optimistic discretisation (lower bound)", *e.epsilonLower},
      {"discretisation", "loss grid Δ", r.run->interval},
      {"relative_width", "bracket width (ε_upper − ε_lower)/ε_upper", r.achievedWidth},
      {"requested_width", "bracket width asked for (met when relative_width ≤ it)", options.accuracy},
      {"truncation", "tail mass truncated", r.run->tau},
      {"window_points", "composed loss grid points", static_cast<double>(r.run->info.windowPoints)},
      {"fft_size", "FFT length", static_cast<double>(r.run->info.fftSize)},
  };
  if (!options.discretisation && r.achievedWidth > options.accuracy) {
    e.caveats.push_back("the bracket is wider than the accuracy asked for (" + formatNumber(r.achievedWidth, 4) +
                        " > " + formatNumber(options.accuracy, 4) + "): " +
                        (r.workLimited ? std::string("a finer grid would exceed the work limit")
                         : r.refinements >= kMaxRefinements
                             ? "the loss grid was refined " + std::to_string(kMaxRefinements) + " times"
                             : "a finer loss grid would exceed the composition's memory limit") +
                        "; ε_upper is still an upper bound");
  }
  return e;
}

PldAccountant::PldAccountant()
    : Accountant({
          .id = "pld",
          .name = "Exact composition (privacy loss distribution)",
          .citation = "Koskela, Jälkö & Honkela 2020; Meiser & Mohammadi 2018; Doroshenko et al. 2022 (connect the "
                      "dots); Google dp_accounting PLD",
          .assumptions = dpSgdAssumptions({"both directions of add/remove composed",
                                           "numerical: losses on a grid Δ, tails beyond 1e−20 mass truncated; the "
                                           "bracket is rigorous"}),
          .nativeKeys = {"epsilon_upper", "epsilon_lower", "discretisation"},
          .color = 0x202020,
          .isAnalytic = false,
          .crossMachineTolerance = 1e-6,
      }) {}

Result<std::vector<NativeValue>> PldAccountant::native(const Params& params) const {
  return subsampledGaussianNative(params);
}

Result<EpsilonResult> PldAccountant::epsilon(const Params& params, const EpsilonOptions& options) const {
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, options.exact));
  return pldEpsilonOf(r, params.delta, options.exact);
}

Result<double> PldAccountant::delta(const Params& params, double epsilon, const EpsilonOptions& options) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const auto bracket, deltaBracket(params, epsilon, options));
  return bracket.first;
}

Result<std::pair<double, double>> PldAccountant::deltaBracket(const Params& params, double epsilon,
                                                              const EpsilonOptions& options) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, options.exact));
  const double upper = deltaUpperWithFloor(*r.run, epsilon);
  return std::pair{upper, upper <= kDeltaRoundOff ? 0.0 : std::min(upper, r.run->deltaLower(epsilon))};
}

namespace {

// The mechanism's trade-off is the envelope of f_{ε,δ(ε)} over all ε ≥ 0 (Dong, Roth & Su 2019,
// Prop. 2.12). ε runs over a dense grid up to where the pessimistic δ < 1e−12.
Result<TradeoffCurve> profileEnvelope(const pld::ComposedRun& composed, bool pessimistic,
                                      std::span<const double> typeOne) {
  // δ at two thousand losses: from the tables.
  const pld::ComposedRun run = pessimistic ? composed.tabulated(pld::Estimate::kPessimistic) : composed.tabulated();
  double top = 1.0;
  while (run.deltaUpper(top) > 1e-12 && top < 1e6) top *= 2.0;
  TradeoffCurve curve;
  curve.typeOne.assign(typeOne.begin(), typeOne.end());
  curve.typeTwo.assign(typeOne.size(), 0.0);
  const int points = 2000;
  for (int i = 0; i <= points; ++i) {
    const double eps = top * std::pow(static_cast<double>(i) / points, 2.0);
    // Where both ends sit in the compositions' round-off (δ ≲ 1e−12 after 10⁴ steps) the
    // optimistic δ can come out above the pessimistic one; a lower bound on δ is capped by the
    // upper, as the ε bracket's lower end is.
    const double d = pessimistic ? run.deltaUpper(eps) : std::min(run.deltaLower(eps), run.deltaUpper(eps));
    for (std::size_t k = 0; k < typeOne.size(); ++k) {
      curve.typeTwo[k] = std::max(curve.typeTwo[k], epsilonDeltaTradeoff(eps, d, typeOne[k]));
    }
  }
  return curve;
}

}  // namespace

double deltaUpperWithFloor(const pld::ComposedRun& run, double epsilon) {
  return std::max(run.deltaUpper(epsilon), run.tau);
}

Result<TradeoffCurve> pessimisticTradeoffOf(const pld::ComposedRun& run, std::span<const double> typeOne) {
  return profileEnvelope(run, true, typeOne);
}

Result<TradeoffCurve> PldAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                              const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, options.exact));
  // δ(ε) here is the pessimistic profile, so the curve is a lower bound on the true one
  // (conservative).
  return profileEnvelope(*r.run, true, typeOne);
}

namespace {

Status cancelledTradeoff() { return Status::cancelled("the exact trade-off computation was cancelled"); }

bool isCancelled(const ExactOptions& o) { return o.cancel && o.cancel->load(std::memory_order_relaxed); }

// The four curves of one composed run.
Result<DirectionalTradeoffs> directionsOf(const pld::ComposedRun& composed, std::span<const double> typeOne) {
  auto curve = [&](const pld::DiscretePld& forward, const pld::DiscretePld& reverse) -> Result<TradeoffCurve> {
    DPX_ASSIGN_OR_RETURN(std::vector<double> y, pld::tradeoffOf(forward, reverse, typeOne));
    return TradeoffCurve{std::vector<double>(typeOne.begin(), typeOne.end()), std::move(y)};
  };
  const pld::ComposedRun run = composed.tabulated();  // side by side: the curves read δ at every grid loss
  DirectionalTradeoffs d;
  d.discretisation = run.interval;
  DPX_ASSIGN_OR_RETURN(d.addPessimistic, curve(run.add[0], run.remove[0]));
  DPX_ASSIGN_OR_RETURN(d.addOptimistic, curve(run.add[1], run.remove[1]));
  DPX_ASSIGN_OR_RETURN(d.removePessimistic, curve(run.remove[0], run.add[0]));
  DPX_ASSIGN_OR_RETURN(d.removeOptimistic, curve(run.remove[1], run.add[1]));
  return d;
}

void measureWidth(DirectionalTradeoffs& d) {
  d.bracketWidth = 0.0;
  for (std::size_t i = 0; i < d.addPessimistic.typeTwo.size(); ++i) {
    d.bracketWidth = std::max({d.bracketWidth, d.addOptimistic.typeTwo[i] - d.addPessimistic.typeTwo[i],
                               d.removeOptimistic.typeTwo[i] - d.removePessimistic.typeTwo[i]});
  }
}

// Pointwise: the larger lower bound and the smaller upper bound.
void intersect(DirectionalTradeoffs& into, const DirectionalTradeoffs& other) {
  for (std::size_t i = 0; i < into.addPessimistic.typeTwo.size(); ++i) {
    auto& ap = into.addPessimistic.typeTwo[i];
    auto& ao = into.addOptimistic.typeTwo[i];
    auto& rp = into.removePessimistic.typeTwo[i];
    auto& ro = into.removeOptimistic.typeTwo[i];
    ap = std::max(ap, other.addPessimistic.typeTwo[i]);
    ao = std::min(ao, other.addOptimistic.typeTwo[i]);
    rp = std::max(rp, other.removePessimistic.typeTwo[i]);
    ro = std::min(ro, other.removeOptimistic.typeTwo[i]);
  }
  into.discretisation = std::min(into.discretisation, other.discretisation);
  measureWidth(into);
}

// The two ends of a run in the right order at ε = 0 (where δ is largest and a mass the
// pessimistic composition lost shows most): at K = 10⁶ and a grid finer than the automatic one
// the per-step connect-the-dots masses (second differences of δ) can sum below 1 by ~1e−9,
// which K steps compound (σ = 1.1, q = 256/60000, Δ = 1.8e−4: total 0.99903, δ_add(0) 5e−5
// below the optimistic end). Such a refinement is not used.
bool endsOrdered(const pld::ComposedRun& run) {
  return run.add[0].delta(0.0) >= run.add[1].delta(0.0) - 1e-12 &&
         run.remove[0].delta(0.0) >= run.remove[1].delta(0.0) - 1e-12;
}

}  // namespace

Result<DirectionalTradeoffs> PldAccountant::directionalTradeoffs(const Params& params, std::span<const double> typeOne,
                                                                 const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  DPX_ASSIGN_OR_RETURN(const PldRunResult first, pldRun(params, options.exact));
  if (isCancelled(options.exact)) return cancelledTradeoff();
  DPX_ASSIGN_OR_RETURN(DirectionalTradeoffs d, directionsOf(*first.run, typeOne));
  measureWidth(d);
  // Ratios that do not divide each other, so −log(1 − q) falls differently on each grid.
  for (double factor : {0.5, 0.3}) {
    if (d.bracketWidth <= kTradeoffBracket) break;
    ExactOptions finer = options.exact;
    finer.discretisation = first.run->interval * factor;
    Result<PldRunResult> run = pldRun(params, finer);
    if (!run && run.status().code() == StatusCode::kCancelled) return run.status();
    if (!run) break;  // the finer window would not fit: the bracket so far stands
    if (!endsOrdered(*run->run)) continue;
    DPX_ASSIGN_OR_RETURN(const DirectionalTradeoffs refined, directionsOf(*run->run, typeOne));
    intersect(d, refined);
  }
  if (isCancelled(options.exact)) return cancelledTradeoff();
  return d;
}

Result<TradeoffCurve> PldAccountant::tradeoffOptimistic(const Params& params, std::span<const double> typeOne,
                                                        const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, options.exact));
  return profileEnvelope(*r.run, false, typeOne);
}

}  // namespace dpx::core::accounting
