#include "accounting/curves.h"

#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "accounting/rdp_based_accountant.h"
#include "common/format.h"

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
    case CurveVariable::kSteps: return "K";
    case CurveVariable::kEpochs: return "epochs";
    case CurveVariable::kSigma: return "sigma";
    case CurveVariable::kN: return "n";
    case CurveVariable::kM: return "m";
    case CurveVariable::kEta: return "eta";
  }
  return "K";
}

namespace {

std::optional<Knob> knobOf(CurveVariable variable) {
  switch (variable) {
    case CurveVariable::kSteps: return Knob::kK;
    case CurveVariable::kSigma: return Knob::kSigma;
    case CurveVariable::kN: return Knob::kN;
    case CurveVariable::kM: return Knob::kM;
    case CurveVariable::kEta: return Knob::kEta;
    case CurveVariable::kEpochs: return std::nullopt;
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
    Result<std::int64_t> steps = stepsForEpochs(x, p.n, p.m);
    if (!steps) return steps.status();
    p.K = *steps;
    return p;
  }
  setKnobValue(p, *knobOf(variable), x);
  return p;
}

AccountantCurve epsilonCurve(const Accountant& accountant, const Params& base, CurveVariable variable,
                             std::span<const double> xs, const EpsilonOptions& options) {
  AccountantCurve curve;
  curve.accountant = std::string(accountant.id());
  curve.epsilon.assign(xs.size(), std::nullopt);
  std::vector<Status> errors(xs.size());
  // Points are independent. Along K the memoised per-step RDP makes a point a few µs, less
  // than a task costs; along σ, n, m or η every point recomputes it (up to a millisecond).
  const bool alongSteps = variable == CurveVariable::kSteps || variable == CurveVariable::kEpochs;
  auto record = [&](std::size_t i, const Result<EpsilonResult>& e) {
    if (e) {
      curve.epsilon[i] = e->epsilon;
    } else {
      errors[i] = e.status().withContext(std::string(curveVariableName(variable)) + " = " + formatNumber(xs[i]));
    }
  };
  const auto* rdpBased = dynamic_cast<const RdpBasedAccountant*>(&accountant);
  if (alongSteps && rdpBased != nullptr && rdpBased->rdpLinearInSteps()) {
    // Total RDP is linear in K: one per-step RDP profile serves every point.
    std::vector<Params> points;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      Result<Params> p = paramsAt(base, variable, xs[i]);
      if (!p) {
        record(i, p.status());
        continue;
      }
      points.push_back(*p);
      where.push_back(i);
    }
    const std::vector<Result<EpsilonResult>> values = rdpBased->epsilonAlongSteps(points, options);
    for (std::size_t j = 0; j < values.size(); ++j) record(where[j], values[j]);
  } else {
    // Points are independent. Along K the memoised per-step RDP makes a point a few µs, less
    // than a task costs; along σ, n, m or η every point recomputes it (up to a millisecond).
    // Neighbouring points have neighbouring optimal orders: each point hints the next one of its
    // block, which lets the search over orders prune most of the grid (never changes a value).
    const std::size_t grain = alongSteps ? xs.size() + 1 : 8;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, xs.size(), grain),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        EpsilonOptions hinted = options;
                        for (std::size_t i = r.begin(); i != r.end(); ++i) {
                          Result<Params> p = paramsAt(base, variable, xs[i]);
                          Result<EpsilonResult> e = p ? accountant.epsilon(*p, hinted) : Result<EpsilonResult>(p.status());
                          if (e && e->alpha) hinted.alphaHint = e->alpha;
                          record(i, e);
                        }
                      });
  }
  for (const Status& s : errors) {
    if (!s.isOk()) {
      curve.firstError = s;
      break;
    }
  }
  return curve;
}

}  // namespace dpx::core::accounting

namespace dpx::core::accounting {

std::vector<AccountantCurve> epsilonCurves(std::span<const Accountant* const> accountants, const Params& base,
                                           CurveVariable variable, std::span<const double> xs,
                                           const EpsilonOptions& options) {
  std::vector<AccountantCurve> curves(accountants.size());
  tbb::parallel_for(std::size_t{0}, accountants.size(), [&](std::size_t i) {
    curves[i] = epsilonCurve(*accountants[i], base, variable, xs, options);
  });
  return curves;
}

}  // namespace dpx::core::accounting
