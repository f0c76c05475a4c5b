#include "compute/slow_analytics.h"

#include <chrono>
#include <cmath>

#include "accounting/pld_accountant.h"
#include "accounting/stepsize_chart.h"
#include "accounting/tradeoff.h"
#include "common/format.h"

namespace dpx::ui {

using namespace core::accounting;

std::optional<PldSnapshot> computePld(const core::Params& params, bool epochsAxis, const std::atomic<bool>& cancel,
                                      const std::function<void(double)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  PldSnapshot s;
  s.params = params;
  s.epochsAxis = epochsAxis;
  PldAccountant pld;
  EpsilonOptions options;
  options.exact.cancel = &cancel;
  options.exact.progress = [&](double f) { progress(0.4 * f); };
  auto eps = pld.epsilon(params, options);
  if (cancel) return std::nullopt;
  if (!eps) {
    s.error = eps.status().message();
    return s;
  }
  s.epsilon = *eps;
  double interval = 1e-3;
  for (const NativeValue& v : eps->native) {
    if (v.key == "discretisation") interval = v.value;
  }
  // Exact trade-off curve (cached run: no recomputation).
  const std::vector<double> grid = defaultTypeOneGrid(kTradeoffPoints);
  if (auto curve = pld.tradeoff(params, grid, options)) {
    s.tradeoff.id = "tradeoff:pld";
    s.tradeoff.accountant = "pld";
    s.tradeoff.label = "exact (pld)";
    s.tradeoff.tooltip = "exact trade-off of the composition (pessimistic discretisation: never above the truth)";
    s.tradeoff.x = curve->typeOne;
    s.tradeoff.y = curve->typeTwo;
  }
  // ε bracket vs K on the grid chosen for the current run, coarsened where a point would be
  // heavy: one grid for the whole curve keeps it monotone in K.
  const std::int64_t maxK = epsilonAxisMaxSteps(params);
  const double toEpochs = static_cast<double>(params.m) / static_cast<double>(params.n);
  s.epsilonUpper.id = "pld";
  s.epsilonUpper.accountant = "pld";
  s.epsilonUpper.label = "pld (exact, upper)";
  s.epsilonLower.id = "pld:lower";
  s.epsilonLower.accountant = "pld";
  s.epsilonLower.label = "pld (exact, lower)";
  s.epsilonLower.dashed = true;
  s.epsilonLower.tooltip = "optimistic discretisation: the true ε lies between the two pld curves";
  const double curveInterval = std::max(interval, 2e-3);
  for (int i = 0; i < kPldCurvePoints; ++i) {
    if (cancel) return std::nullopt;
    const double k = std::round(std::exp(std::log(static_cast<double>(maxK)) * i / (kPldCurvePoints - 1)));
    const pld::GaussianSegment segment{params.q(), params.sigma, static_cast<std::int64_t>(k)};
    ExactOptions exact;
    exact.cancel = &cancel;
    auto run = pldComposeSegments(std::span<const pld::GaussianSegment>(&segment, 1), curveInterval, exact);
    progress(0.4 + 0.6 * (i + 1) / kPldCurvePoints);
    if (!run) continue;
    auto up = run->epsilonUpper(params.delta);
    auto lo = run->epsilonLower(params.delta);
    const double x = epochsAxis ? k * toEpochs : k;
    if (up) {
      s.epsilonUpper.x.push_back(x);
      s.epsilonUpper.y.push_back(*up);
    }
    if (lo) {
      s.epsilonLower.x.push_back(x);
      s.epsilonLower.y.push_back(*lo);
    }
  }
  s.epsilonUpper.tooltip = "exact composition, pessimistic discretisation (an upper bound), Δ = " +
                           core::formatNumber(curveInterval, 3);
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

std::optional<StepsizeSnapshot> computeStepsize(const core::Params& params, double referenceEpsilon,
                                                const std::atomic<bool>& cancel,
                                                const std::function<void(double)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  StepsizeSnapshot s;
  s.params = params;
  s.referenceEpsilon = referenceEpsilon;
  s.limits = stepSizeLimits(params);
  StepSizeChartOptions options;
  options.control.cancel = &cancel;
  options.control.progress = progress;
  const std::vector<double> targets = stepSizeTargets(referenceEpsilon, kStepsizePoints, kStepsizeSpread);
  core::Result<StepSizeChart> chart = stepSizeChart(params, targets, referenceEpsilon, options);
  if (cancel || (!chart && chart.status().code() == core::StatusCode::kCancelled)) return std::nullopt;
  if (!chart) {
    s.error = chart.status().message();
  } else {
    s.error = chart->message;
    s.epsilonAtCurrentEta = chart->epsilonAtCurrentEta;
    for (StepSizeChartCurve& c : chart->curves) {
      PlotCurve curve;
      curve.id = std::move(c.id);
      curve.label = std::move(c.label);
      curve.accountant = std::move(c.accountant);
      curve.x = std::move(c.epsilon);
      curve.y = std::move(c.eta);
      curve.greyed = c.greyed;
      curve.dashed = c.dashed;
      curve.tooltip = std::move(c.note);
      s.curves.push_back(std::move(curve));
    }
  }
  progress(1.0);
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace dpx::ui
