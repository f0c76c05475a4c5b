#include "utility/utility_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "accounting/calibration.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/stepsize_analysis.h"
#include "common/format.h"

namespace dpx::core::utility {
namespace {

constexpr const char* kRyffel = "Ryffel, Bach & Pointcheval 2022";
constexpr const char* kLi = "Li, Chen, Liu & Carin 2019";

std::string cite(const char* authors, const std::string& where) { return std::string(authors) + ", " + where; }

Status checkTarget(double target) {
  if (!(std::isfinite(target) && target > 0.0)) {
    return Status::invalidArgument("target ε = " + formatNumber(target) +
                                   " is out of range: it must be a finite number > 0");
  }
  return Status::ok();
}

Status checkOverride(Knob knob, const std::optional<double>& value) {
  return value ? validateKnob(knob, *value) : Status::ok();
}

Status checkCancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load(std::memory_order_relaxed)) return Status::cancelled("the utility report was cancelled");
  return Status::ok();
}

// The inputs were validated before the calibration, so a calibration that fails says the target
// cannot be met at these knobs: a fact about the run, not an input out of range.
Status calibrationFailure(const Status& status, const std::string& context) {
  const Status out = status.withContext(context);
  if (out.code() != StatusCode::kInvalidArgument) return out;
  return Status::notApplicable(out.message());
}

UtilityInputOptions fitOptions(const Params& p, std::optional<int> iterations, double clipNorm) {
  UtilityInputOptions options;
  options.optimum.lambda = p.lambda;
  options.optimum.maxIterations = iterations.value_or(kDefaultFitIterations);
  options.optimum.gradientTolerance = kFitTolerance;
  options.batchSize = p.m;
  options.clipNorm = clipNorm;
  return options;
}

// Stores a statement in the report. Its failure fails the report only in the all-or-nothing mode, or
// when it says an input is out of range: then no statement of the report means anything.
template <typename T>
Status keep(Result<T>& slot, Result<T> value, bool everyStatement) {
  slot = std::move(value);
  const Status status = slot.status();
  if (everyStatement || status.code() == StatusCode::kInvalidArgument) return status;
  return Status::ok();
}

template <typename T>
Status keep(std::optional<Result<T>>& slot, Result<T> value, bool everyStatement) {
  slot.emplace(notEvaluated());
  return keep(*slot, std::move(value), everyStatement);
}

// A statement built on the value of another: evaluated from it, or failing with its status.
template <typename U, typename F>
auto onValue(const Result<U>& input, F evaluate) -> decltype(evaluate(*input)) {
  if (!input) return input.status();
  return evaluate(*input);
}

// The fit is the one step that takes seconds: the cancel flag is read on both sides of it.
Result<UtilityInputs> estimate(const training::TrainTestSplit& data, const UtilityInputOptions& options,
                               const std::atomic<bool>* cancel, const char* context) {
  DPX_RETURN_IF_ERROR(checkCancel(cancel));
  Result<UtilityInputs> inputs = estimateUtilityInputs(data.train, options);
  if (!inputs) return inputs.status().withContext(context);
  DPX_RETURN_IF_ERROR(checkCancel(cancel));
  return inputs;
}

// ------------------------------------------------------------------------------- dp-sgld

// η and σ of the run: given, or the theorems' step 1/(2β) and σ calibrated to the target.
Status resolveLangevinRun(const LangevinReportRequest& request, LangevinUtilityReport& out) {
  Params& p = out.params;
  if (request.eta) {
    p.eta = *request.eta;
  } else if (p.schedule != Schedule::kDecreasing) {
    // The utility theorems run η = 1/(2β); Lemma 4.1 needs η ≤ 1/(2β).
    p.eta = 1.0 / (2.0 * p.beta);
    if (!validateKnob(Knob::kEta, p.eta).isOk()) {
      const KnobInfo& eta = knobInfo(Knob::kEta);
      return Status::invalidArgument("η = 1/(2β) = " + formatNumber(p.eta) + " is outside the η knob range [" +
                                     formatNumber(eta.min) + ", " + formatNumber(eta.max) + "]: give --eta");
    }
  }
  const accounting::Accountant* sgld = &accounting::accountantOf<accounting::SgldAccountant>();
  out.sigmaCalibrated = !request.sigma;
  if (request.sigma) {
    p.sigma = *request.sigma;
  } else {
    Result<accounting::Calibration> c = accounting::calibrateSigma(*sgld, p, out.targetEpsilon);
    if (!c) return calibrationFailure(c.status(), "calibrating σ to ε = " + formatNumber(out.targetEpsilon));
    p.sigma = c->sigma;
  }
  DPX_ASSIGN_OR_RETURN(const accounting::EpsilonResult epsilon, sgld->epsilon(p));
  out.runEpsilon = epsilon.epsilon;
  out.schedule = accounting::sgldSchedule(p);
  return accounting::sgldScheduleStatus(p, out.schedule);
}

// d, ξ² and E‖θ₀ − θ*‖²: given > data > default.
Status resolveLangevinInputs(const LangevinReportRequest& request, LangevinUtilityReport& out) {
  const Params& p = out.params;
  LangevinProblem& problem = out.problem;
  problem.beta = p.beta;
  problem.lambda = p.lambda;
  problem.lipschitz = p.L;
  problem.records = p.n;
  problem.xi2 = p.L * p.L;  // ξ² ≤ L² (the paper's own bound in the proof of Thm 4.3)
  out.xi2Source = InputSource::kDefault;
  out.initialDistanceSource = InputSource::kDefault;  // 4L²/λ², the diameter of C squared
  if (request.data) {
    DPX_ASSIGN_OR_RETURN(
        out.estimated,
        estimate(*request.data, fitOptions(p, request.fitIterations, std::numeric_limits<double>::infinity()),
                 request.cancel, "estimating the utility inputs from the data"));
    problem.dimension = out.estimated->dimension;
    problem.xi2 = out.estimated->xi2;
    problem.optimumNorm = out.estimated->optimum.optimumNormBound;
    out.dimensionSource = out.xi2Source = out.initialDistanceSource = InputSource::kData;
  }
  if (request.dimension) {
    problem.dimension = *request.dimension;
    out.dimensionSource = InputSource::kGiven;
  } else if (!request.data) {
    return Status::invalidArgument("the number of parameters d is required without training data");
  }
  if (request.xi2) {
    problem.xi2 = *request.xi2;
    out.xi2Source = InputSource::kGiven;
  }
  if (request.initialDistanceSquared) {
    problem.initialDistanceSquared = *request.initialDistanceSquared;
    out.initialDistanceSource = InputSource::kGiven;
  }
  return Status::ok();
}

// Each statement on its own (see keep()), in the order of the report's members.
Status evaluateLangevinBounds(LangevinUtilityReport& out, bool every) {
  const Params& p = out.params;
  const LangevinProblem& problem = out.problem;
  const double target = out.targetEpsilon;
  const bool decreasing = p.schedule == Schedule::kDecreasing;
  const double K = static_cast<double>(p.K);
  const double sigmaL2 = out.schedule.sigmaL * out.schedule.sigmaL;
  const LangevinRun run{decreasing ? LangevinSchedule::kDecreasing : LangevinSchedule::kConstant, p.eta, K, sigmaL2};
  // Not a statement: Lemma 4.1/4.2 compute the same D₀ and fail with it first.
  out.initialDistanceSquared = initialDistanceSquared(problem, sigmaL2);
  DPX_RETURN_IF_ERROR(keep(out.lemma41, lemma41(problem, run), every));
  if (decreasing) DPX_RETURN_IF_ERROR(keep(out.lemma42, lemma42(problem, K, sigmaL2), every));
  DPX_RETURN_IF_ERROR(keep(out.rdp, rdpPairForDp(target, p.delta), every));
  DPX_RETURN_IF_ERROR(
      keep(out.theorem41, onValue(out.rdp, [&](RdpPair rdp) { return theorem41(problem, rdp, p.m); }), every));
  DPX_RETURN_IF_ERROR(keep(out.theorem42, theorem42(problem, target, p.delta, p.m), every));
  if (decreasing) {
    DPX_RETURN_IF_ERROR(
        keep(out.theorem43, onValue(out.rdp, [&](RdpPair rdp) { return theorem43(problem, rdp, p.m); }), every));
    DPX_RETURN_IF_ERROR(keep(out.theorem44, theorem44(problem, target, p.delta, p.m), every));
  }
  DPX_RETURN_IF_ERROR(
      keep(out.table4,
           onValue(out.rdp, [&](RdpPair rdp) { return table4Ratio(p.beta, p.lambda, p.n, problem.dimension, rdp); }),
           every));
  DPX_RETURN_IF_ERROR(
      keep(out.table4Dp, table4RatioDp(p.beta, p.lambda, p.n, problem.dimension, target, p.delta), every));
  return Status::ok();
}

// ------------------------------------------------------------------------------- sgld-posterior

// η of the run (given, or the largest within the target) and the constants c, c₂ of Thm 3–4.
Status resolveSgmcmcRun(const SgmcmcReportRequest& request, SgmcmcUtilityReport& out) {
  Params& p = out.params;
  if (request.eta) p.eta = *request.eta;
  Result<accounting::StepSizeAnalysis> steps = accounting::analyzeStepSize(p, out.targetEpsilon);
  out.etaCalibrated = !request.eta;
  if (!steps) {
    const Status failure =
        calibrationFailure(steps.status(), "the step size for ε = " + formatNumber(out.targetEpsilon));
    // A given η makes the run without the analysis: then only c, c₂ and what is built on them fail.
    if (!request.eta || request.everyStatement) return failure;
    out.c = failure;
    out.c2 = failure;
  } else {
    out.c = steps->c;
    out.c2 = steps->c2;
  }
  if (!request.eta) {
    // As `dpx train --target-epsilon` runs it: the largest step within the target, in the η range.
    const double eta = p.schedule == Schedule::kDecreasing ? steps->exactDecreasingEta1 : steps->exactFixed;
    p.eta = std::clamp(eta, knobInfo(Knob::kEta).min, knobInfo(Knob::kEta).max);
  }
  const accounting::Accountant* sgmcmc = &accounting::accountantOf<accounting::SgmcmcAccountant>();
  DPX_ASSIGN_OR_RETURN(const accounting::EpsilonResult epsilon, sgmcmc->epsilon(p));
  out.runEpsilon = epsilon.epsilon;
  out.sigmaEffective = accounting::sgmcmcNoiseMultiplier(p, p.eta);
  return Status::ok();
}

// Γ_M, C and the burn-in: given > data > default.
Status resolveSgmcmcInputs(const SgmcmcReportRequest& request, SgmcmcUtilityReport& out) {
  const Params& p = out.params;
  out.problem.records = p.n;
  out.problem.batchSize = p.m;
  DPX_ASSIGN_OR_RETURN(out.gammaMBound, gammaMBound(p.L, p.n));
  out.problem.gammaM = out.gammaMBound;
  out.gammaMSource = InputSource::kDefault;
  // The fit needs λ > 0 (strong convexity certifies θ̂); at λ = 0 the bound stays.
  if (request.data && !request.gammaM && p.lambda > 0.0) {
    DPX_ASSIGN_OR_RETURN(out.estimated, estimate(*request.data, fitOptions(p, request.fitIterations, p.L),
                                                 request.cancel, "estimating Γ_M from the data"));
    out.problem.gammaM = out.estimated->gammaMAtMode;
    out.gammaMSource = InputSource::kData;
  }
  if (request.gammaM) {
    out.problem.gammaM = *request.gammaM;
    out.gammaMSource = InputSource::kGiven;
  }
  out.constantSource = request.mseConstant ? InputSource::kGiven : InputSource::kDefault;
  out.problem.constant = request.mseConstant.value_or(1.0);
  out.burnInSource = request.burnIn ? InputSource::kGiven : InputSource::kDefault;
  out.burnIn = request.burnIn.value_or(0);
  return Status::ok();
}

// Each statement on its own (see keep()), in the order of the report's members.
Status evaluateSgmcmcBounds(SgmcmcUtilityReport& out, bool every) {
  const Params& p = out.params;
  const MseProblem& problem = out.problem;
  const double target = out.targetEpsilon;
  const double T = static_cast<double>(p.K);
  const double N = static_cast<double>(p.n);
  out.posterior = {p.schedule == Schedule::kDecreasing ? PosteriorSchedule::kDecreasing : PosteriorSchedule::kConstant,
                   p.eta / N, T, static_cast<double>(out.burnIn)};
  DPX_RETURN_IF_ERROR(keep(out.weighted, sgldMseWeighted(problem, out.posterior), every));
  DPX_RETURN_IF_ERROR(
      keep(out.etaTilde0, onValue(out.c2, [&](double c2) { return liEtaTilde0(target, p.delta, p.L, c2); }), every));
  DPX_RETURN_IF_ERROR(keep(
      out.proposition5, onValue(out.etaTilde0, [&](double eta0) { return liProposition5(problem, T, eta0); }), every));
  DPX_RETURN_IF_ERROR(
      keep(out.lemma6AtTheorem4,
           onValue(out.c, [&](double c) { return liLemma6AtTheorem4(problem, T, target, p.delta, p.L, c); }), every));
  DPX_RETURN_IF_ERROR(keep(out.lemma6Optimum, liLemma6Optimum(problem, T), every));
  // The step Lemma 6 is evaluated at; finite whenever c is (the step-size analysis checks it).
  out.theorem4Eta =
      onValue(out.c, [&](double c) -> Result<double> { return accounting::liFixedStepSize(p, target, c); });
  return Status::ok();
}

// ------------------------------------------------------------------------------- rows

std::string sourceText(InputSource source, const std::string& dataText, const std::string& defaultText) {
  switch (source) {
    case InputSource::kGiven:
      return "given";
    case InputSource::kData:
      return "from the data: " + dataText;
    default:
      return "default: " + defaultText;
  }
}

// The single row of a statement that does not apply: its label and why.
UtilityRow notApplying(std::string label, const Status& status, std::string citation) {
  return {std::move(label), 0.0, status.message(), std::move(citation), false};
}

void addLemmaRows(std::vector<UtilityRow>& rows, const LangevinUtilityReport& r) {
  const std::string run = std::string(scheduleName(r.params.schedule)) + " step, K = " + std::to_string(r.params.K) +
                          ", σ_L = " + formatNumber(r.schedule.sigmaL);
  const std::string lemma41Label = "Lemma 4.1, last iterate (schedule run)";
  if (!r.lemma41) {
    rows.push_back(notApplying(lemma41Label, r.lemma41.status(), cite(kRyffel, "Lemma 4.1")));
  } else {
    const Lemma41Bound& l = *r.lemma41;
    rows.push_back(
        {lemma41Label, l.recursion.total, riskTermsText(l.recursion) + "; " + run, cite(kRyffel, "Lemma 4.1")});
    if (l.printed) {
      rows.push_back({"Lemma 4.1 as printed (constant step)", l.printed->total,
                      "ξ² term βηξ²/(2λ); closed form of the corrected recursion " + formatNumber(l.closedForm->total),
                      cite(kRyffel, "Lemma 4.1")});
    }
  }
  if (!r.lemma42) return;
  const std::string lemma42Label = "Lemma 4.2, average of the iterates (schedule run)";
  if (!*r.lemma42) {
    rows.push_back(notApplying(lemma42Label, r.lemma42->status(), cite(kRyffel, "Lemma 4.2")));
    return;
  }
  const Lemma42Bound& l = **r.lemma42;
  rows.push_back({lemma42Label, l.exactSum.total, riskTermsText(l.exactSum) + "; " + run, cite(kRyffel, "Lemma 4.2")});
  rows.push_back(
      {"Lemma 4.2 as printed", l.closedForm.total, "with log(1 + λK/(4β)); " + run, cite(kRyffel, "Lemma 4.2")});
}

void addTheoremRows(std::vector<UtilityRow>& rows, const std::string& theorem,
                    const Result<TheoremPrescription>& prescription, bool average) {
  const std::string citation = cite(kRyffel, theorem);
  if (!prescription) {
    rows.push_back(notApplying(theorem, prescription.status(), citation));
    return;
  }
  const TheoremPrescription& t = *prescription;
  rows.push_back({theorem + ": noise multiplier σ", t.noiseMultiplier,
                  "σ_L² = " + formatNumber(t.sigmaL2) + " at η₀ = 1/(2β) = " + formatNumber(t.eta0) + ", (α, ε_α) = (" +
                      formatNumber(t.rdp.alpha) + ", " + formatNumber(t.rdp.epsilon) + ")-RDP",
                  citation});
  rows.push_back({theorem + ": steps K", t.steps, "the formula gives K = " + formatNumber(t.stepsFormula), citation});
  const std::string lemma = average ? "Lemma 4.2 (exact sum) at this K: " : "Lemma 4.1 (recursion) at this K: ";
  const std::string corrected =
      average ? "" : "with the ξ² term of the corrected recursion " + formatNumber(t.correctedBound) + "; ";
  rows.push_back(
      {theorem + ": bound as stated", t.statedBound, corrected + lemma + formatNumber(t.lemma.total), citation});
}

void addTable4Rows(std::vector<UtilityRow>& rows, const LangevinUtilityReport& r) {
  const std::string citation = cite(kRyffel, "Table 4");
  const std::string label = "Table 4: εn²/(αd)/(β/λ)²";
  if (!r.table4) {
    rows.push_back(notApplying(label, r.table4.status(), citation));
  } else {
    rows.push_back({label, r.table4->ratio,
                    r.table4->verdict + " (Thm 4.3's K = max((β/λ)x, (λ/β)x²) at x = εn²/(αd) = " +
                        formatNumber(r.table4->privacyRatio) + ")",
                    citation});
  }
  const std::string dpLabel = "Table 4 in Thm 4.4's form: ε²n²/(4log(1/δ)d)/(β/λ)²";
  if (!r.table4Dp) {
    rows.push_back(notApplying(dpLabel, r.table4Dp.status(), citation));
  } else {
    rows.push_back({dpLabel, r.table4Dp->ratio, r.table4Dp->verdict, citation});
  }
}

void addLangevinRunAndInputRows(std::vector<UtilityRow>& rows, const LangevinUtilityReport& r) {
  const std::string section = cite(kRyffel, "§4");
  rows.push_back({"The run: noise multiplier σ", r.params.sigma,
                  (r.sigmaCalibrated ? "calibrated to ε = " + formatNumber(r.targetEpsilon) + " by the sgld accountant"
                                     : std::string("given")) +
                      "; η₀ = " + formatNumber(r.schedule.eta0),
                  cite(kRyffel, "Thm 3.1")});
  rows.push_back({"The run: ε", r.runEpsilon, "at δ = " + formatNumber(r.params.delta) + " (sgld accountant)",
                  cite(kRyffel, "Thm 3.1")});
  rows.push_back({"Input: parameters d", r.problem.dimension,
                  sourceText(r.dimensionSource, "(features + 1)·classes", "none"), section});
  rows.push_back({"Input: ξ² = E‖∇L_B(θ*)‖²", r.problem.xi2,
                  sourceText(r.xi2Source, "over batches of m at the fitted optimum", "the bound L²"), section});
  const std::string d0Label = "Input: E‖θ₀ − θ*‖²";
  if (!r.initialDistanceSquared) {
    rows.push_back(notApplying(d0Label, r.initialDistanceSquared.status(), section));
  } else {
    rows.push_back({d0Label, *r.initialDistanceSquared,
                    sourceText(r.initialDistanceSource, "min(2dσ_L²/λ, (L/λ)²) + ‖θ*‖²", "4L²/λ²"), section});
  }
}

void addMseRows(std::vector<UtilityRow>& rows, const SgmcmcUtilityReport& r) {
  const std::string weightedLabel = "Weighted-average MSE (schedule run)";
  const std::string weightedCitation = cite(kLi, "Prop. 5 (eq. 8 of the supplement)");
  if (!r.weighted) {
    rows.push_back(notApplying(weightedLabel, r.weighted.status(), weightedCitation));
  } else {
    rows.push_back({weightedLabel, r.weighted->terms.total,
                    mseTermsText(r.weighted->terms) + "; t = B+1…T with B = " + std::to_string(r.burnIn) +
                        ", h_t = η_t/N, exact sums",
                    weightedCitation});
  }
  const std::string propositionLabel = "Prop. 5 as printed";
  if (!r.proposition5) {
    rows.push_back(notApplying(propositionLabel, r.proposition5.status(), cite(kLi, "Prop. 5")));
  } else {
    // η̃₀ holds whenever Prop. 5 does: Prop. 5 is evaluated from it.
    rows.push_back({propositionLabel, r.proposition5->total,
                    mseTermsText(*r.proposition5) + "; η̃₀ = ε²/(c₂²L²log(1/δ)) = " + formatNumber(*r.etaTilde0),
                    cite(kLi, "Prop. 5")});
  }
  const std::string lemma6Label = "Lemma 6 at Thm 4's step";
  if (!r.lemma6AtTheorem4 || !r.theorem4Eta) {
    const Status why = r.lemma6AtTheorem4 ? r.theorem4Eta.status() : r.lemma6AtTheorem4.status();
    rows.push_back(notApplying(lemma6Label, why, cite(kLi, "Lemma 6 and Thm 4")));
  } else {
    rows.push_back({lemma6Label, r.lemma6AtTheorem4->total,
                    mseTermsText(*r.lemma6AtTheorem4) + "; η = " + formatNumber(*r.theorem4Eta),
                    cite(kLi, "Lemma 6 and Thm 4")});
  }
  const std::string optimumLabel = "Lemma 6, non-private optimum";
  if (!r.lemma6Optimum) {
    rows.push_back(notApplying(optimumLabel, r.lemma6Optimum.status(), cite(kLi, "Lemma 6")));
  } else {
    rows.push_back({optimumLabel, r.lemma6Optimum->exact.total,
                    "η* = (2T)^(−1/3) = " + formatNumber(r.lemma6Optimum->eta) + "; printed form " +
                        formatNumber(r.lemma6Optimum->printed.total),
                    cite(kLi, "Lemma 6")});
  }
}

void addSgmcmcRunAndInputRows(std::vector<UtilityRow>& rows, const SgmcmcUtilityReport& r) {
  const std::string section = cite(kLi, "§3.2");
  rows.push_back({"The run: step η", r.params.eta,
                  std::string(scheduleName(r.params.schedule)) + " step, " +
                      (r.etaCalibrated ? "the largest within the target" : "given"),
                  cite(kLi, "Thm 3 and Thm 4")});
  rows.push_back({"The run: ε", r.runEpsilon,
                  "at δ = " + formatNumber(r.params.delta) + ", σ_eff = " + formatNumber(r.sigmaEffective),
                  cite(kLi, "Thm 3 and Thm 4")});
  rows.push_back({"Input: Γ_M", r.problem.gammaM,
                  sourceText(r.gammaMSource, "at the posterior mode, an estimate",
                             "the bound L²/(N − 1) = " + formatNumber(r.gammaMBound)),
                  section});
  rows.push_back({"Input: C (MSE constant)", r.problem.constant,
                  sourceText(r.constantSource, "", "1; C is not given by the paper"), section});
  rows.push_back({"Input: burn-in B", static_cast<double>(r.burnIn), sourceText(r.burnInSource, "", "0"), section});
  const auto constant = [&](const char* label, const Result<double>& value, const char* detail, const char* theorem) {
    rows.push_back(value ? UtilityRow{label, *value, detail, cite(kLi, theorem)}
                         : notApplying(label, value.status(), cite(kLi, theorem)));
  };
  constant("Input: c (Thm 4)", r.c, "from the exact fixed step within the target", "Thm 4");
  constant("Input: c₂ (Thm 3)", r.c2, "from the exact decreasing step within the target", "Thm 3");
}

// The statements fail rather than return a bound beyond 1e300; the run's numbers come from the
// accountants, so the promise that no row holds a non-finite value is kept here for all of them.
std::vector<UtilityRow> finiteRows(std::vector<UtilityRow> rows) {
  for (UtilityRow& row : rows) {
    if (std::isfinite(row.value)) continue;
    row = notApplying(row.label, Status::numericalIssue(row.label + " is not a finite number for these inputs"),
                      row.citation);
  }
  return rows;
}

}  // namespace

const char* inputSourceName(InputSource source) {
  switch (source) {
    case InputSource::kGiven:
      return "given";
    case InputSource::kData:
      return "data";
    default:
      return "default";
  }
}

std::string riskTermsText(const RiskTerms& t) {
  return "initial " + formatNumber(t.initial) + " + mini-batch noise " + formatNumber(t.gradientNoise) +
         " + Langevin noise " + formatNumber(t.langevinNoise);
}

std::string mseTermsText(const MseTerms& t) {
  return "mini-batch " + formatNumber(t.gradientNoise) + " + 1/Σh " + formatNumber(t.bias) + " + discretisation " +
         formatNumber(t.discretisation);
}

Status checkLangevinUtilityApplies(const Params& params) {
  if (std::isnan(params.lambda) || params.lambda < 0.0) {
    return Status::invalidArgument("lambda = " + formatNumber(params.lambda) +
                                   " is out of range: the strong convexity λ must be ≥ 0");
  }
  if (params.lambda == 0.0) {
    return Status::notApplicable(std::string("λ = 0: the utility bounds of ") + kRyffel +
                                 " need a λ-strongly convex loss (λ > 0); set --lambda");
  }
  return Status::ok();
}

Result<LangevinUtilityReport> langevinUtilityReport(const LangevinReportRequest& request) {
  DPX_RETURN_IF_ERROR(checkTarget(request.targetEpsilon));
  DPX_RETURN_IF_ERROR(checkLangevinUtilityApplies(request.params));
  DPX_RETURN_IF_ERROR(checkOverride(Knob::kEta, request.eta));
  DPX_RETURN_IF_ERROR(checkOverride(Knob::kSigma, request.sigma));
  DPX_RETURN_IF_ERROR(checkCancel(request.cancel));
  LangevinUtilityReport out;
  out.params = request.params;
  out.targetEpsilon = request.targetEpsilon;
  DPX_RETURN_IF_ERROR(resolveLangevinRun(request, out));
  DPX_RETURN_IF_ERROR(resolveLangevinInputs(request, out));
  DPX_RETURN_IF_ERROR(evaluateLangevinBounds(out, request.everyStatement));
  return out;
}

Result<SgmcmcUtilityReport> sgmcmcUtilityReport(const SgmcmcReportRequest& request) {
  DPX_RETURN_IF_ERROR(checkTarget(request.targetEpsilon));
  DPX_RETURN_IF_ERROR(checkOverride(Knob::kEta, request.eta));
  DPX_RETURN_IF_ERROR(checkCancel(request.cancel));
  SgmcmcUtilityReport out;
  out.params = request.params;
  out.targetEpsilon = request.targetEpsilon;
  DPX_RETURN_IF_ERROR(resolveSgmcmcRun(request, out));
  DPX_RETURN_IF_ERROR(resolveSgmcmcInputs(request, out));
  DPX_RETURN_IF_ERROR(evaluateSgmcmcBounds(out, request.everyStatement));
  return out;
}

std::vector<UtilityRow> utilityRows(const LangevinUtilityReport& report) {
  std::vector<UtilityRow> rows;
  addLemmaRows(rows, report);
  addTheoremRows(rows, "Thm 4.1", report.theorem41, false);
  addTheoremRows(rows, "Thm 4.2", report.theorem42, false);
  if (report.theorem43) addTheoremRows(rows, "Thm 4.3", *report.theorem43, true);
  if (report.theorem44) addTheoremRows(rows, "Thm 4.4", *report.theorem44, true);
  addTable4Rows(rows, report);
  addLangevinRunAndInputRows(rows, report);
  return finiteRows(std::move(rows));
}

std::vector<UtilityRow> utilityRows(const SgmcmcUtilityReport& report) {
  std::vector<UtilityRow> rows;
  addMseRows(rows, report);
  addSgmcmcRunAndInputRows(rows, report);
  return finiteRows(std::move(rows));
}

}  // namespace dpx::core::utility
