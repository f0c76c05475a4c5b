#include "compute/slow_analytics.h"

#include <chrono>
#include <cmath>

#include "accounting/pld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
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
  std::vector<double> epsilons;
  for (int i = 0; i < kStepsizePoints; ++i) {
    epsilons.push_back(std::exp(std::log(0.02) + (std::log(2.0) - std::log(0.02)) * i / (kStepsizePoints - 1)));
  }
  PlotCurve exactFixed{"exact_fixed", "exact, fixed η (rdp)", "sgmcmc", {}, {}, false, false,
                       "largest constant η whose run has rdp ε ≤ target"};
  PlotCurve exactDecreasing{"exact_decreasing", "exact, η₁ of η₁t^(−1/3)", "sgmcmc", {}, {}, false, false,
                            "largest first step of the decreasing schedule (heterogeneous composition)"};
  PlotCurve liFixed{"li_fixed", "Li et al. Thm 4 (c fixed)", "sgmcmc", {}, {}, false, true,
                    "closed form with c derived at the reference ε"};
  PlotCurve liDecreasing{"li_decreasing", "Li et al. Thm 3 at t = 1 (c₂ fixed)", "sgmcmc", {}, {}, false, true,
                         "closed form with c₂ derived at the reference ε"};
  PlotCurve wang{"wang", "Wang et al. 2015", "", {}, {}, false, true, "ε²N / (128 L² T log(2.5T/δ) log(2/δ))"};
  // The closed forms hold c and c₂ at their values for the reference ε (seed 004 Fig. 1).
  auto reference = analyzeStepSize(params, referenceEpsilon);
  if (!reference) {
    s.error = reference.status().message();
    return s;
  }
  const double T = static_cast<double>(params.K);
  const double N = static_cast<double>(params.n);
  const double logInvDelta = -std::log(params.delta);
  // One ε at a time, so a newer request can cancel between points.
  for (std::size_t i = 0; i < epsilons.size(); ++i) {
    if (cancel) return std::nullopt;
    const double eps = epsilons[i];
    auto a = analyzeStepSize(params, eps);
    progress(static_cast<double>(i + 1) / static_cast<double>(epsilons.size() + 1));
    if (!a) continue;
    exactFixed.x.push_back(eps);
    exactFixed.y.push_back(a->exactFixed);
    exactDecreasing.x.push_back(eps);
    exactDecreasing.y.push_back(a->exactDecreasingEta1);
    liFixed.x.push_back(eps);
    liFixed.y.push_back(eps * eps * N / (reference->c * reference->c * params.L * params.L * T * logInvDelta));
    liDecreasing.x.push_back(eps);
    liDecreasing.y.push_back(eps * eps * N /
                             (reference->c2 * reference->c2 * params.L * params.L * std::pow(T, 2.0 / 3.0) * logInvDelta));
    wang.x.push_back(eps);
    wang.y.push_back(a->wang);
  }
  s.curves = {exactFixed, exactDecreasing, liFixed, liDecreasing, wang};
  SgmcmcAccountant sgmcmc;
  if (auto e = sgmcmc.epsilon(params)) s.epsilonAtCurrentEta = e->epsilon;
  progress(1.0);
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace dpx::ui
