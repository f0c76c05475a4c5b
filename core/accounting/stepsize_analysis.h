// Step-size bounds for private SGLD (seed 004, Thm 3 and Thm 4; Wang, Fienberg & Smola 2015) and
// the smoothness limits on η from the other seeds (SPEC §2.7, §2.8).
//  exact fixed:      the largest η whose run (σ = τ/(L√(ηN)), T steps) has `rdp` ε ≤ target
//  exact decreasing: the largest η₁ of η_t = η₁t^{−1/3}, likewise (heterogeneous composition)
//  Li et al. closed forms  η < ε²N/(c²L²T log(1/δ))  and  η_t < ε²N t^{−1/3}/(c₂²L²T^{2/3} log(1/δ)),
//      with c = σε/(q√(T log(1/δ))) and c₂ = σ₁ε/(q√(T^{2/3} log(1/δ))) derived from the exact answers
//      (so the closed forms equal them at the target and extrapolate with fixed c, c₂ elsewhere)
//  Wang et al. 2015: η < ε²N / (128 L² T log(2.5T/δ) log(2/δ))
#pragma once

#include <span>
#include <string>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

struct StepSizeLimit {
  std::string id;     // "sgld_lsi", "sgld_utility", "cyclic", "outpert", "outpert_optimal", "sgmcmc_upper", "sgmcmc_lower"
  std::string label;  // "η < 1/β (seed 000, LSI)"
  std::string relation;  // "<", "<=", ">", "="
  double eta;
};

struct StepSizeAnalysis {
  double targetEpsilon;
  double exactFixed;          // largest constant η
  double exactDecreasingEta1;  // largest η₁ of η₁t^{−1/3}
  double sigmaFixed;          // noise multiplier at exactFixed
  double sigmaDecreasing1;    // σ₁ at exactDecreasingEta1
  double c;
  double c2;
  double liFixed;
  double liDecreasingT1;
  double wang;
  double epsilonAtCurrentEta;  // ε of the run at the current η (constant schedule)
  std::vector<StepSizeLimit> limits;
};

// §2.8 smoothness limits and seed 004's conditions η ≤ N/L², η > q²N/(256L²).
std::vector<StepSizeLimit> stepSizeLimits(const Params& params);

// Wang et al. 2015 bound for target ε.
double wangStepSize(const Params& params, double targetEpsilon);

Result<StepSizeAnalysis> analyzeStepSize(const Params& params, double targetEpsilon,
                                         const EpsilonOptions& options = {});

// Curves for the step-size chart (seed 004 Fig. 1): for each ε, the exact fixed and decreasing
// bounds, the closed forms with c and c₂ held at their values for `referenceEpsilon`, and Wang.
struct StepSizeCurves {
  std::vector<double> epsilon;
  std::vector<double> exactFixed;
  std::vector<double> exactDecreasing;
  std::vector<double> liFixed;
  std::vector<double> liDecreasing;
  std::vector<double> wang;
};
Result<StepSizeCurves> stepSizeCurves(const Params& params, std::span<const double> epsilons, double referenceEpsilon,
                                      const EpsilonOptions& options = {});

}  // namespace dpx::core::accounting
