#include "accounting/stepsize_chart.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <mutex>
#include <utility>

#include "accounting/cyclic_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "common/format.h"
#include "common/parallel.h"

namespace dpx::core::accounting {
namespace {

// Share of the progress bar taken by the SG-MCMC exact searches (a heterogeneous composition
// per step tried); the sgld and cyclic scans are closed forms and take the rest.
constexpr double kSgmcmcShare = 0.9;

std::string num(double value) { return formatNumber(value, 4); }

void addPoint(StepSizeChartCurve& curve, double epsilon, double eta) {
  if (!isReportable(eta) || !(eta > 0.0)) return;
  curve.epsilon.push_back(epsilon);
  curve.eta.push_back(eta);
}

// The legend label and the note's sentence on what a point of an η-dependent analysis means.
void describeTrend(StepSizeChartCurve& curve, const StepSizeScan& s, const std::string& shortCitation,
                   std::string& note) {
  const std::string sigma = "σ = " + num(s.sigma) + " held fixed";
  switch (s.trend) {
    case EtaTrend::kConstant:
      curve.label = curve.id + ": ε does not depend on η";
      note += "ε = " + num(s.epsilonMin) + " (" + sigma + ") at every η from " + num(s.etaLow) + " to " +
              num(s.etaHigh) + ": a target ≥ " + num(s.epsilonMin) + " allows all of them, a smaller one none, " +
              "so there is no curve.";
      break;
    case EtaTrend::kRising:
      curve.label = curve.id + ": largest η (" + shortCitation + ")";
      note += "Each point is the largest η with ε(η) ≤ target (" + sigma + "). No point for a target below " +
              num(s.epsilonMin) + " (not reachable: even η = " + num(s.etaLow) + " gives more) or from " +
              num(s.epsilonMax) + " on (met at every η up to " + num(s.etaHigh) + ": privacy does not limit η).";
      break;
    case EtaTrend::kFalling:
      curve.label = curve.id + ": smallest η (" + shortCitation + ")";
      note += "Each point is the smallest η with ε(η) ≤ target (" + sigma + "): larger steps are more private. " +
              "No point for a target below " + num(s.epsilonMin) + " (not reachable: even η = " + num(s.etaHigh) +
              " gives more) or from " + num(s.epsilonMax) + " on (met at every η down to " + num(s.etaLow) +
              ": privacy does not limit η).";
      break;
    case EtaTrend::kMixed:
      curve.label = curve.id + ": η not monotone (" + shortCitation + ")";
      note += "ε is not monotone in η, so a target allows several intervals of η; no single boundary is drawn.";
      break;
  }
}

// The curve of an analysis whose ε depends on η with σ fixed: one point per target where the
// target sets η, and a note that says what the points are and why a target has none.
StepSizeChartCurve etaAnalysisCurve(const Accountant& accountant, const Params& params, std::span<const double> targets,
                                    const StepSizeChartOptions& options, const std::string& shortCitation,
                                    StepSizeControl control) {
  StepSizeChartCurve curve;
  curve.id = std::string(accountant.id());
  curve.accountant = curve.id;
  Result<StepSizeScan> scan = stepSizesForTargets(accountant, params, targets, options.epsilon, control);
  if (!scan) {
    curve.label = curve.id + ": no step size (" + shortCitation + ")";
    curve.note = scan.status().message();
    curve.greyed = true;
    return curve;
  }
  const StepSizeScan& s = *scan;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Result<StepSizeRange>& r = s.targets[i];
    if (r && r->bindingEta) addPoint(curve, targets[i], *r->bindingEta);
  }
  std::string note = s.trendNote + ". ";
  describeTrend(curve, s, shortCitation, note);
  for (const EtaLimit& l : s.limits) {
    note += ' ';
    note += limitText(l);
  }
  if (!s.otherViolations.empty()) {
    curve.greyed = true;
    note += " Assumptions not met at any η:";
    for (const Violation& v : s.otherViolations) note += " " + v.reason + ";";
    note.back() = '.';
  }
  curve.note = std::move(note);
  return curve;
}

Status checkChartTargets(std::span<const double> targets, double referenceEpsilon) {
  for (double t : targets) {
    if (!isReportable(t) || !(t > 0.0)) {
      return Status::invalidArgument("target-epsilon = " + formatNumber(t) +
                                     " is out of range: the target ε must be > 0");
    }
  }
  if (!isReportable(referenceEpsilon) || !(referenceEpsilon > 0.0)) {
    return Status::invalidArgument("the reference ε = " + formatNumber(referenceEpsilon) + " must be > 0");
  }
  return Status::ok();
}

void reportProgress(const StepSizeControl& control, double fraction) {
  if (control.progress) control.progress(fraction);
}

const std::string& sgmcmcId() { return accountantOf<SgmcmcAccountant>().info().id; }

// The SG-MCMC curves of the chart, before their points, in the chart's order.
struct SgmcmcCurves {
  StepSizeChartCurve exactFixed{"exact_fixed",
                                "exact, fixed η (rdp)",
                                sgmcmcId(),
                                {},
                                {},
                                false,
                                false,
                                "largest constant η whose SGLD run (Li, Chen, Liu & Carin 2019, Alg. 1; "
                                "σ_eff = τ/(L√(ηN))) has rdp ε ≤ target"};
  StepSizeChartCurve exactDecreasing{"exact_decreasing",
                                     "exact, η₁ of η₁t^(−1/3)",
                                     sgmcmcId(),
                                     {},
                                     {},
                                     false,
                                     false,
                                     "largest first step η₁ of the decreasing schedule η₁t^(−1/3) whose run has rdp "
                                     "ε ≤ target (heterogeneous composition)"};
  StepSizeChartCurve liFixed{"li_fixed", "Li et al. Thm 4 (c fixed)", sgmcmcId(), {}, {}, true, false, {}};
  StepSizeChartCurve liDecreasing{
      "li_decreasing", "Li et al. Thm 3 at t = 1 (c₂ fixed)", sgmcmcId(), {}, {}, true, false, {}};
  StepSizeChartCurve wang{"wang", "Wang et al. 2015",
                          "",     {},
                          {},     true,
                          false,  "Wang, Fienberg & Smola 2015: η < ε²N / (128 L² T log(2.5T/δ) log(2/δ))"};
};

// The exact SG-MCMC searches (a heterogeneous composition per step tried, seconds each when
// σ₁ < 0.5) are independent: one task per target, the reference ε last, spread over the cores.
// Each result depends on its target alone, so the chart is the same whatever the scheduling.
std::vector<Result<SgmcmcExactSteps>> exactSearches(const Params& params, std::span<const double> targets,
                                                    double referenceEpsilon, const StepSizeChartOptions& options) {
  const StepSizeControl& control = options.control;
  std::vector<double> searched(targets.begin(), targets.end());
  searched.push_back(referenceEpsilon);
  std::vector<Result<SgmcmcExactSteps>> exact(searched.size(), Status::cancelled());
  std::mutex progressMutex;
  std::size_t done = 0;
  EpsilonOptions cancellable = options.epsilon;
  if (control.cancel) cancellable.exact.cancel = control.cancel;
  parallelFor(std::size_t{0}, searched.size(), [&](std::size_t i) {
    if (control.cancelled()) return;
    exact[i] = sgmcmcExactSteps(params, searched[i], cancellable);
    std::lock_guard lock(progressMutex);  // one report at a time keeps the fractions increasing
    reportProgress(control, kSgmcmcShare * static_cast<double>(++done) / static_cast<double>(searched.size()));
  });
  return exact;
}

// The closed forms hold c and c₂ at their values for the reference ε (Li, Chen, Liu & Carin
// 2019, Fig. 1): equal to the exact answers there, ∝ ε² elsewhere.
void addLiCurves(SgmcmcCurves& curves, const Params& params, std::span<const double> targets, double referenceEpsilon,
                 const Result<SgmcmcExactSteps>& reference) {
  if (!reference) {
    const std::string why =
        "c and c₂ are derived from the exact answers at the reference ε = " + num(referenceEpsilon) +
        ", which has none: " + reference.status().message();
    curves.liFixed.note = "Li, Chen, Liu & Carin 2019, Thm 4: " + why;
    curves.liDecreasing.note = "Li, Chen, Liu & Carin 2019, Thm 3: " + why;
    return;
  }
  const double c = liConstantFixed(params, referenceEpsilon, reference->sigmaFixed);
  const double c2 = liConstantDecreasing(params, referenceEpsilon, reference->sigmaDecreasing1);
  curves.liFixed.note = "closed form ε²N/(c²L²T log(1/δ)) of Li, Chen, Liu & Carin 2019, Thm 4, with c = " + num(c) +
                        " derived from the exact fixed step at the reference ε = " + num(referenceEpsilon);
  curves.liDecreasing.note =
      "closed form ε²N/(c₂²L²T^(2/3) log(1/δ)) of Li, Chen, Liu & Carin 2019, Thm 3 (first step, "
      "t = 1), with c₂ = " +
      num(c2) +
      " derived from the exact decreasing schedule at the reference "
      "ε = " +
      num(referenceEpsilon);
  for (double eps : targets) {
    addPoint(curves.liFixed, eps, liFixedStepSize(params, eps, c));
    addPoint(curves.liDecreasing, eps, liDecreasingStepSize(params, eps, c2));
  }
}

// Wang et al.'s bound and the exact answers at every target; returns why targets have no exact point.
std::vector<std::string> addExactPoints(SgmcmcCurves& curves, const Params& params, std::span<const double> targets,
                                        const std::vector<Result<SgmcmcExactSteps>>& exact) {
  std::vector<std::string> skipped;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const double eps = targets[i];
    addPoint(curves.wang, eps, wangStepSize(params, eps));
    // A target out of reach (or one that does not limit the step) has no exact point.
    if (exact[i]) {
      addPoint(curves.exactFixed, eps, exact[i]->fixed);
      addPoint(curves.exactDecreasing, eps, exact[i]->decreasingEta1);
    } else {
      skipped.push_back("ε = " + num(eps) + ": " + exact[i].status().message());
    }
  }
  return skipped;
}

// sgld and cyclic: closed forms, scanned over η once for all targets.
Status addEtaAnalysisCurves(StepSizeChart& chart, const Params& params, std::span<const double> targets,
                            const StepSizeChartOptions& options) {
  const StepSizeControl& control = options.control;
  const SgldAccountant sgld;
  const CyclicAccountant cyclic;
  const std::pair<const Accountant*, const char*> analyses[] = {{&sgld, "Ryffel et al. Thm 3.1"},
                                                                {&cyclic, "Kong & Ribero Thm 4.5"}};
  const double share = (1.0 - kSgmcmcShare) / std::size(analyses);
  for (std::size_t k = 0; k < std::size(analyses); ++k) {
    StepSizeControl sub;
    sub.cancel = control.cancel;
    const double from = kSgmcmcShare + share * static_cast<double>(k);
    if (control.progress)
      sub.progress = [&control, share, from](double f) { reportProgress(control, from + share * f); };
    chart.curves.push_back(etaAnalysisCurve(*analyses[k].first, params, targets, options, analyses[k].second, sub));
    if (control.cancelled()) return Status::cancelled();
  }
  return Status::ok();
}

}  // namespace

std::vector<double> stepSizeTargets(double referenceEpsilon, int points, double spread) {
  points = std::max(points, 2);
  const double lo = std::log(referenceEpsilon / spread);
  const double hi = std::log(referenceEpsilon * spread);
  std::vector<double> targets;
  targets.reserve(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) targets.push_back(std::exp(lo + (hi - lo) * i / (points - 1)));
  return targets;
}

Result<StepSizeChart> stepSizeChart(const Params& params, std::span<const double> targets, double referenceEpsilon,
                                    const StepSizeChartOptions& options) {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(checkChartTargets(targets, referenceEpsilon));
  const StepSizeControl& control = options.control;
  StepSizeChart chart;
  chart.targets.assign(targets.begin(), targets.end());
  chart.referenceEpsilon = referenceEpsilon;
  chart.limits = stepSizeLimits(params);

  if (control.cancelled()) return Status::cancelled();
  const std::vector<Result<SgmcmcExactSteps>> exact = exactSearches(params, targets, referenceEpsilon, options);
  if (control.cancelled()) return Status::cancelled();
  SgmcmcCurves curves;
  addLiCurves(curves, params, targets, referenceEpsilon, exact.back());
  const std::vector<std::string> skipped = addExactPoints(curves, params, targets, exact);
  chart.curves = {curves.exactFixed, curves.exactDecreasing, curves.liFixed, curves.liDecreasing, curves.wang};
  DPX_RETURN_IF_ERROR(addEtaAnalysisCurves(chart, params, targets, options));

  if (Result<EpsilonResult> e = SgmcmcAccountant().epsilon(params, options.epsilon); e && isReportable(e->epsilon)) {
    chart.epsilonAtCurrentEta = e->epsilon;
  }
  // The exact SG-MCMC curves are the chart's reference: say why when they are empty.
  if (chart.curves[0].eta.empty() && chart.curves[1].eta.empty() && !skipped.empty()) {
    chart.message = "no exact SG-MCMC step size for ε from " + num(targets.front()) + " to " + num(targets.back()) +
                    " (" + skipped.front() + ")";
  }
  reportProgress(control, 1.0);
  return chart;
}

}  // namespace dpx::core::accounting
