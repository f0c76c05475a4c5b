#include "accounting/cyclic_accountant.h"

#include <cmath>

#include "common/format.h"

namespace dpx::core::accounting {

CyclicConstants cyclicConstants(const Params& p) {
  CyclicConstants c{};
  c.batchesPerPass = (p.n + p.m - 1) / p.m;
  c.passes = (p.K + c.batchesPerPass - 1) / c.batchesPerPass;
  // ηw²/(M+w) → 0 as w → 0 (ℓ_η = 1 for convex losses, whatever M).
  const double curvatureTerm = p.w > 0.0 ? p.eta * p.w * p.w / (p.M + p.w) : 0.0;
  c.ell = std::sqrt(1.0 + 2.0 * p.eta * p.w + curvatureTerm);
  const double logEll = std::log(c.ell);
  const double k = static_cast<double>(c.batchesPerPass);
  // Λ_k = (1 − ℓ^{−2k}) / (1 − ℓ^{−2}), k at ℓ = 1; expm1 keeps ℓ near 1 exact.
  c.lambdaK = logEll > 0.0 ? std::expm1(-2.0 * k * logEll) / std::expm1(-2.0 * logEll) : k;
  c.noiseStd = p.eta * p.sigma * p.L / static_cast<double>(p.m);
  return c;
}

namespace {

// η ≤ 1/(M + w), where ℓ_η (eq. 12) is defined.
void cyclicViolations(const Params& p, std::vector<Violation>& out) {
  if (p.schedule == Schedule::kDecreasing) {
    out.push_back(
        {"step-size schedule", "the analysis is for a constant step size η; the run's schedule is decreasing"});
  }
  const double curvature = p.M + p.w;
  if (curvature > 0.0 && p.eta > 1.0 / curvature) {
    out.push_back({"step size", "η = " + formatNumber(p.eta, 4) + " > 1/(M + w) = " + formatNumber(1.0 / curvature, 4) +
                                    ": ℓ_η (eq. 12) needs η ≤ 1/(M + w)"});
  }
}

Result<std::vector<NativeValue>> cyclicNative(const Params& p) {
  DPX_RETURN_IF_ERROR(p.validate());
  const CyclicConstants c = cyclicConstants(p);
  return std::vector<NativeValue>{
      {"k", "batches per pass k = ⌈n/b⌉", static_cast<double>(c.batchesPerPass)},
      {"ell", "contraction ℓ_η = √(1 + 2ηw + ηw²/(M+w))", c.ell},
      {"Lambda_k", "Λ_k(ℓ_η) = Σ_{i<k} ℓ^{−2i}", c.lambdaK},
      {"passes", "passes ⌈T/k⌉", static_cast<double>(c.passes)},
      {"noise_std", "parameter noise s = ησL/b", c.noiseStd},
  };
}

Result<double> cyclicRdp(const Params& p, double alpha, std::string_view variant) {
  const CyclicConstants c = cyclicConstants(p);
  const double perPass = 2.0 * alpha / (p.sigma * p.sigma);
  const double passes = static_cast<double>(c.passes);
  if (variant == "first-batch") return perPass * passes / c.lambdaK;
  if (variant == "baseline") return perPass * passes;
  const double b = static_cast<double>(p.m);
  const double s2 = c.noiseStd * c.noiseStd;
  if (variant == "bounded-domain") {
    const double shift = c.ell * p.D + 2.0 * p.eta * p.L / b;
    return alpha * shift * shift / (2.0 * s2);
  }
  if (variant == "no-curvature") return 2.0 * alpha * p.eta * p.eta * p.L * p.L * static_cast<double>(p.K) / s2;
  return perPass * (1.0 + (passes - 1.0) / c.lambdaK);
}

}  // namespace

CyclicAccountant::CyclicAccountant()
    : RdpBasedAccountant(
          {
              .id = "cyclic",
              .name = "Last-iterate cyclic DP-SGD",
              .citation = "Kong & Ribero 2024, Privacy of the last iterate in cyclically-sampled DP-SGD, Thm 4.3–4.5 "
                          "(restored from its shifted-Rényi framework, Feldman et al. 2018)",
              .assumptions =
                  {.sampling = Sampling::kCyclic,
                   .neighbouring = Neighbouring::kReplaceOne,
                   .release = Release::kLastIterate,
                   .statements = {"cyclic sampling: fixed-order batches of b = m records, k = ⌈n/b⌉ batches "
                                  "per pass",
                                  "only the last iterate is released; noise std s = ησL/b on the parameters",
                                  "loss w-weakly convex with upper curvature M (A2); step η ≤ 1/(M + w)",
                                  "Thm 4.4/4.5: every per-example gradient norm ≤ L (clipping inactive) or "
                                  "d = 1",
                                  "formulas restored from the paper's shifted-Rényi framework (Feldman et al. "
                                  "2018), not transcribed from its printed theorems",
                                  "replace-one neighbours"},
                   .plainGradientSteps = true,
                   .convexLossReason = "Kong & Ribero 2024's Thm 4.4/4.5 need the loss to be w-weakly convex with "
                                       "upper curvature M (their A2) and every per-example gradient ≤ L without "
                                       "clipping; no w or M can be certified for a network, whose curvature grows "
                                       "with its weights, so only the all-iterates baseline would hold"},
              .variants = {{"", "Thm 4.5, worst record (restored)", ""},
                           {"first-batch", "Thm 4.5, record in the first batch (paper form)", ""},
                           {"bounded-domain", "bounded domain, Thm 4.4",
                            "Kong & Ribero 2024, Thm 4.4 (restored): ε_α = α(ℓ_η D + 2ηL/b)²/(2s²) — reads the domain "
                            "diameter D"},
                           {"no-curvature", "Thm 4.3, no curvature assumption", ""},
                           {"baseline", "all iterates released (composition)", ""}},
              .nativeKeys = {"k", "ell", "Lambda_k"},
              .color = 0x9467bd,
          },
          {.totalRdp = &cyclicRdp, .native = &cyclicNative, .addViolations = &cyclicViolations}) {}

}  // namespace dpx::core::accounting
