#include "accounting/curves.h"

#include <tbb/blocked_range.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>

#include "accounting/pld_accountant.h"
#include "accounting/privacy_loss_distribution.h"
#include "accounting/rdp_based_accountant.h"
#include "common/format.h"
#include "common/parallel.h"

namespace dpx::core::accounting {

std::optional<CurveVariable> parseCurveVariable(std::string_view text) {
  if (text == "K") return CurveVariable::kSteps;
  if (text == "epochs") return CurveVariable::kEpochs;
  if (text == "sigma") return CurveVariable::kSigma;
  if (text == "n") return CurveVariable::kN;
  if (text == "m") return CurveVariable::kM;
  if (text == "eta") return CurveVariable::kEta;
  return std::nullopt;
}

std::string_view curveVariableName(CurveVariable variable) {
  switch (variable) {
    case CurveVariable::kSteps:
      return "K";
    case CurveVariable::kEpochs:
      return "epochs";
    case CurveVariable::kSigma:
      return "sigma";
    case CurveVariable::kN:
      return "n";
    case CurveVariable::kM:
      return "m";
    case CurveVariable::kEta:
      return "eta";
  }
  return "K";
}

namespace {

std::optional<Knob> knobOf(CurveVariable variable) {
  switch (variable) {
    case CurveVariable::kSteps:
      return Knob::kK;
    case CurveVariable::kSigma:
      return Knob::kSigma;
    case CurveVariable::kN:
      return Knob::kN;
    case CurveVariable::kM:
      return Knob::kM;
    case CurveVariable::kEta:
      return Knob::kEta;
    case CurveVariable::kEpochs:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<double>> curveAxis(const CurveSpec& spec) {
  if (spec.points < 2 || spec.points > kMaxCurvePoints) {
    return Status::invalidArgument("points = " + std::to_string(spec.points) + " is out of range: must be in [2, " +
                                   std::to_string(kMaxCurvePoints) + "]");
  }
  if (!std::isfinite(spec.from) || !std::isfinite(spec.to) || !(spec.from < spec.to)) {
    return Status::invalidArgument("--from " + formatNumber(spec.from) + " --to " + formatNumber(spec.to) +
                                   ": the range must be finite with from < to");
  }
  if (std::optional<Knob> knob = knobOf(spec.variable)) {
    for (double end : {spec.from, spec.to}) {
      if (Status s = validateKnob(*knob, std::round(end) == end || !knobInfo(*knob).integer ? end : std::round(end));
          !s.isOk()) {
        return Status::invalidArgument("curve range: " + s.message());
      }
    }
  } else if (!(spec.from > 0.0)) {
    return Status::invalidArgument("--from " + formatNumber(spec.from) + ": epochs must be > 0");
  }
  if (spec.logSpacing && !(spec.from > 0.0)) return Status::invalidArgument("log spacing needs from > 0");
  const bool integer = spec.variable == CurveVariable::kSteps || spec.variable == CurveVariable::kN ||
                       spec.variable == CurveVariable::kM;
  std::vector<double> xs;
  xs.reserve(static_cast<std::size_t>(spec.points));
  for (int i = 0; i < spec.points; ++i) {
    const double t = static_cast<double>(i) / (spec.points - 1);
    double x = spec.logSpacing ? std::exp(std::log(spec.from) + t * (std::log(spec.to) - std::log(spec.from)))
                               : spec.from + t * (spec.to - spec.from);
    if (i == 0) x = spec.from;
    if (i == spec.points - 1) x = spec.to;
    if (integer) x = std::round(x);
    xs.push_back(x);
  }
  return xs;
}

Result<Params> paramsAt(const Params& base, CurveVariable variable, double x) {
  Params p = base;
  if (variable == CurveVariable::kEpochs) {
    DPX_ASSIGN_OR_RETURN(const std::int64_t steps, stepsForEpochs(x, p.n, p.m));
    p.K = steps;
    return p;
  }
  setKnobValue(p, *knobOf(variable), x);
  return p;
}

namespace {

// Relative cost of composing `steps` steps: the length of the composed loss window, as in
// PldAccountant's first guess at Δ (mean μ²/2 plus 14 standard deviations μ of the total loss,
// and a few single-step spreads for the per-step grids). Only shares out the progress bar, on
// which the largest K of a log-spaced curve dominate.
double compositionCost(const Params& p, std::int64_t steps) {
  const double stepSpread = p.q() * std::sqrt(std::expm1(std::min(1.0 / (p.sigma * p.sigma), 700.0)));
  const double mu = stepSpread * std::sqrt(static_cast<double>(steps));
  return mu * mu / 2.0 + 14.0 * mu + 20.0 * stepSpread + 1e-12;
}

// Progress of work shared by several threads: each part reports its own fraction in [0, 1]; the
// sink sees the cost-weighted total, never decreasing.
class SharedProgress {
 public:
  SharedProgress(std::function<void(double)> sink, std::vector<double> weights)
      : m_sink(std::move(sink)), m_weights(std::move(weights)), m_fraction(m_weights.size(), 0.0) {
    for (double w : m_weights) m_total += w;
  }
  std::function<void(double)> part(std::size_t j) {
    if (!m_sink) return {};
    return [this, j](double f) {
      std::lock_guard lock(m_mutex);
      m_fraction[j] = std::max(m_fraction[j], std::clamp(f, 0.0, 1.0));
      double done = 0.0;
      for (std::size_t i = 0; i < m_weights.size(); ++i) done += m_weights[i] * m_fraction[i];
      const double total = m_total > 0.0 ? done / m_total : 0.0;
      if (total > m_reported) {
        m_reported = total;
        m_sink(total);
      }
    };
  }

 private:
  std::function<void(double)> m_sink;
  std::vector<double> m_weights;
  std::vector<double> m_fraction;
  double m_total = 0.0;
  double m_reported = 0.0;
  std::mutex m_mutex;
};

// Both ends of a composed run's ε bracket at δ, into `point`.
void readBracket(const pld::ComposedRun& run, double delta, PldCurvePoint& point) {
  const std::string where = "K = " + std::to_string(point.steps);
  Result<double> upper = run.epsilonUpper(delta);
  if (!upper) {
    point.error = upper.status().withContext(where);
    return;
  }
  point.epsilonUpper = *upper;
  Result<double> lower = run.epsilonLower(delta);
  if (!lower) {
    point.error = lower.status().withContext(where + ", optimistic end");
    return;
  }
  // The optimistic composition is a lower bound on the true ε, which the pessimistic one bounds
  // from above; a rounding-level inversion is clipped so the bracket reads lower ≤ upper.
  point.epsilonLower = std::min(*lower, *upper);
}

// The options are checked once, not per point: a bad Δ or accuracy is the caller's error.
Status checkPldCurveRequest(std::span<const std::int64_t> steps, const ExactOptions& options) {
  if (steps.empty()) return Status::invalidArgument("a pld curve needs at least one K");
  if (const std::optional<double>& d = options.discretisation; d && !(*d > 0.0 && *d <= 1.0)) {
    return Status::invalidArgument("discretisation = " + formatNumber(*d) +
                                   " is out of range: the loss grid Δ must be in (0, 1]");
  }
  if (!(options.accuracy > 0.0 && options.accuracy <= 0.5)) {
    return Status::invalidArgument("accuracy = " + formatNumber(options.accuracy) +
                                   " is out of range: the relative bracket width must be in (0, 0.5]");
  }
  return Status::ok();
}

// One point per K in `curve`, with the error of every K whose parameters are invalid; returns the
// valid K, sorted and distinct.
Result<std::vector<std::int64_t>> distinctValidSteps(const Params& base, std::span<const std::int64_t> steps,
                                                     PldCurve& curve) {
  curve.points.resize(steps.size());
  std::vector<std::int64_t> distinct;
  Status firstInvalid;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    PldCurvePoint& point = curve.points[i];
    point.steps = steps[i];
    Params p = base;
    p.K = steps[i];
    if (Status valid = p.validate(); !valid.isOk()) {
      point.error = valid;
      if (firstInvalid.isOk()) firstInvalid = valid;
      continue;
    }
    distinct.push_back(steps[i]);
  }
  // No valid K means the other knobs are invalid (or every K is): nothing can be chosen.
  if (distinct.empty()) return firstInvalid;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

// The largest K goes through PldAccountant's run (cached, so `dpx epsilon` or the GUI's table at
// that K shares it): it sets the automatic Δ of `curve`, and its bracket is that point's.
Status composeLargest(const Params& base, const ExactOptions& options, std::function<void(double)> progress,
                      PldCurve& curve, PldCurvePoint& point) {
  const bool automatic = !options.discretisation.has_value();
  Params top = base;
  top.K = point.steps;
  ExactOptions first = options;
  first.progress = std::move(progress);
  Result<PldRunResult> run = pldRun(top, first);
  if (!run) {
    if (run.status().code() == StatusCode::kCancelled || automatic) return run.status();
    point.error = run.status().withContext("K = " + std::to_string(point.steps));  // the fixed Δ is too fine here
    curve.discretisation = *options.discretisation;
    return Status::ok();
  }
  curve.discretisation = run->run->interval;
  if (automatic) {
    curve.automatic = true;
    curve.gridSteps = point.steps;
    curve.requestedWidth = options.accuracy;
    curve.achievedWidth = run->achievedWidth;
  }
  readBracket(*run->run, base.delta, point);
  return Status::ok();
}

// One more point on the loss grid `interval`; false when cancelled.
bool composePoint(const Params& base, const ExactOptions& options, double interval,
                  std::function<void(double)> progress, PldCurvePoint& point) {
  const pld::GaussianSegment segment{base.q(), base.sigma, point.steps};
  ExactOptions sub;
  sub.cancel = options.cancel;
  sub.progress = std::move(progress);
  Result<pld::ComposedRun> run = pldComposeSegments(std::span<const pld::GaussianSegment>(&segment, 1), interval, sub);
  if (!run && run.status().code() == StatusCode::kCancelled) return false;
  if (!run) {
    point.error = run.status().withContext("K = " + std::to_string(point.steps));
  } else {
    readBracket(*run, base.delta, point);
  }
  return true;
}

// The points but the last (the largest K) are independent compositions on one grid. The points
// of a power of 10 of K share their discretised steps (pld::stepTruncation): each decade's points
// are composed one after another (the first discretises, the others find its steps), the decades
// side by side on both cores, the largest first so the last to start is a short one. False when
// cancelled.
bool composeOthers(const Params& base, const ExactOptions& options, double interval, SharedProgress& progress,
                   std::vector<PldCurvePoint>& computed) {
  std::vector<std::vector<std::size_t>> decades;  // point indices, largest K first
  double decadeTruncation = 0.0;
  for (std::size_t j = computed.size() - 1; j-- > 0;) {
    const double truncation = pld::stepTruncation(PldAccountant::kTruncation, computed[j].steps);
    if (decades.empty() || truncation != decadeTruncation) decades.emplace_back();
    decadeTruncation = truncation;
    decades.back().push_back(j);
  }
  std::atomic<bool> cancelled{false};
  parallelFor(tbb::blocked_range<std::size_t>(0, decades.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t d = r.begin(); d != r.end(); ++d) {
      for (std::size_t j : decades[d]) {
        if (cancelled.load() || (options.cancel && options.cancel->load(std::memory_order_relaxed))) {
          cancelled = true;
          return;
        }
        if (!composePoint(base, options, interval, progress.part(j), computed[j])) {
          cancelled = true;
          return;
        }
      }
    }
  });
  return !cancelled.load();
}

}  // namespace

Status PldCurve::firstError() const {
  for (const PldCurvePoint& p : points) {
    if (!p.error.isOk()) return p.error;
  }
  return Status::ok();
}

Result<PldCurve> pldEpsilonCurve(const Params& base, std::span<const std::int64_t> steps, const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(checkPldCurveRequest(steps, options));
  PldCurve curve;
  DPX_ASSIGN_OR_RETURN(const std::vector<std::int64_t> distinct, distinctValidSteps(base, steps, curve));
  // Progress: the largest K first (choosing Δ there, a coarse look and a few refinements, counts
  // as three compositions), then the others, each by its cost.
  const bool automatic = !options.discretisation.has_value();
  std::vector<double> cost(distinct.size());
  for (std::size_t j = 0; j < distinct.size(); ++j) cost[j] = compositionCost(base, distinct[j]);
  cost.back() *= automatic ? 3.0 : 1.0;
  SharedProgress progress(options.progress, cost);

  std::vector<PldCurvePoint> computed(distinct.size());
  for (std::size_t j = 0; j < distinct.size(); ++j) computed[j].steps = distinct[j];
  DPX_RETURN_IF_ERROR(composeLargest(base, options, progress.part(distinct.size() - 1), curve, computed.back()));
  if (!composeOthers(base, options, curve.discretisation, progress, computed)) {
    return Status::cancelled("the pld curve was cancelled");
  }
  for (PldCurvePoint& point : curve.points) {
    if (!point.error.isOk()) continue;  // an invalid K, reported above
    point = computed[static_cast<std::size_t>(std::lower_bound(distinct.begin(), distinct.end(), point.steps) -
                                              distinct.begin())];
  }
  if (options.progress) options.progress(1.0);
  return curve;
}

namespace {

// One accountant's curve as its points come in: ε where there is one, else the reason.
class CurveBuilder {
 public:
  CurveBuilder(const Accountant& accountant, const Params& base, CurveVariable variable, std::span<const double> xs)
      : m_base(base), m_variable(variable), m_xs(xs), m_errors(xs.size()) {
    m_curve.accountant = std::string(accountant.id());
    m_curve.epsilon.assign(xs.size(), std::nullopt);
  }

  // Safe from several threads for different i.
  void record(std::size_t i, const Result<EpsilonResult>& e) {
    if (e) {
      m_curve.epsilon[i] = e->epsilon;
    } else {
      m_errors[i] = e.status().withContext(std::string(curveVariableName(m_variable)) + " = " + formatNumber(m_xs[i]));
    }
  }

  // The parameter sets of the points that are valid, and where they sit in xs; the others are
  // recorded as errors.
  std::pair<std::vector<Params>, std::vector<std::size_t>> validPoints() {
    std::pair<std::vector<Params>, std::vector<std::size_t>> out;
    for (std::size_t i = 0; i < m_xs.size(); ++i) {
      Result<Params> p = paramsAt(m_base, m_variable, m_xs[i]);
      if (!p) {
        record(i, p.status());
        continue;
      }
      out.first.push_back(*p);
      out.second.push_back(i);
    }
    return out;
  }

  void addExactAlongSteps(const EpsilonOptions& options);
  void addRdpAlongSteps(const RdpBasedAccountant& accountant, const EpsilonOptions& options);
  void addPointByPoint(const Accountant& accountant, bool alongSteps, const EpsilonOptions& options);

  AccountantCurve finish() {
    for (const Status& s : m_errors) {
      if (!s.isOk()) {
        m_curve.firstError = s;
        break;
      }
    }
    return std::move(m_curve);
  }

 private:
  const Params& m_base;
  CurveVariable m_variable;
  std::span<const double> m_xs;
  AccountantCurve m_curve;
  std::vector<Status> m_errors;
};

// The exact accountant: the whole curve on one loss grid (monotone in K), the same function the
// GUI draws its pld bracket with.
void CurveBuilder::addExactAlongSteps(const EpsilonOptions& options) {
  m_curve.epsilonLower.assign(m_xs.size(), std::nullopt);
  const auto [points, where] = validPoints();
  std::vector<std::int64_t> steps;
  for (const Params& p : points) steps.push_back(p.K);
  if (steps.empty()) return;
  // Point errors name their K already; along epochs the epoch count is added in front.
  auto context = [&](std::size_t i, const Status& s) {
    return m_variable == CurveVariable::kEpochs ? s.withContext("epochs = " + formatNumber(m_xs[i])) : s;
  };
  Result<PldCurve> exact = pldEpsilonCurve(m_base, steps, options.exact);
  for (std::size_t j = 0; j < where.size(); ++j) {
    const std::size_t i = where[j];
    if (!exact) {
      m_errors[i] = context(i, exact.status());
      continue;
    }
    const PldCurvePoint& point = exact->points[j];
    m_curve.epsilon[i] = point.epsilonUpper;
    m_curve.epsilonLower[i] = point.epsilonLower;
    // A point with an upper bound has an ε; only a missing one is a gap with a reason.
    if (!point.epsilonUpper) m_errors[i] = context(i, point.error);
  }
  if (exact) m_curve.discretisation = exact->discretisation;
}

// Total RDP is linear in K: one per-step RDP profile serves every point.
void CurveBuilder::addRdpAlongSteps(const RdpBasedAccountant& accountant, const EpsilonOptions& options) {
  const auto [points, where] = validPoints();
  const std::vector<Result<EpsilonResult>> values = accountant.epsilonAlongSteps(points, options);
  for (std::size_t j = 0; j < values.size(); ++j) record(where[j], values[j]);
}

// Points are independent. Along K the memoised per-step RDP makes a point a few µs, less than a
// task costs, unless the accountant's ε is a root search of its own (cheapPerPoint false); along
// σ, n, m or η every point recomputes it (up to a millisecond). Neighbouring points have
// neighbouring optimal orders: each point hints the next one of its block, which lets the search
// over orders prune most of the grid (never changes a value).
void CurveBuilder::addPointByPoint(const Accountant& accountant, bool alongSteps, const EpsilonOptions& options) {
  const std::size_t grain = alongSteps && accountant.cheapPerPoint() ? m_xs.size() + 1 : alongSteps ? 4 : 8;
  parallelFor(tbb::blocked_range<std::size_t>(0, m_xs.size(), grain), [&](const tbb::blocked_range<std::size_t>& r) {
    EpsilonOptions hinted = options;
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      Result<Params> p = paramsAt(m_base, m_variable, m_xs[i]);
      Result<EpsilonResult> e = p ? accountant.epsilon(*p, hinted) : Result<EpsilonResult>(p.status());
      if (e && e->alpha) hinted.alphaHint = e->alpha;
      record(i, e);
    }
  });
}

}  // namespace

AccountantCurve epsilonCurve(const Accountant& accountant, const Params& base, CurveVariable variable,
                             std::span<const double> xs, const EpsilonOptions& options) {
  CurveBuilder builder(accountant, base, variable, xs);
  const bool alongSteps = variable == CurveVariable::kSteps || variable == CurveVariable::kEpochs;
  const auto* rdpBased = dynamic_cast<const RdpBasedAccountant*>(&accountant);
  if (alongSteps && dynamic_cast<const PldAccountant*>(&accountant) != nullptr) {
    builder.addExactAlongSteps(options);
  } else if (alongSteps && rdpBased != nullptr && rdpBased->rdpLinearInSteps()) {
    builder.addRdpAlongSteps(*rdpBased, options);
  } else {
    builder.addPointByPoint(accountant, alongSteps, options);
  }
  return builder.finish();
}

}  // namespace dpx::core::accounting

namespace dpx::core::accounting {

std::vector<AccountantCurve> epsilonCurves(std::span<const Accountant* const> accountants, const Params& base,
                                           CurveVariable variable, std::span<const double> xs,
                                           const EpsilonOptions& options) {
  std::vector<AccountantCurve> curves(accountants.size());
  parallelFor(std::size_t{0}, accountants.size(),
              [&](std::size_t i) { curves[i] = epsilonCurve(*accountants[i], base, variable, xs, options); });
  return curves;
}

}  // namespace dpx::core::accounting
