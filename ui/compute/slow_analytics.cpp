#include "compute/slow_analytics.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "accounting/curves.h"
#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/registry.h"
#include "accounting/shuffle_accountant.h"
#include "accounting/stepsize_chart.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "common/parallel.h"

namespace dpx::ui {

using namespace core::accounting;

namespace {

// The exact trade-off curve of the run.
PlotCurve pldTradeoffCurve(const TradeoffCurve& curve) {
  const std::string& pld = accountantOf<PldAccountant>().info().id;
  PlotCurve c;
  c.id = "tradeoff:" + pld;
  c.accountant = pld;
  c.label = "exact (" + pld + ")";
  c.tooltip = "exact trade-off of the composition (pessimistic discretisation: never above the truth)";
  c.x = curve.typeOne;
  c.y = curve.typeTwo;
  return c;
}

// What the upper ε-vs-K curve is: its loss grid and how the grid was chosen.
std::string pldCurveTooltip(const PldCurve& curve) {
  return "exact composition, pessimistic discretisation (an upper bound), one loss grid Δ = " +
         core::formatNumber(curve.discretisation, 3) + " for the curve (" +
         (curve.automatic ? "chosen for a " + core::formatNumber(100 * curve.requestedWidth, 3) +
                                " % bracket at K = " + std::to_string(curve.gridSteps)
                          : std::string("fixed")) +
         ")";
}

// The upper and lower ε-vs-K curves (x in epochs on the epochs axis); a point a bound failed at
// is left out of that curve, and a curve that failed as a whole says why in its tooltip.
void setPldEpsilonCurves(PldSnapshot& s, const core::Result<PldCurve>& curve) {
  const double toEpochs = static_cast<double>(s.params.m) / static_cast<double>(s.params.n);
  const std::string& pld = accountantOf<PldAccountant>().info().id;
  s.epsilonUpper.id = pldUpperCurveId();
  s.epsilonUpper.accountant = pld;
  s.epsilonUpper.label = pld + " (exact, upper)";
  s.epsilonLower.id = pldLowerCurveId();
  s.epsilonLower.accountant = pld;
  s.epsilonLower.label = pld + " (exact, lower)";
  s.epsilonLower.dashed = true;
  s.epsilonLower.tooltip = "optimistic discretisation: the true ε lies between the two " + pld + " curves";
  if (!curve) {
    s.epsilonUpper.tooltip = "no ε-vs-K curve: " + curve.status().message();
    return;
  }
  for (const PldCurvePoint& point : curve->points) {
    const double x = s.epochsAxis ? static_cast<double>(point.steps) * toEpochs : static_cast<double>(point.steps);
    if (point.epsilonUpper) {
      s.epsilonUpper.x.push_back(x);
      s.epsilonUpper.y.push_back(*point.epsilonUpper);
    }
    if (point.epsilonLower) {
      s.epsilonLower.x.push_back(x);
      s.epsilonLower.y.push_back(*point.epsilonLower);
    }
  }
  s.epsilonUpper.tooltip = pldCurveTooltip(*curve);
}

}  // namespace

std::string pldUpperCurveId() { return accountantOf<PldAccountant>().info().id; }
std::string pldLowerCurveId() { return pldUpperCurveId() + ":lower"; }
std::string shuffleCurveId() { return accountantOf<ShuffleAccountant>().info().id; }
std::string randomAllocationCurveId() { return accountantOf<RandomAllocationAccountant>().info().id; }

bool showsRandomAllocation(const core::Params& params) {
  return params.sampling && *params.sampling != core::Sampling::kPoisson;
}

namespace {

// The shuffle lower bound at the run and along `steps`, and the note comparing it with the
// Poisson upper bound. The Poisson bracket is at q = m/n ≥ 1/T (T = ⌈n/m⌉ batches per pass), so
// a lower bound above it is above the Poisson ε at q = 1/T too. False when cancelled.
bool addShuffleLowerBound(PldSnapshot& s, const std::vector<std::int64_t>& steps, const std::atomic<bool>& cancel) {
  const ShuffleAccountant* shuffle = &accountantOf<ShuffleAccountant>();
  AccountantSummary& row = s.shuffle;
  row.id = std::string(shuffle->id());
  row.name = std::string(shuffle->name());
  row.citation = std::string(shuffle->citation());
  row.bound = shuffle->boundKind();
  row.assumptions = shuffle->assumptions().statements;
  row.violations = shuffle->check(s.params);
  EpsilonOptions options;
  options.exact.cancel = &cancel;
  if (auto native = shuffle->native(s.params)) row.native = *native;
  auto eps = shuffle->epsilon(s.params, options);
  if (cancel) return false;
  if (eps) {
    row.epsilon = *eps;
  } else {
    row.error = eps.status().message();
  }
  PlotCurve& curve = s.shuffleCurve;
  curve.id = shuffleCurveId();
  curve.accountant = row.id;
  curve.label = row.id + " (lower bound)";
  curve.greyed = !row.violations.empty();
  curve.tooltip = curve.greyed
                      ? violationsText(row.violations)
                      : "a lower bound for shuffled batches: the true ε of a shuffled pipeline is at least this";
  const double toEpochs = static_cast<double>(s.params.m) / static_cast<double>(s.params.n);
  // Each K composes its own passes on its own grid: the points share out over the threads.
  std::vector<std::optional<double>> values(steps.size());
  core::parallelFor(std::size_t{0}, steps.size(), [&](std::size_t i) {
    if (cancel) return;
    core::Params p = s.params;
    p.K = steps[i];
    if (auto e = shuffle->epsilon(p, options)) values[i] = e->epsilon;
  });
  if (cancel) return false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!values[i]) continue;
    const auto k = static_cast<double>(steps[i]);
    curve.x.push_back(s.epochsAxis ? k * toEpochs : k);
    curve.y.push_back(*values[i]);
  }
  if (row.epsilon && s.epsilon) {
    const std::string lower = core::formatNumber(row.epsilon->epsilon, 4);
    const std::string upper = core::formatNumber(s.epsilon->epsilon, 4);
    s.poissonNotABound = row.epsilon->epsilon > s.epsilon->epsilon;
    s.samplerNote = s.poissonNotABound
                        ? "shuffled batches: ε ≥ " + lower + ", above the Poisson upper bound " + upper +
                              " — Poisson accounting does not bound a shuffled pipeline of this run (Chua et al. 2024)"
                        : "shuffled batches: ε ≥ " + lower + ", not above the Poisson upper bound " + upper +
                              " — no contradiction found, which does not make Poisson ε a bound for shuffling";
  }
  return true;
}

// The random-allocation upper bound at the run and along `steps` (a sparser axis: every point
// is a composition of its own epochs), when showsRandomAllocation. False when cancelled.
bool addRandomAllocation(PldSnapshot& s, const std::vector<std::int64_t>& steps, const std::atomic<bool>& cancel) {
  const RandomAllocationAccountant& ra = accountantOf<RandomAllocationAccountant>();
  AccountantSummary& row = s.randomAllocation;
  row.id = std::string(ra.id());
  row.name = std::string(ra.name());
  row.citation = std::string(ra.citation());
  row.bound = ra.boundKind();
  row.assumptions = ra.assumptions().statements;
  row.violations = ra.check(s.params);
  if (auto native = ra.native(s.params)) row.native = *native;
  if (!showsRandomAllocation(s.params)) {
    row.error =
        "computed when the Sampling knob names a batching without Poisson sampling (balls-in-bins, "
        "shuffle, …): an exact composition of seconds";
    return true;
  }
  EpsilonOptions options;
  options.exact.cancel = &cancel;
  auto eps = ra.epsilon(s.params, options);
  if (cancel) return false;
  if (eps) {
    row.epsilon = *eps;
  } else {
    row.error = eps.status().message();
  }
  PlotCurve& curve = s.randomAllocationCurve;
  curve.id = randomAllocationCurveId();
  curve.accountant = row.id;
  curve.label = row.id + " (balls in bins)";
  curve.greyed = !row.violations.empty();
  curve.tooltip = curve.greyed ? violationsText(row.violations)
                               : "an upper bound for balls-in-bins batches (each record in one random batch per epoch)";
  // Its ε moves with whole epochs only: one point per distinct epoch count of the axis.
  const double perEpoch = static_cast<double>(s.params.m) / static_cast<double>(s.params.n);
  std::vector<std::int64_t> axis;
  std::int64_t lastEpochs = -1;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto epochs = static_cast<std::int64_t>(std::ceil(static_cast<double>(steps[i]) * perEpoch - 1e-9));
    if (epochs == lastEpochs && i + 1 != steps.size()) continue;
    lastEpochs = epochs;
    axis.push_back(steps[i]);
  }
  if (axis.size() > static_cast<std::size_t>(kRandomAllocationCurvePoints)) {
    std::vector<std::int64_t> thinned;
    for (int i = 0; i < kRandomAllocationCurvePoints; ++i) {
      thinned.push_back(axis[static_cast<std::size_t>(i) * (axis.size() - 1) / (kRandomAllocationCurvePoints - 1)]);
    }
    axis = thinned;
  }
  std::vector<std::optional<double>> values(axis.size());
  core::parallelFor(std::size_t{0}, axis.size(), [&](std::size_t i) {
    if (cancel) return;
    core::Params p = s.params;
    p.K = axis[i];
    if (auto e = ra.epsilon(p, options)) values[i] = e->epsilon;
  });
  if (cancel) return false;
  for (std::size_t i = 0; i < axis.size(); ++i) {
    if (!values[i]) continue;
    const auto k = static_cast<double>(axis[i]);
    curve.x.push_back(s.epochsAxis ? k * perEpoch : k);
    curve.y.push_back(*values[i]);
  }
  if (row.epsilon && s.epsilon) {
    const bool above = row.epsilon->epsilon > s.epsilon->epsilon;
    s.samplerNote += (s.samplerNote.empty() ? "" : "; ") + std::string("balls-in-bins batches: ε ≤ ") +
                     core::formatNumber(row.epsilon->epsilon, 4) + (above ? ", above" : ", below") +
                     " the Poisson upper bound (both are shown: neither is the smaller by rule)";
  }
  return true;
}

}  // namespace

std::optional<PldSnapshot> computePld(const core::Params& params, bool epochsAxis, const std::atomic<bool>& cancel,
                                      const std::function<void(double)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<PldSnapshot> s = computePoissonPld(params, epochsAxis, cancel, progress);
  if (!s || (s->error.empty() && !addShuffleStage(*s, cancel))) return std::nullopt;
  s->milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

bool addShuffleStage(PldSnapshot& snapshot, const std::atomic<bool>& cancel) {
  const std::vector<std::int64_t> steps = pldCurveSteps(snapshot.params);
  if (!addShuffleLowerBound(snapshot, steps, cancel)) return false;
  if (!addRandomAllocation(snapshot, steps, cancel)) return false;
  snapshot.shuffleDone = true;
  return true;
}

std::optional<PldSnapshot> computePoissonPld(const core::Params& params, bool epochsAxis,
                                             const std::atomic<bool>& cancel,
                                             const std::function<void(double)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  PldSnapshot s;
  s.params = params;
  s.epochsAxis = epochsAxis;
  PldAccountant pld;
  EpsilonOptions options;
  options.exact.cancel = &cancel;
  options.exact.progress = [&](double f) { progress(0.3 * f); };
  auto eps = pld.epsilon(params, options);
  if (cancel) return std::nullopt;
  if (!eps) {
    s.error = eps.status().message();
    return s;
  }
  s.epsilon = *eps;
  // Exact trade-off curve (cached run: no recomputation).
  const std::vector<double> grid = defaultTypeOneGrid(kTradeoffPoints);
  if (auto curve = pld.tradeoff(params, grid, options)) s.tradeoff = pldTradeoffCurve(*curve);
  // ε bracket vs K: core's pldEpsilonCurve, the function behind `dpx curve --accountant pld
  // --vary K --from 1 --to <max K> --points 24 --spacing log`, so both show the same numbers.
  const std::vector<std::int64_t> steps = pldCurveSteps(params);
  ExactOptions exact;
  exact.cancel = &cancel;
  exact.progress = [&](double f) { progress(0.3 + 0.7 * f); };
  const core::Result<PldCurve> curve = pldEpsilonCurve(params, steps, exact);
  if (cancel || (!curve && curve.status().code() == core::StatusCode::kCancelled)) return std::nullopt;
  setPldEpsilonCurves(s, curve);
  progress(1.0);
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

std::vector<std::int64_t> pldCurveSteps(const core::Params& params) {
  const CurveSpec spec{CurveVariable::kSteps, 1.0, static_cast<double>(epsilonAxisMaxSteps(params)), kPldCurvePoints,
                       true};
  std::vector<std::int64_t> steps;
  if (core::Result<std::vector<double>> xs = curveAxis(spec)) {
    for (double x : *xs) steps.push_back(static_cast<std::int64_t>(x));
  }
  // Rounding repeats small K on a short axis (1, 1, 2, …): one point each.
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
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
