#include "accounting/gdp_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "accounting/rdp_accountant.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "numerics/root_finding.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {
namespace {

// log δ(ε; μ) = log[Φ(a) − e^ε Φ(a − μ)], a = −ε/μ + μ/2; both terms in log space.
double gdpLogDelta(double mu, double epsilon) {
  const double a = -epsilon / mu + mu / 2.0;
  const double logFirst = numerics::logNormalCdf(a);
  const double logSecond = epsilon + numerics::logNormalCdf(a - mu);
  // When the two terms round to the same double, δ is below anything representable; a finite
  // floor keeps root finding away from −∞.
  return std::max(numerics::logSubExp(logFirst, logSecond), -5000.0);
}

}  // namespace

Result<double> gdpMu(double q, double sigma, double steps) {
  if (!(q > 0 && q <= 1) || !(sigma > 0) || !(steps >= 1)) {
    return Status::invalidArgument("gdp needs q ∈ (0, 1], σ > 0 and K ≥ 1");
  }
  const double mu = q * std::sqrt(steps * std::expm1(1.0 / (sigma * sigma)));
  if (isReportable(mu)) return mu;  // the message is only formatted when needed: curves ask per point
  return finiteOrStatus(mu, "μ = q√(K(e^{1/σ²} − 1)) at σ = " + formatNumber(sigma));
}

double gdpDelta(double mu, double epsilon) {
  if (mu <= 0.0) return 0.0;
  return std::exp(gdpLogDelta(mu, epsilon));
}

Result<double> gdpEpsilon(double mu, double delta) {
  if (!(delta > 0.0 && delta < 1.0)) return Status::invalidArgument("δ must be in (0, 1)");
  if (!(mu > 0.0) || !std::isfinite(mu)) return Status::invalidArgument("μ must be a positive finite number");
  const double logTarget = std::log(delta);
  auto f = [&](double eps) { return gdpLogDelta(mu, eps) - logTarget; };
  if (f(0.0) <= 0.0) return 0.0;
  // δ(ε) ≤ Φ(−ε/μ + μ/2): ε = μ²/2 + μ·(Φ⁻¹(1−δ) + 1) is already past the root; double
  // from there if rounding disagrees.
  double hi = mu * mu / 2.0 + mu * (numerics::normalQuantileComplement(delta) + 1.0);
  hi = std::max(hi, 1e-12);
  int guard = 0;
  while (f(hi) > 0.0) {
    hi *= 2.0;
    if (++guard > 2000 || !std::isfinite(hi)) return Status::numericalIssue("ε(δ) of μ-GDP exceeds 1e300");
  }
  DPX_ASSIGN_OR_RETURN(const double root, numerics::findRoot(f, 0.0, hi));
  return finiteOrStatus(root, "ε of μ-GDP");
}

GdpAccountant::GdpAccountant()
    : GaussianDpAccountant({
          .id = "gdp",
          .name = "Gaussian DP central limit theorem",
          .citation = "Bu, Dong, Long & Su 2020, Deep Learning with Gaussian DP, eq. 3.1 and Thm 5 (CLT); Dong, Roth & "
                      "Su 2022, Cor. 2.13 (δ(ε) of μ-GDP)",
          .bound = BoundKind::kEstimate,
          .assumptions = dpSgdAssumptions({"asymptotic: q → 0 and K → ∞ with q√K fixed — an estimate, not a bound"}),
          .nativeKeys = {std::string(kGdpMuKey)},
          .color = 0xff7f0e,
          .reportsGdpMu = true,
      }) {}

void GdpAccountant::addViolations(const Params& params, std::vector<Violation>& out) const {
  if (params.q() > kMaxSamplingRate) {
    out.push_back({"CLT regime", "q = " + formatNumber(params.q(), 4) + " > " + formatNumber(kMaxSamplingRate) +
                                     ": the CLT needs a small sampling rate"});
  }
  if (params.K < kMinSteps) {
    out.push_back({"CLT regime", "K = " + std::to_string(params.K) + " < " + std::to_string(kMinSteps) +
                                     ": the CLT needs many steps"});
  }
}

Result<double> GdpAccountant::mu(const Params& params) const {
  DPX_RETURN_IF_ERROR(params.validate());
  return gdpMu(params.q(), params.sigma, static_cast<double>(params.K));
}

Result<std::vector<NativeValue>> GdpAccountant::native(const Params& params) const {
  DPX_ASSIGN_OR_RETURN(const double m, mu(params));
  return std::vector<NativeValue>{{std::string(kGdpMuKey), "μ = q√(K(e^{1/σ²} − 1))", m}};
}

Result<EpsilonResult> GaussianDpAccountant::epsilon(const Params& params, const EpsilonOptions&) const {
  DPX_ASSIGN_OR_RETURN(const double m, mu(params));
  DPX_ASSIGN_OR_RETURN(const double eps, gdpEpsilon(m, params.delta));
  EpsilonResult result;
  result.epsilon = eps;
  result.delta = params.delta;
  result.bound = boundKind();
  return result;
}

Result<double> GaussianDpAccountant::delta(const Params& params, double epsilon, const EpsilonOptions&) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const double m, mu(params));
  return gdpDelta(m, epsilon);
}

Result<TradeoffCurve> GaussianDpAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                                     const EpsilonOptions&) const {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  DPX_ASSIGN_OR_RETURN(const double m, mu(params));
  TradeoffCurve curve;
  curve.typeOne.assign(typeOne.begin(), typeOne.end());
  for (double x : typeOne) curve.typeTwo.push_back(gaussianTradeoff(m, x));
  return curve;
}

}  // namespace dpx::core::accounting
