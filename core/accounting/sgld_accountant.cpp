#include "accounting/sgld_accountant.h"

#include <boost/math/special_functions/digamma.hpp>
#include <cmath>

#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// (1 − e^{−λS/2}) / λ, with its limit S/2 at λ = 0.
double saturation(double lambda, double sumEta) {
  if (lambda == 0.0) return sumEta / 2.0;
  return -std::expm1(-lambda * sumEta / 2.0) / lambda;
}

}  // namespace

SgldSchedule sgldSchedule(const Params& p) {
  SgldSchedule s{};
  const double K = static_cast<double>(p.K);
  if (p.schedule == Schedule::kConstant) {
    s.eta0 = p.eta;
    s.sumEta = K * p.eta;
  } else {
    // η_k = 1/(a + bk), a = 2β, b = λ/2. η₀ overflows (to +inf) for a subnormal β: then the
    // schedule has no finite value and sgldScheduleStatus() says so.
    const double a = 2.0 * p.beta;
    const double b = p.lambda / 2.0;
    s.eta0 = 1.0 / a;
    if (b * K <= 1e-8 * a) {
      // λK ≪ β (including λ = 0): Σ = (K/a)(1 − b(K−1)/(2a) + O((bK/a)²)), exact to rounding.
      s.sumEta = K / a * (1.0 - b * (K - 1.0) / (2.0 * a));
    } else {
      // Σ_{k=0}^{K−1} 1/(a + bk) = 1/a + (ψ(x + K) − ψ(x + 1))/b with x = a/b: the recurrence
      // ψ(x) = ψ(x + 1) − 1/x keeps the digamma away from its pole at 0 for tiny a/b.
      const double x = a / b;
      s.sumEta = s.eta0 + (boost::math::digamma(x + K) - boost::math::digamma(x + 1.0)) / b;
    }
  }
  s.sigmaL = p.sigma * p.L * std::sqrt(s.eta0) / (static_cast<double>(p.m) * std::sqrt(2.0));
  return s;
}

Status sgldScheduleStatus(const Params& p, const SgldSchedule& s) {
  if (std::isfinite(s.eta0) && std::isfinite(s.sumEta) && std::isfinite(s.sigmaL)) return Status::ok();
  if (p.schedule == Schedule::kDecreasing && !std::isfinite(s.eta0)) {
    return Status::numericalIssue("β = " + formatNumber(p.beta) +
                                  ": the decreasing schedule's first step η₀ = 1/(2β) exceeds the largest double");
  }
  return Status::numericalIssue("the step sizes sum to Σηₖ = " + formatNumber(s.sumEta) +
                                " and σ_L = " + formatNumber(s.sigmaL) + ": beyond the largest double");
}

namespace {

// λ > 0 (else the value is the λ → 0 limit) and η₀ < 1/β, with a schedule of finite values.
void langevinViolations(const Params& p, std::vector<Violation>& out) {
  if (!(p.lambda > 0.0)) {
    out.push_back({"strong convexity",
                   "λ = 0: the Langevin bound needs a λ-strongly convex loss (λ > 0); "
                   "the value shown is its λ → 0 limit, which grows linearly in K"});
  }
  const SgldSchedule s = sgldSchedule(p);
  if (Status finite = sgldScheduleStatus(p, s); !finite.isOk()) {
    out.push_back({"step size", finite.message()});
  } else if (!(s.eta0 < 1.0 / p.beta)) {
    out.push_back({"step size", "η = " + formatNumber(s.eta0, 4) + " ≥ 1/β = " + formatNumber(1.0 / p.beta, 4) +
                                    ": the Langevin analysis needs η < 1/β"});
  }
}

Result<std::vector<NativeValue>> langevinNative(const Params& p) {
  DPX_RETURN_IF_ERROR(p.validate());
  const SgldSchedule s = sgldSchedule(p);
  DPX_RETURN_IF_ERROR(sgldScheduleStatus(p, s));
  std::vector<NativeValue> values{
      {"sigma_L", "Langevin noise σ_L = σL√η₀/(m√2)", s.sigmaL},
      {"sum_eta", "Σ ηₖ over the K steps", s.sumEta},
      {"eta0", "first step η₀", s.eta0},
  };
  if (p.lambda > 0.0) values.push_back({"projection_radius", "projection radius L/λ", p.L / p.lambda});
  return values;
}

Result<double> langevinRdp(const Params& p, double alpha, std::string_view variant) {
  const SgldSchedule s = sgldSchedule(p);
  DPX_RETURN_IF_ERROR(sgldScheduleStatus(p, s));
  const double n = static_cast<double>(p.n);
  const double scale = alpha * p.L * p.L / (n * n * s.sigmaL * s.sigmaL);
  if (variant == "baseline") return scale * s.sumEta;
  if (variant == "closed-form" && p.schedule == Schedule::kDecreasing) {
    const double K = static_cast<double>(p.K);
    return 4.0 * scale * K / (4.0 * p.beta + p.lambda * K);
  }
  return 4.0 * scale * saturation(p.lambda, s.sumEta);
}

}  // namespace

SgldAccountant::SgldAccountant()
    : RdpBasedAccountant(
          {
              .id = "sgld",
              .name = "Langevin DP-SGLD bound",
              .citation = "Ryffel, Bach & Pointcheval 2022, DP guarantees for SGLD, Thm 3.1, Cor. 3.2–3.3",
              .assumptions =
                  {.sampling = Sampling::kUniform,
                   .neighbouring = Neighbouring::kReplaceOne,
                   .release = Release::kLastIterate,
                   .statements = {"uniform fixed-size batches of m records; only the last iterate is released",
                                  "loss L-Lipschitz, λ-strongly convex (λ > 0) and β-smooth on a convex set C",
                                  "step sizes η_k < 1/β; projection onto a ball of radius ≥ L/λ",
                                  "θ₀ ~ Π_C(N(0, 2σ_L²/λ·I)); Langevin noise √(2η_k)·σ_L per step",
                                  "replace-one neighbours"},
                   .plainGradientSteps = true,
                   .convexLossReason = "the Langevin bound (Ryffel, Bach & Pointcheval 2022, Thm 3.1) needs a "
                                       "λ-strongly convex, β-smooth loss; a network's loss is not convex, so no ε "
                                       "follows from it"},
              .variants = {{"", "Langevin bound (exact Σηₖ)", ""},
                           {"closed-form", "paper's closed form (λK/(4β+λK) for the decreasing schedule)", ""},
                           {"baseline", "composition baseline",
                            "Ryffel, Bach & Pointcheval 2022, Discussion after Cor. 3.3: the composition baseline "
                            "ε′_α = αL²Σηₖ/(n²σ_L²) grows linearly in K; the Langevin bound saturates"}},
              .nativeKeys = {"sigma_L", "sum_eta"},
              .color = 0x2ca02c,
          },
          {.totalRdp = &langevinRdp, .native = &langevinNative, .addViolations = &langevinViolations}) {}

}  // namespace dpx::core::accounting
