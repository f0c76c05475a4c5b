#include "accounting/stepsize_analysis.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "accounting/calibration.h"
#include "accounting/rdp_conversion.h"
#include "accounting/sgmcmc_accountant.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// The σ range searched for the step-size bounds: wider than the slider because tiny targets
// need σ ≫ 100 (η ∝ 1/σ²).
constexpr double kSigmaLo = 1e-3;
constexpr double kSigmaHi = 1e5;

Result<EpsilonResult> epsilonOfRun(const Params& p, double sigma1, bool decreasing, const EpsilonOptions& options,
                                   std::optional<double> hint = {}) {
  Result<OrderGrid> grid = ordersFor(options);
  if (!grid) return grid.status();
  const std::span<const double> orders = grid->orders();
  auto rdpAt = [&](std::size_t i) { return sgmcmcTotalRdp(p.q(), sigma1, p.K, decreasing, orders[i]); };
  Result<OrderOptimum> best = minimizeOverOrders(orders, rdpAt, p.delta, options.conversion, true, hint);
  if (!best) return best.status();
  EpsilonResult r;
  r.epsilon = best->epsilon;
  r.delta = p.delta;
  r.alpha = best->alpha;
  r.conversion = options.conversion;
  return r;
}

// η = τ²/(L²σ²N) inverts σ = τ/(L√(ηN)). Rounded down until the η it returns maps back to a
// noise multiplier ≥ σ, so the step reported keeps the ε certified at σ.
double etaForSigma(const Params& p, double sigma) {
  const double tau = static_cast<double>(p.m);
  double eta = tau * tau / (p.L * p.L * sigma * sigma * static_cast<double>(p.n));
  for (int i = 0; i < 64 && sgmcmcNoiseMultiplier(p, eta) < sigma; ++i) eta = std::nextafter(eta, 0.0);
  return eta;
}

struct ExactBounds {
  double sigmaFixed, sigmaDecreasing;
};

Result<ExactBounds> exactBounds(const Params& p, double target, const EpsilonOptions& options) {
  std::optional<double> hint;
  auto run = [&](double s, bool decreasing) {
    Result<EpsilonResult> e = epsilonOfRun(p, s, decreasing, options, hint);
    if (e) hint = e->alpha;
    return e;
  };
  // Meeting the target at the smallest σ searched means the largest step size lies beyond the
  // search (and far beyond η ≤ N/L²): there is no finite answer to report.
  auto unbounded = [&](const Calibration& c) {
    return Status::notApplicable("target ε = " + formatNumber(target) + " is met even at σ_eff = " +
                                   formatNumber(c.sigma) + " (η = " + formatNumber(etaForSigma(p, c.sigma)) +
                                   "): the step size is not limited by privacy here");
  };
  auto fixed = calibrateDecreasing([&](double s) { return run(s, false); }, target, kSigmaLo, kSigmaHi);
  if (!fixed) return fixed.status().withContext("exact fixed step");
  if (fixed->atLowerLimit) return unbounded(*fixed).withContext("exact fixed step");
  // σ_t = σ₁t^{1/6} ≥ σ₁, so σ₁ = σ* (the fixed answer) is private enough and σ₁ = σ*/T^{1/6}
  // is not: the decreasing answer lies in between, and a narrow bracket keeps the search on few
  // lattice cells. Should rounding ever put the answer outside, the whole range is searched.
  const double spread = std::pow(static_cast<double>(p.K), 1.0 / 6.0);
  const double hi = std::min(kSigmaHi, fixed->sigma * (1.0 + 1e-9));
  const double lo = std::max(kSigmaLo, fixed->sigma / spread * (1.0 - 1e-9));
  auto decreasingOf = [&](double s) { return run(s, true); };
  Result<Calibration> decreasing = Status::invalidArgument("empty bracket");
  if (lo < hi) decreasing = calibrateDecreasing(decreasingOf, target, lo, hi);
  if (!decreasing || (decreasing->atLowerLimit && lo > kSigmaLo)) {
    decreasing = calibrateDecreasing(decreasingOf, target, kSigmaLo, kSigmaHi);
  }
  if (!decreasing) return decreasing.status().withContext("exact decreasing step");
  if (decreasing->atLowerLimit) return unbounded(*decreasing).withContext("exact decreasing step");
  return ExactBounds{fixed->sigma, decreasing->sigma};
}

}  // namespace

std::vector<StepSizeLimit> stepSizeLimits(const Params& p) {
  const double N = static_cast<double>(p.n);
  std::vector<StepSizeLimit> limits{
      {"sgld_lsi", "η < 1/β (seed 000, LSI of DP-SGLD)", "<", 1.0 / p.beta},
      {"sgld_utility", "η ≤ 1/(2β) (seed 000, utility bounds)", "<=", 1.0 / (2.0 * p.beta)},
  };
  if (p.M + p.w > 0.0) limits.push_back({"cyclic", "η ≤ 1/(M+w) (seed 001, eq. 12)", "<=", 1.0 / (p.M + p.w)});
  limits.push_back({"outpert", "η < 2/β (seed 002, contraction)", "<", 2.0 / p.beta});
  limits.push_back({"outpert_optimal", "η* = 2/(β+λ) (seed 002, smallest ρ)", "=", 2.0 / (p.beta + p.lambda)});
  limits.push_back({"sgmcmc_upper", "η ≤ N/L² (seed 004, Thm 3 cond. 1)", "<=", N / (p.L * p.L)});
  limits.push_back({"sgmcmc_lower", "η > q²N/(256L²) (seed 004, Thm 3 cond. 2)", ">",
                    p.q() * p.q() * N / (256.0 * p.L * p.L)});
  return limits;
}

double wangStepSize(const Params& p, double eps) {
  const double T = static_cast<double>(p.K);
  return eps * eps * static_cast<double>(p.n) /
         (128.0 * p.L * p.L * T * std::log(2.5 * T / p.delta) * std::log(2.0 / p.delta));
}

Result<StepSizeAnalysis> analyzeStepSize(const Params& p, double target, const EpsilonOptions& options) {
  DPX_RETURN_IF_ERROR(p.validate());
  if (!std::isfinite(target) || target <= 0.0) {
    return Status::invalidArgument("target-epsilon = " + formatNumber(target) +
                                   " is out of range: the target ε must be > 0");
  }
  Result<ExactBounds> exact = exactBounds(p, target, options);
  if (!exact) return exact.status();
  StepSizeAnalysis a{};
  a.targetEpsilon = target;
  a.sigmaFixed = exact->sigmaFixed;
  a.sigmaDecreasing1 = exact->sigmaDecreasing;
  a.exactFixed = etaForSigma(p, a.sigmaFixed);
  a.exactDecreasingEta1 = etaForSigma(p, a.sigmaDecreasing1);
  const double T = static_cast<double>(p.K);
  const double N = static_cast<double>(p.n);
  const double logInvDelta = -std::log(p.delta);
  const double q = p.q();
  a.c = a.sigmaFixed * target / (q * std::sqrt(T * logInvDelta));
  a.c2 = a.sigmaDecreasing1 * target / (q * std::sqrt(std::pow(T, 2.0 / 3.0) * logInvDelta));
  a.liFixed = target * target * N / (a.c * a.c * p.L * p.L * T * logInvDelta);
  a.liDecreasingT1 = target * target * N / (a.c2 * a.c2 * p.L * p.L * std::pow(T, 2.0 / 3.0) * logInvDelta);
  a.wang = wangStepSize(p, target);
  Result<EpsilonResult> current = epsilonOfRun(p, sgmcmcNoiseMultiplier(p, p.eta), false, options);
  if (!current) return current.status().withContext("ε at the current η");
  a.epsilonAtCurrentEta = current->epsilon;
  a.limits = stepSizeLimits(p);
  for (const auto& [name, value] : {std::pair{"exact fixed η", a.exactFixed}, {"exact decreasing η₁", a.exactDecreasingEta1},
                                    {"c", a.c}, {"c₂", a.c2}, {"Li et al. fixed η", a.liFixed},
                                    {"Li et al. decreasing η at t = 1", a.liDecreasingT1}, {"Wang et al. η", a.wang},
                                    {"ε at the current η", a.epsilonAtCurrentEta}}) {
    if (Result<double> v = finiteOrStatus(value, name); !v) return v.status().withContext("step-size analysis");
  }
  return a;
}

Result<StepSizeCurves> stepSizeCurves(const Params& p, std::span<const double> epsilons, double referenceEpsilon,
                                      const EpsilonOptions& options) {
  DPX_RETURN_IF_ERROR(p.validate());
  Result<ExactBounds> reference = exactBounds(p, referenceEpsilon, options);
  if (!reference) return reference.status();
  const double T = static_cast<double>(p.K);
  const double N = static_cast<double>(p.n);
  const double logInvDelta = -std::log(p.delta);
  const double q = p.q();
  const double c = reference->sigmaFixed * referenceEpsilon / (q * std::sqrt(T * logInvDelta));
  const double c2 = reference->sigmaDecreasing * referenceEpsilon / (q * std::sqrt(std::pow(T, 2.0 / 3.0) * logInvDelta));
  StepSizeCurves curves;
  for (double eps : epsilons) {
    Result<ExactBounds> exact = exactBounds(p, eps, options);
    if (!exact) continue;  // a target out of reach (or not limiting) has no step size; the curve skips it
    const std::array<double, 5> point{etaForSigma(p, exact->sigmaFixed), etaForSigma(p, exact->sigmaDecreasing),
                                      eps * eps * N / (c * c * p.L * p.L * T * logInvDelta),
                                      eps * eps * N / (c2 * c2 * p.L * p.L * std::pow(T, 2.0 / 3.0) * logInvDelta),
                                      wangStepSize(p, eps)};
    if (!std::all_of(point.begin(), point.end(), isReportable)) continue;
    curves.epsilon.push_back(eps);
    curves.exactFixed.push_back(point[0]);
    curves.exactDecreasing.push_back(point[1]);
    curves.liFixed.push_back(point[2]);
    curves.liDecreasing.push_back(point[3]);
    curves.wang.push_back(point[4]);
  }
  if (curves.epsilon.empty()) return Status::invalidArgument("no target ε in the range is reachable");
  return curves;
}

}  // namespace dpx::core::accounting
