// The slower views, each computed by its own background job with progress and cancellation:
//  * the exact `pld` accountant: its ε bracket, the exact trade-off curve, and the ε-vs-K bracket
//    (core's pldEpsilonCurve: one loss grid for the curve, so it is monotone);
//  * the step-size chart (core/accounting/stepsize_chart.h): η against the target ε for SG-MCMC
//    (Li, Chen, Liu & Carin 2019, Fig. 1 style; Wang, Fienberg & Smola 2015), `sgld` and `cyclic`,
//    with the smoothness limits on η.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "accounting/stepsize_analysis.h"
#include "accounting/stepsize_chart.h"
#include "compute/analytics.h"

namespace dpx::ui {

struct PldSnapshot {
  core::Params params;
  bool epochsAxis = false;
  std::optional<core::accounting::EpsilonResult> epsilon;
  std::string error;
  PlotCurve tradeoff;                    // exact (pessimistic) trade-off curve
  PlotCurve epsilonUpper, epsilonLower;  // ε vs K (or epochs)
  // The shuffle lower bound beside the Poisson bracket (Chua et al. 2024): its table row, its
  // ε-vs-K curve over the same K, and in words whether Poisson ε can bound a shuffled pipeline.
  AccountantSummary shuffle;
  PlotCurve shuffleCurve;
  std::string samplerNote;
  bool poissonNotABound = false;  // the shuffle lower bound exceeds the Poisson upper bound
  bool shuffleDone = false;       // the shuffle fields are filled (the second stage ran)
  // For a pipeline that batches without Poisson sampling (a Sampling knob other than poisson), the
  // random-allocation upper bound (Feldman & Shenfeld 2025) beside Poisson's and the shuffle
  // lower bound, computed in the same stage: its row and its ε-vs-K curve. Unset sampling leaves
  // it out (seconds of work for a batching the run does not say it uses), and its row says so.
  AccountantSummary randomAllocation;
  PlotCurve randomAllocationCurve;
  double milliseconds = 0.0;
};

inline constexpr int kPldCurvePoints = 24;

// The ids of the ε chart's pld and shuffle curves, made from the accountants' ids: the upper and
// lower ε-vs-K bracket ("pld", "pld:lower") and the shuffle lower bound ("shuffle").
std::string pldUpperCurveId();
std::string pldLowerCurveId();
std::string shuffleCurveId();
std::string randomAllocationCurveId();
// Whether the sampler stage computes the random-allocation bound for these knobs: the run batches
// without Poisson sampling (balls-in-bins, shuffled, uniform or cyclic batches).
bool showsRandomAllocation(const core::Params& params);
inline constexpr int kRandomAllocationCurvePoints = 12;

// The K of the ε-vs-K bracket: kPldCurvePoints log-spaced from 1 to epsilonAxisMaxSteps(params)
// (the analytic curves' axis), rounded, repeats dropped — `dpx curve --vary K --from 1 --to <max>
// --points 24 --spacing log` without its repeats.
std::vector<std::int64_t> pldCurveSteps(const core::Params& params);

// The pld bracket at the run's K, its trade-off, and the ε-vs-K bracket from core's
// pldEpsilonCurve (one loss grid for the curve), then the shuffle lower bound beside it. Returns
// nullopt when cancelled. The explorer shows it in two stages — computePoissonPld, then
// addShuffleStage — so the Poisson bracket is on screen while the shuffle bound (a composition
// per K on its own grid) is still being computed.
std::optional<PldSnapshot> computePld(const core::Params& params, bool epochsAxis, const std::atomic<bool>& cancel,
                                      const std::function<void(double)>& progress);
std::optional<PldSnapshot> computePoissonPld(const core::Params& params, bool epochsAxis,
                                             const std::atomic<bool>& cancel,
                                             const std::function<void(double)>& progress);
// Fills the shuffle fields of a snapshot from computePoissonPld; false when cancelled.
bool addShuffleStage(PldSnapshot& snapshot, const std::atomic<bool>& cancel);

struct StepsizeSnapshot {
  core::Params params;
  double referenceEpsilon = 1.0;
  // x = ε, y = η. Ids: exact_fixed, exact_decreasing, li_fixed, li_decreasing, wang (SG-MCMC),
  // sgld, cyclic; the tooltip says what a curve is and why a target has no point on it.
  std::vector<PlotCurve> curves;
  std::vector<core::accounting::StepSizeLimit> limits;
  std::optional<double> epsilonAtCurrentEta;
  std::string error;
  double milliseconds = 0.0;
};

// Targets: kStepsizePoints log-spaced over [ε/kStepsizeSpread, ε·kStepsizeSpread] around the
// reference ε (the calibration target).
inline constexpr int kStepsizePoints = 18;
inline constexpr double kStepsizeSpread = 20.0;

std::optional<StepsizeSnapshot> computeStepsize(const core::Params& params, double referenceEpsilon,
                                                const std::atomic<bool>& cancel,
                                                const std::function<void(double)>& progress);

}  // namespace dpx::ui
