// Every curve of the step-size chart — step size η against the target ε, in the style of Li,
// Chen, Liu & Carin 2019, Fig. 1 — as plain data, off the GUI thread:
//  * SG-MCMC (Li, Chen, Liu & Carin 2019): the exact largest fixed η and decreasing η₁ (the `rdp`
//    accountant at σ_eff = τ/(L√(ηN))), the closed forms of Thm 4 and Thm 3 (t = 1) with c and c₂
//    held at their values for a reference ε, and Wang, Fienberg & Smola 2015;
//  * `sgld` (Ryffel, Bach & Pointcheval 2022, Thm 3.1) and `cyclic` (Kong & Ribero 2024, Thm 4.5):
//    the η that the target sets with σ fixed (stepSizesForTargets), with a note saying which side
//    binds, where the analysis stops applying and when η does not matter at all;
//  * the smoothness limits on η (stepSizeLimits).
// A target with no answer for a curve (out of reach, or not limited by privacy) has no point on
// it; the curve's note says which targets and why. Nothing non-finite is returned.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accounting/accountant.h"
#include "accounting/stepsize_analysis.h"

namespace dpx::core::accounting {

struct StepSizeChartCurve {
  std::string id;          // "exact_fixed", "exact_decreasing", "li_fixed", "li_decreasing", "wang", "sgld", "cyclic"
  std::string label;       // legend text
  std::string accountant;  // "sgmcmc", "sgld", "cyclic"; "" for Wang et al. (no accountant of its own)
  std::vector<double> epsilon;  // x: target ε
  std::vector<double> eta;      // y: the step size for that target
  bool dashed = false;          // a closed form or a reference, not an exact answer
  bool greyed = false;          // assumptions that do not involve η fail for this run (the note says which)
  std::string note;             // tooltip: what the curve is and where it has no point, and why
};

struct StepSizeChart {
  std::vector<double> targets;  // the target ε asked for
  double referenceEpsilon = 0.0;
  std::vector<StepSizeChartCurve> curves;  // in the order of the ids above
  std::vector<StepSizeLimit> limits;
  std::optional<double> epsilonAtCurrentEta;  // `sgmcmc` at the run's η and schedule
  // Set when no curve has a single point, saying why (e.g. every target out of reach).
  std::string message;
};

struct StepSizeChartOptions {
  EpsilonOptions epsilon;
  StepSizeControl control;
};

// `points` targets log-spaced over [reference/spread, reference·spread] (points ≥ 2, spread > 1).
std::vector<double> stepSizeTargets(double referenceEpsilon, int points = 18, double spread = 20.0);

// Fails for invalid params or targets (every target must be > 0, the reference too) and when
// cancelled (Cancelled); everything else ends up in the curves' notes.
Result<StepSizeChart> stepSizeChart(const Params& params, std::span<const double> targets, double referenceEpsilon,
                                    const StepSizeChartOptions& options = {});

}  // namespace dpx::core::accounting
