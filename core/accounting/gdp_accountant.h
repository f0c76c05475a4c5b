// `gdp` — the Gaussian-DP central limit theorem for NoisySGD: Bu, Dong, Long & Su 2020, "Deep
// Learning with Gaussian Differential Privacy", eq. 3.1 and Thm 5; Dong, Roth & Su 2022, "Gaussian
// Differential Privacy", Cor. 2.13 (μ-GDP as a family of (ε, δ)).
//   μ = q·√(K·(e^{1/σ²} − 1))
//   δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)       (μ-GDP ⇔ (ε, δ(ε))-DP for all ε)
//   trade-off G_μ(x) = Φ(Φ⁻¹(1−x) − μ)
// An asymptotic *estimate* (q → 0, K → ∞ with q√K fixed), not a bound: it can fall below the
// tight ε (Bu et al. 2020, Table 1 rows 1–5, against the exact PLD values). Poisson sampling,
// add/remove.
#pragma once

#include <cstdint>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

// μ of the CLT for K steps at rate q and noise multiplier σ.
Result<double> gdpMu(double q, double sigma, double steps);
// δ(ε) of μ-GDP, computed in log space (δ down to 1e−300 keeps its digits).
double gdpDelta(double mu, double epsilon);
// ε(δ) of μ-GDP by bracketed root finding on log δ(ε); 0 when δ(0) ≤ δ.
Result<double> gdpEpsilon(double mu, double delta);

// An analysis under which the run is (exactly or approximately, as its bound kind says) μ-GDP:
// ε(δ), δ(ε) and the trade-off G_μ all follow from μ (Dong, Roth & Su 2022, Cor. 2.13). A
// subclass says how the run sets μ.
class GaussianDpAccountant : public Accountant {
 public:
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;

 protected:
  using Accountant::Accountant;
  // μ of the run; a Status for invalid params or a μ that is not reportable.
  virtual Result<double> mu(const Params& params) const = 0;
};

class GdpAccountant final : public GaussianDpAccountant {
 public:
  GdpAccountant();
  Result<std::vector<NativeValue>> native(const Params& params) const override;

  // The CLT's regime, used by check(): many steps of a small sampling rate.
  static constexpr double kMaxSamplingRate = 0.1;
  static constexpr std::int64_t kMinSteps = 100;

 protected:
  // The CLT regime: q ≤ kMaxSamplingRate and K ≥ kMinSteps (else the estimate may be far off).
  void addViolations(const Params& params, std::vector<Violation>& out) const override;

  Result<double> mu(const Params& params) const override;
};

}  // namespace dpx::core::accounting
