#include "accounting/output_perturbation_accountant.h"

#include <algorithm>
#include <boost/math/special_functions/expint.hpp>
#include <cmath>
#include <limits>

#include "common/format.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {
namespace {

constexpr double kEulerGamma = 0.57721566490153286061;

// Ein(u) = ∫₀ᵘ (eᵗ − 1)/t dt = Σ_{j≥1} u^j/(j·j!), for u ≥ 0; log of it for large u.
double logEin(double u) {
  if (u <= 0.0) return -std::numeric_limits<double>::infinity();
  if (u < 40.0) {
    double term = 1.0;
    double sum = 0.0;
    for (int j = 1; j < 400; ++j) {
      term *= u / j;
      const double add = term / j;
      sum += add;
      if (add < sum * 1e-17) break;
    }
    return std::log(sum);
  }
  if (u < 700.0) return std::log(boost::math::expint(u) - std::log(u) - kEulerGamma);
  // Ein(u) ~ eᵘ/u·(1 + 1/u + 2/u² + …); the series bounds it within 1e−9 relative here.
  return u - std::log(u) + std::log1p(1.0 / u + 2.0 / (u * u) + 6.0 / (u * u * u) + 24.0 / (u * u * u * u));
}

}  // namespace

double logSumExpGeometric(double c, double r, std::int64_t k) {
  // Σ exp(c rⁱ) = k + Σ expm1(c rⁱ); the second sum is summed exactly for the first terms.
  constexpr std::int64_t kHead = 256;
  const std::int64_t head = std::min(k, kHead);
  std::vector<double> logTerms;
  logTerms.reserve(static_cast<std::size_t>(head) + 2);
  logTerms.push_back(std::log(static_cast<double>(k)));
  double u = c;
  for (std::int64_t i = 0; i < head; ++i) {
    if (u <= 0.0) break;
    logTerms.push_back(u > 50.0 ? u + numerics::log1mExp(-u) : std::log(std::expm1(u)));
    u *= r;
  }
  if (k > head && u > 0.0 && r > 0.0) {
    // Tail Σ_{i=head}^{k−1} expm1(c rⁱ) ≤ expm1(u_head) + ∫_head^{k−1} expm1(c r^x) dx, and the
    // integral is (Ein(u_head) − Ein(u_{k−1}))/(−log r) ≤ Ein(u_head)/(−log r).
    const double a = -std::log(r);
    const double uLast = c * std::exp(static_cast<double>(k - 1) * std::log(r));  // c r^{k−1}
    logTerms.push_back(u > 50.0 ? u + numerics::log1mExp(-u) : std::log(std::expm1(u)));
    logTerms.push_back(numerics::logSubExp(logEin(u), logEin(uLast)) - std::log(a));
  }
  return numerics::logSumExp(logTerms);
}

Result<OutputPerturbationConstants> outputPerturbationConstants(const Params& p) {
  OutputPerturbationConstants c{};
  c.rho = std::max(std::fabs(1.0 - p.eta * p.lambda), std::fabs(1.0 - p.eta * p.beta));
  c.batchesPerEpoch = (p.n + p.m - 1) / p.m;
  c.epochs = (p.K + c.batchesPerEpoch - 1) / c.batchesPerEpoch;
  const double k = static_cast<double>(c.batchesPerEpoch);
  const double E = static_cast<double>(c.epochs);
  const double perVisit = 2.0 * p.eta * p.L / static_cast<double>(p.m);
  const double logRho = std::log(c.rho);
  double geometric;  // Σ_{e<E} ρ^{ke}
  if (c.rho == 1.0) {
    geometric = E;
  } else if (c.rho == 0.0) {
    geometric = 1.0;
  } else {
    geometric = std::expm1(k * E * logRho) / std::expm1(k * logRho);
  }
  c.sensitivity = perVisit * geometric;
  if (!std::isfinite(c.sensitivity)) {
    return Status::numericalIssue("Δ_E exceeds 1e300: ρ = " + formatNumber(c.rho) + " > 1 expands the gap over " +
                                  std::to_string(c.epochs) + " epochs");
  }
  if (c.rho < 1.0) c.sensitivityLimit = perVisit / (c.rho == 0.0 ? 1.0 : -std::expm1(k * logRho));
  c.noiseStd = p.sigma * c.sensitivity;
  if (!std::isfinite(c.noiseStd) || c.noiseStd > 1e300) {
    return Status::numericalIssue("the output noise s = σΔ_E exceeds 1e300: ρ = " + formatNumber(c.rho) +
                                  " expands the gap over " + std::to_string(c.epochs) + " epochs");
  }
  return c;
}

namespace {

// Contraction ρ < 1 and a finite sensitivity Δ_E.
void outputPerturbationViolations(const Params& p, std::vector<Violation>& out) {
  if (p.schedule == Schedule::kDecreasing) {
    out.push_back(
        {"step-size schedule", "the analysis is for a constant step size η; the run's schedule is decreasing"});
  }
  const double rho = std::max(std::fabs(1.0 - p.eta * p.lambda), std::fabs(1.0 - p.eta * p.beta));
  if (!(rho < 1.0)) {
    std::string why = p.lambda == 0.0 ? "λ = 0 gives no contraction" : "η ≥ 2/β = " + formatNumber(2.0 / p.beta, 4);
    out.push_back({"contraction", "ρ = max(|1−ηλ|, |1−ηβ|) = " + formatNumber(rho, 6) + " ≥ 1 (" + why +
                                      "): the sensitivity does not stay bounded"});
  }
  if (Result<OutputPerturbationConstants> c = outputPerturbationConstants(p); !c) {
    out.push_back({"sensitivity", c.status().message()});
  }
}

Result<std::vector<NativeValue>> outputPerturbationNative(const Params& p) {
  DPX_RETURN_IF_ERROR(p.validate());
  DPX_ASSIGN_OR_RETURN(const OutputPerturbationConstants c, outputPerturbationConstants(p));
  std::vector<NativeValue> values{
      {"rho", "contraction ρ = max(|1−ηλ|, |1−ηβ|)", c.rho},
      {"Delta", "sensitivity Δ after E epochs", c.sensitivity},
  };
  if (c.sensitivityLimit) values.push_back({"Delta_inf", "limit Δ_∞ = 2ηL/(m(1−ρ^k))", *c.sensitivityLimit});
  values.push_back({"k", "batches per epoch k = ⌈n/m⌉", static_cast<double>(c.batchesPerEpoch)});
  values.push_back({"epochs", "epochs E = ⌈K/k⌉", static_cast<double>(c.epochs)});
  values.push_back({"noise_std", "output noise s = σΔ", c.noiseStd});
  // Informational; a subnormal β + λ would make it overflow, and then there is nothing to show.
  if (const double etaStar = 2.0 / (p.beta + p.lambda); std::isfinite(etaStar)) {
    values.push_back({"eta_star", "η* = 2/(β+λ) (smallest ρ)", etaStar});
  }
  if (p.lambda > 0.0) {
    values.push_back(
        {"Delta_full_batch", "full batch at η*: Δ = 2L/(nλ)", 2.0 * p.L / (static_cast<double>(p.n) * p.lambda)});
  }
  return values;
}

Result<double> outputPerturbationRdp(const Params& p, double alpha, std::string_view) {
  const double plain = alpha / (2.0 * p.sigma * p.sigma);
  if (!p.averaged) return plain;
  DPX_ASSIGN_OR_RETURN(const OutputPerturbationConstants c, outputPerturbationConstants(p));
  if (!(c.rho < 1.0)) return plain;  // Prop. 3 needs contraction; the plain release bound still holds
  // (1/(α−1))·[log Σ_{i<k} exp(α(α−1)ρ^{2i}/(2σ²)) − log k]; never above the plain bound.
  const double cc = alpha * (alpha - 1.0) / (2.0 * p.sigma * p.sigma);
  const double logSum = logSumExpGeometric(cc, c.rho * c.rho, c.batchesPerEpoch);
  const double averaged = (logSum - std::log(static_cast<double>(c.batchesPerEpoch))) / (alpha - 1.0);
  return std::min(plain, std::max(0.0, averaged));
}

}  // namespace

OutputPerturbationAccountant::OutputPerturbationAccountant()
    : RdpBasedAccountant(
          {
              .id = "outpert",
              .name = "Output perturbation (contractive SGD)",
              .citation =
                  "Chen, Lee & Kifer 2019, Rényi DP ERM for smooth objectives (AISTATS, supplementary), Lemma 2, "
                  "Prop. 2, Prop. 3",
              .assumptions =
                  {.sampling = Sampling::kShuffle,
                   .neighbouring = Neighbouring::kReplaceOne,
                   .release = Release::kLastIterate,
                   .statements = {"noiseless SGD over a permutation: k = ⌈n/m⌉ disjoint batches per epoch, "
                                  "constant η",
                                  "only the final model (or the average of the last epoch) is released, plus "
                                  "N(0, (σΔ)²I)",
                                  "loss L-Lipschitz, λ-strongly convex, β-smooth; contraction ρ = max(|1−ηλ|, "
                                  "|1−ηβ|) < 1",
                                  "replace-one neighbours"},
                   .plainGradientSteps = true,
                   .convexLossReason = "output perturbation's sensitivity (Chen, Lee & Kifer 2019, Lemma 2) needs "
                                       "SGD to contract, which takes a λ-strongly convex, β-smooth loss; a "
                                       "network's loss is not convex"},
              .nativeKeys = {"rho", "Delta", "Delta_inf"},
              .color = 0x8c564b,
          },
          {.totalRdp = &outputPerturbationRdp,
           .native = &outputPerturbationNative,
           .addViolations = &outputPerturbationViolations}) {}

}  // namespace dpx::core::accounting
