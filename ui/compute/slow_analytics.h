// The slower views, each computed by its own background job with progress and cancellation:
//  * the exact `pld` accountant: its ε bracket, the exact trade-off curve, and the ε-vs-K bracket
//    on a fixed loss grid (so the curve is monotone);
//  * seed 004's step-size bounds vs ε (Fig. 1 style) with the §2.8 smoothness limits.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "accounting/stepsize_analysis.h"
#include "compute/analytics.h"

namespace dpx::ui {

struct PldSnapshot {
  core::Params params;
  bool epochsAxis = false;
  std::optional<core::accounting::EpsilonResult> epsilon;
  std::string error;
  PlotCurve tradeoff;                   // exact (pessimistic) trade-off curve
  PlotCurve epsilonUpper, epsilonLower;  // ε vs K (or epochs)
  double milliseconds = 0.0;
};

inline constexpr int kPldCurvePoints = 24;

// Returns nullopt when cancelled.
std::optional<PldSnapshot> computePld(const core::Params& params, bool epochsAxis, const std::atomic<bool>& cancel,
                                      const std::function<void(double)>& progress);

struct StepsizeSnapshot {
  core::Params params;
  double referenceEpsilon = 1.0;
  std::vector<PlotCurve> curves;  // x = ε, y = η
  std::vector<core::accounting::StepSizeLimit> limits;
  std::optional<double> epsilonAtCurrentEta;
  std::string error;
  double milliseconds = 0.0;
};

inline constexpr int kStepsizePoints = 18;

std::optional<StepsizeSnapshot> computeStepsize(const core::Params& params, double referenceEpsilon,
                                                const std::atomic<bool>& cancel,
                                                const std::function<void(double)>& progress);

}  // namespace dpx::ui
