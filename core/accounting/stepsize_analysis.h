// Step-size bounds for private SGLD (Li, Chen, Liu & Carin 2019, Thm 3 and Thm 4; Wang, Fienberg &
// Smola 2015), the smoothness limits on η of the other analyses, and the η that meet a target ε
// for any accountant whose ε depends on η (Ryffel, Bach & Pointcheval 2022; Kong & Ribero 2024).
//  exact fixed:      the largest η whose run (σ = τ/(L√(ηN)), T steps) has `rdp` ε ≤ target
//  exact decreasing: the largest η₁ of η_t = η₁t^{−1/3}, likewise (heterogeneous composition)
//  Li et al. closed forms  η < ε²N/(c²L²T log(1/δ))  and  η_t < ε²N t^{−1/3}/(c₂²L²T^{2/3} log(1/δ)),
//      with c = σε/(q√(T log(1/δ))) and c₂ = σ₁ε/(q√(T^{2/3} log(1/δ))) derived from the exact answers
//      (so the closed forms equal them at the target and extrapolate with fixed c, c₂ elsewhere)
//  Wang et al. 2015: η < ε²N / (128 L² T log(2.5T/δ) log(2/δ))
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

struct StepSizeLimit {
  std::string id;  // "sgld_lsi", "sgld_utility", "cyclic", "outpert", "outpert_optimal", "sgmcmc_upper", "sgmcmc_lower"
  std::string label;     // "η < 1/β (Ryffel et al. 2022, Lemma 3.3)"
  std::string relation;  // "<", "<=", ">", "="
  double eta;
};

struct StepSizeAnalysis {
  double targetEpsilon;
  double exactFixed;           // largest constant η
  double exactDecreasingEta1;  // largest η₁ of η₁t^{−1/3}
  double sigmaFixed;           // noise multiplier at exactFixed
  double sigmaDecreasing1;     // σ₁ at exactDecreasingEta1
  double c;
  double c2;
  double liFixed;
  double liDecreasingT1;
  double wang;
  double epsilonAtCurrentEta;  // ε of the run at the current η (constant schedule)
  std::vector<StepSizeLimit> limits;
};

// The smoothness limits: η < 1/β (Ryffel, Bach & Pointcheval 2022, Lemma 3.3: LSI of DP-SGLD),
// η ≤ 1/(2β) (their utility bounds, Lemma 4.1), η ≤ 1/(M+w) (Kong & Ribero 2024, eq. 12),
// η < 2/β and η* = 2/(β+λ) (Chen, Lee & Kifer 2019: contraction, smallest ρ); and Li, Chen, Liu &
// Carin 2019's conditions η ≤ N/L², η > q²N/(256L²) (Thm 3, conditions 1–2).
std::vector<StepSizeLimit> stepSizeLimits(const Params& params);

// Wang et al. 2015 bound for target ε.
double wangStepSize(const Params& params, double targetEpsilon);

Result<StepSizeAnalysis> analyzeStepSize(const Params& params, double targetEpsilon,
                                         const EpsilonOptions& options = {});

// The exact SG-MCMC answers alone (no ε at the current η, no closed forms): what the step-size
// chart needs at every target ε.
struct SgmcmcExactSteps {
  double fixed;             // largest constant η
  double decreasingEta1;    // largest η₁ of η₁t^{−1/3}
  double sigmaFixed;        // σ_eff at `fixed`
  double sigmaDecreasing1;  // σ₁ at `decreasingEta1`
};
Result<SgmcmcExactSteps> sgmcmcExactSteps(const Params& params, double targetEpsilon,
                                          const EpsilonOptions& options = {});

// Li, Chen, Liu & Carin 2019, Thm 4 (fixed step) and Thm 3 condition 3 at t = 1 (decreasing),
// with the constants c and c₂ given: ε²N/(c²L²T log(1/δ)) and ε²N/(c₂²L²T^{2/3} log(1/δ)).
double liFixedStepSize(const Params& params, double epsilon, double c);
double liDecreasingStepSize(const Params& params, double epsilon, double c2);
// The constants that make those closed forms equal an exact answer: c = σε/(q√(T log(1/δ))) from
// the fixed step's σ_eff, c₂ = σ₁ε/(q√(T^{2/3} log(1/δ))) from the decreasing schedule's σ₁.
double liConstantFixed(const Params& params, double epsilon, double sigmaFixed);
double liConstantDecreasing(const Params& params, double epsilon, double sigmaDecreasing1);

// ---------------------------------------------------------------------------------------------
// Step sizes that meet a target ε for any analysis whose ε depends on the η knob with σ fixed
// (`sgld`: Ryffel, Bach & Pointcheval 2022, Thm 3.1; `cyclic`: Kong & Ribero 2024, Thm 4.5; and
// any other accountant). ε(η) is scanned on a log grid over the η knob range [1e−6, 10] (only η
// changes), every crossing of the target is refined by TOMS 748 on log η, and every η where the
// accountant's check() reports a "step size" violation counts as infeasible: the analysis does
// not apply there (η < 1/β for `sgld`, η ≤ 1/(M+w) for `cyclic`), and the limit is found to the
// last double by bisection. Two crossings closer than one grid cell (1/16 decade) would be missed;
// the analyses here are monotone in η.

// How ε moves as η alone grows, over the η where the analysis applies.
enum class EtaTrend { kConstant, kRising, kFalling, kMixed };
std::string_view etaTrendName(EtaTrend trend);  // "constant" | "rising" | "falling" | "mixed"

// Why an end of a feasible interval is where it is.
enum class EtaBoundKind {
  kKnobRange,   // the end of the η knob range [1e−6, 10]: the set may go on beyond it
  kTarget,      // ε(η) = target there: privacy sets it
  kAssumption,  // the analysis stops applying beyond it
};

struct EtaBound {
  double eta;
  EtaBoundKind kind;
};

// Closed: both ends meet the target and the assumptions.
struct EtaInterval {
  EtaBound lower;
  EtaBound upper;
};

// Where the analysis stops applying as η moves.
struct EtaLimit {
  double eta;               // the last η (a double) at which it still applies
  bool upper;               // true: it applies at η ≤ eta (below the limit); false: at η ≥ eta
  std::string requirement;  // in words, from the accountant: "the Langevin analysis needs η < 1/β"
};

// "The analysis stops applying above η ≈ 1 (the Langevin analysis needs η < 1/β)."
std::string limitText(const EtaLimit& limit);

struct StepSizeRange {
  std::string accountant;
  double targetEpsilon = 0.0;
  double sigma = 0.0;  // the noise multiplier held fixed
  // η with ε(η) ≤ target where the analysis applies; ascending and disjoint, never empty.
  std::vector<EtaInterval> feasible;
  EtaTrend trend = EtaTrend::kConstant;
  bool dependsOnEta() const { return trend != EtaTrend::kConstant; }
  // The η the target sets on the side that binds: the largest feasible η when ε rises with η,
  // the smallest when it falls. Unset when privacy does not limit η on that side (the target is
  // met up to an assumption limit or the knob range), when ε does not depend on η, or when ε is
  // not monotone in η (then read `feasible`).
  std::optional<double> bindingEta;
  std::vector<EtaLimit> limits;  // where the analysis stops applying inside the knob range
  // ε over the η where the analysis applies (sampled on the grid and at the limits).
  double epsilonMin = 0.0;
  double epsilonMax = 0.0;
  std::vector<Violation> otherViolations;  // assumptions that fail whatever η is
  std::string note;                        // all of the above in words (legend and tooltip text)
};

// Cancellation and progress for the long computations below; both optional.
struct StepSizeControl {
  std::function<void(double)> progress;  // fraction done
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
};

// What the scan of ε(η) found, independent of the target.
struct StepSizeScan {
  std::string accountant;
  double sigma = 0.0;
  EtaTrend trend = EtaTrend::kConstant;
  std::string trendNote;  // why ε moves with η (or does not), in words, citing the analysis
  std::vector<EtaLimit> limits;
  double etaLow = 0.0, etaHigh = 0.0;         // the smallest and largest η where the analysis applies
  double epsilonMin = 0.0, epsilonMax = 0.0;  // ε over those η
  std::vector<Violation> otherViolations;
  std::vector<Result<StepSizeRange>> targets;  // one per target asked for, in order
};

// For one target ε. Fails with NotApplicable, saying why and giving the range of ε reachable,
// when no η in the knob range meets the target where the analysis applies (including when ε
// does not depend on η and is above the target), and when the analysis applies at no η.
Result<StepSizeRange> stepSizesForTarget(const Accountant& accountant, const Params& params, double targetEpsilon,
                                         const EpsilonOptions& options = {});
// The same for many targets, scanning ε(η) once. Fails for invalid params or targets, an
// analysis that applies at no η, or cancellation (Cancelled); a target out of reach fails alone.
Result<StepSizeScan> stepSizesForTargets(const Accountant& accountant, const Params& params,
                                         std::span<const double> targets, const EpsilonOptions& options = {},
                                         const StepSizeControl& control = {});

}  // namespace dpx::core::accounting
