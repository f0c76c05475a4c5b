// The utility report of a private run: every number `dpx utility` prints and the GUI's "utility
// bounds" table shows, assembled in one place from langevin_utility.h, sgmcmc_utility.h and
// utility_inputs.h, so the two faces cannot drift apart.
//
//  dp-sgld         Ryffel, Bach & Pointcheval 2022, §4: σ calibrated to the target by the `sgld`
//                  accountant (unless given), Lemma 4.1 at the run's schedule (and Lemma 4.2 for
//                  the decreasing one), Thm 4.1/4.2 (and 4.3/4.4) for the target, Table 4's ratio.
//  sgld-posterior  Li, Chen, Liu & Carin 2019, §3.2: η the largest step within the target (unless
//                  given), the MSE of the step-weighted posterior average (exact sums), Prop. 5,
//                  Lemma 6 at Thm 4's step and Lemma 6's non-private optimum.
//
// Inputs resolve as given > data > default: an override in the request wins; else, with training
// data, the estimate at the fitted optimum (utility_inputs.h); else the papers' worst cases.
//
// Reports are partial: a statement whose hypothesis fails (Thm 4.2/4.4 beyond ε = 2log(1/δ), a
// prescribed K that is not positive, η > 1/(2β) for Lemma 4.1, constants c, c₂ that the target
// does not determine, a bound beyond 1e300, …) must not hide the others. So every statement is a
// Result<T> member of the report: its value, or the status saying why it does not apply, with the
// code and message of the lower-level function (not applicable, numerical issue, …). A statement
// built on another one that failed (Thm 4.1 on the Rényi pair, Prop. 5 on η̃₀ and c₂) carries that
// status. The report as a whole fails only
//  - for inputs out of range (invalid argument, also when a statement is the first to see them:
//    then no statement of the report means anything),
//  - when there is nothing to evaluate: λ = 0 for the Langevin bounds, a calibration that cannot
//    meet the target (σ for dp-sgld, η for sgld-posterior: the run itself is not determined; it is
//    "not applicable": the inputs were valid, the run just cannot be that private), the data fit,
//    cancellation,
//  - and, with `everyStatement` set (the mode of `dpx utility`, which prints a report only when all
//    of it holds), at the first statement that fails, in the order the members are listed, with
//    that statement's status.
// utilityRows() turns a statement that does not apply into one row with applies = false.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounting/sgld_accountant.h"
#include "common/params.h"
#include "common/status.h"
#include "training/dataset.h"
#include "utility/langevin_utility.h"
#include "utility/sgmcmc_utility.h"
#include "utility/utility_inputs.h"

namespace dpx::core::utility {

// What a statement of a default-constructed report holds: reports set every member they list.
inline Status notEvaluated() { return Status::notApplicable("not evaluated"); }

// Where an input of the bounds came from.
enum class InputSource {
  kGiven,    // an override in the request (a flag, a field of the GUI)
  kData,     // estimated from the training data
  kDefault,  // the paper's worst case
};
const char* inputSourceName(InputSource source);  // "given" | "data" | "default"

inline constexpr int kDefaultFitIterations = 2000;  // gradient steps of the optimum fit
inline constexpr double kFitTolerance = 1e-6;       // ‖∇F(θ̂)‖ at which the fit stops

// Ryffel, Bach & Pointcheval 2022's bounds need a λ-strongly convex loss: not applicable at
// λ = 0. Checked first by langevinUtilityReport(); callers that load data may check it before.
Status checkLangevinUtilityApplies(const Params& params);

struct LangevinReportRequest {
  // The run: n, m, K, δ, L, λ, β and the schedule (with data: the run the trainer resolves).
  Params params;
  double targetEpsilon = 0.0;  // ε > 0 at params.delta
  // The constant step; unset: 1/(2β), the theorems' step (the decreasing schedule's
  // η_k = 1/(2β + λk/2) reads no η).
  std::optional<double> eta;
  std::optional<double> sigma;                           // noise multiplier; unset: calibrated to the target by `sgld`
  std::optional<double> dimension;                       // d; unset: from the data (required without)
  std::optional<double> xi2;                             // ξ² = E‖∇L_B(θ*)‖²; unset: data, else L²
  std::optional<double> initialDistanceSquared;          // E‖θ₀ − θ*‖²; unset: data, else 4L²/λ²
  std::optional<int> fitIterations;                      // with data; unset: kDefaultFitIterations
  std::shared_ptr<const training::TrainTestSplit> data;  // the inputs are estimated on its training set
  const std::atomic<bool>* cancel = nullptr;             // checked around the optimum fit
  bool everyStatement = false;  // fail at the first statement that does not apply (see the top)
};

// The statements are evaluated in the order of their members (Lemma 4.1 … Table 4).
struct LangevinUtilityReport {
  Params params;  // the run evaluated: η and σ resolved
  double targetEpsilon = 0.0;
  bool sigmaCalibrated = false;  // σ from the calibration, not given
  double runEpsilon = 0.0;       // ε the `sgld` accountant proves for the run
  accounting::SgldSchedule schedule{};
  LangevinProblem problem;  // d, ξ² and what bounds E‖θ₀ − θ*‖², resolved
  InputSource dimensionSource = InputSource::kGiven;
  InputSource xi2Source = InputSource::kDefault;
  InputSource initialDistanceSource = InputSource::kDefault;
  std::optional<UtilityInputs> estimated;  // with data
  // E‖θ₀ − θ*‖² at the run's σ_L², the D₀ of Lemma 4.1/4.2 (an input: it fails only beyond 1e300).
  Result<double> initialDistanceSquared{notEvaluated()};
  Result<Lemma41Bound> lemma41{notEvaluated()};
  std::optional<Result<Lemma42Bound>> lemma42;  // set for the decreasing schedule only
  // Thm 4.2/4.4's (α, ε_α) for the target, also Thm 4.1/4.3's and Table 4's.
  Result<RdpPair> rdp{notEvaluated()};
  Result<TheoremPrescription> theorem41{notEvaluated()};
  Result<TheoremPrescription> theorem42{notEvaluated()};
  std::optional<Result<TheoremPrescription>> theorem43;  // set for the decreasing schedule only
  std::optional<Result<TheoremPrescription>> theorem44;  // set for the decreasing schedule only
  Result<IterationRegime> table4{notEvaluated()};        // at rdp
  Result<IterationRegime> table4Dp{notEvaluated()};      // Thm 4.4's form
};
Result<LangevinUtilityReport> langevinUtilityReport(const LangevinReportRequest& request);

struct SgmcmcReportRequest {
  // The run: n (N), m (τ), K (T), δ, L, λ and the schedule.
  Params params;
  double targetEpsilon = 0.0;  // ε > 0 at params.delta
  // The step (η₁ of the decreasing schedule); unset: the largest within the target, in the η range.
  std::optional<double> eta;
  std::optional<double> gammaM;        // Γ_M; unset: with data and λ > 0 its value at the mode, else L²/(N − 1)
  std::optional<double> mseConstant;   // C; unset: 1
  std::optional<std::int64_t> burnIn;  // B ∈ [0, T − 1]; unset: 0
  std::optional<int> fitIterations;    // with data; unset: kDefaultFitIterations
  std::shared_ptr<const training::TrainTestSplit> data;
  const std::atomic<bool>* cancel = nullptr;  // checked around the optimum fit
  bool everyStatement = false;                // fail at the first statement that does not apply (see the top)
};

struct SgmcmcUtilityReport {
  Params params;  // the run evaluated: η resolved
  double targetEpsilon = 0.0;
  bool etaCalibrated = false;   // η the largest step within the target, not given
  double runEpsilon = 0.0;      // ε the `sgmcmc` accountant proves for the run
  double sigmaEffective = 0.0;  // σ = τ/(L√(ηN))
  // Thm 4's and Thm 3's constants, from the step-size analysis at the target. With η given the run
  // does not need that analysis: when it fails (the target out of reach, or not limiting the step)
  // only c, c₂ and the statements built on them (Prop. 5, Lemma 6 at Thm 4's step) fail with it.
  // With η calibrated it fails the report.
  Result<double> c{notEvaluated()};
  Result<double> c2{notEvaluated()};
  MseProblem problem;  // Γ_M and C resolved
  InputSource gammaMSource = InputSource::kDefault;
  InputSource constantSource = InputSource::kDefault;
  InputSource burnInSource = InputSource::kDefault;
  double gammaMBound = 0.0;                // L²/(N − 1)
  std::optional<UtilityInputs> estimated;  // with data, Γ_M not given and λ > 0
  std::int64_t burnIn = 0;
  PosteriorRun posterior;  // h₁ = η/N, T, B
  // The statements, evaluated in this order.
  Result<WeightedMse> weighted{notEvaluated()};
  Result<double> etaTilde0{notEvaluated()};  // Prop. 5's η̃₀ = ε²/(c₂²L²log(1/δ))
  Result<MseTerms> proposition5{notEvaluated()};
  Result<MseTerms> lemma6AtTheorem4{notEvaluated()};
  Result<Lemma6Optimum> lemma6Optimum{notEvaluated()};
  Result<double> theorem4Eta{notEvaluated()};  // ε²N/(c²L²T log(1/δ)), the step of lemma6AtTheorem4
};
Result<SgmcmcUtilityReport> sgmcmcUtilityReport(const SgmcmcReportRequest& request);

// One line of the GUI's table. A statement that applies gives one or more rows with its values; one
// that does not gives a single row: its label ("Thm 4.2", or the label of its value row), applies
// false, value 0 and the reason (the statement's status message) as the detail.
struct UtilityRow {
  std::string label;     // "Lemma 4.1, last iterate (schedule run)"
  double value = 0.0;    // finite; 0 when the statement does not apply
  std::string detail;    // the terms or the inputs behind the value, or why the statement does not apply
  std::string citation;  // "Ryffel, Bach & Pointcheval 2022, Lemma 4.1"
  bool applies = true;
};
std::vector<UtilityRow> utilityRows(const LangevinUtilityReport& report);
std::vector<UtilityRow> utilityRows(const SgmcmcUtilityReport& report);

// The terms of a bound as the CLI and the rows spell them, 10 significant digits:
// "initial X + mini-batch noise Y + Langevin noise Z" and "mini-batch X + 1/Σh Y + discretisation Z".
std::string riskTermsText(const RiskTerms& terms);
std::string mseTermsText(const MseTerms& terms);

}  // namespace dpx::core::utility
