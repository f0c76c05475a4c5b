#include "accounting/sgmcmc_accountant.h"

#include <cmath>

#include "accounting/subsampled_gaussian_rdp.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// Lattice spacing in log σ: neighbouring points differ by 0.2 %. Charging a cell the RDP at its
// lower point overstates it by about 0.2 %·|d log ε_α / d log σ| at worst — under 1 % for the
// orders that set ε unless σ is well below 1.
const double kLatticeStep = std::log(1.002);

// The first steps are charged at their own σ_t: there consecutive σ_t differ by more than a
// lattice cell anyway, and a run of a few steps is then exact (K = 1 equals the constant
// schedule). Past the head every lattice floor is above σ₁, so the decreasing schedule is never
// charged more than the constant one at the same σ₁.
constexpr std::int64_t kExactHead = 32;

std::int64_t latticeIndex(double logSigma1, std::int64_t t) {
  return static_cast<std::int64_t>(std::floor((logSigma1 + std::log(static_cast<double>(t)) / 6.0) / kLatticeStep));
}

}  // namespace

double sgmcmcNoiseMultiplier(const Params& p, double eta) {
  return static_cast<double>(p.m) / (p.L * std::sqrt(eta * static_cast<double>(p.n)));
}

Result<double> sgmcmcTotalRdp(double q, double sigma1, std::int64_t steps, bool decreasing, double alpha) {
  if (!decreasing) {
    Result<double> perStep = subsampledGaussianRdpCached(q, sigma1, alpha);
    if (!perStep) return perStep;
    return *perStep * static_cast<double>(steps);
  }
  const double logSigma1 = std::log(sigma1);
  double total = 0.0;
  std::int64_t t = 1;
  for (; t <= std::min(steps, kExactHead); ++t) {
    Result<double> perStep = subsampledGaussianRdp(q, sigma1 * std::pow(static_cast<double>(t), 1.0 / 6.0), alpha);
    if (!perStep) return perStep;
    total += *perStep;
  }
  while (t <= steps) {
    const std::int64_t j = latticeIndex(logSigma1, t);
    // Last step of this lattice cell: σ₁ t^{1/6} < e^{(j+1)h} ⇔ t < e^{6((j+1)h − log σ₁)}.
    const double bound = std::exp(6.0 * ((j + 1) * kLatticeStep - logSigma1));
    std::int64_t last = bound >= static_cast<double>(steps) ? steps : static_cast<std::int64_t>(std::ceil(bound)) - 1;
    last = std::max(last, t);
    while (last < steps && latticeIndex(logSigma1, last + 1) == j) ++last;
    while (last > t && latticeIndex(logSigma1, last) != j) --last;
    const double sigmaCell = std::exp(static_cast<double>(j) * kLatticeStep);  // ≤ σ_t for every t in the cell
    Result<double> perStep = subsampledGaussianRdpCached(q, sigmaCell, alpha);
    if (!perStep) return perStep;
    total += *perStep * static_cast<double>(last - t + 1);
    t = last + 1;
  }
  return total;
}

SgmcmcAccountant::SgmcmcAccountant() {
  m_assumptions.sampling = Sampling::kPoisson;
  m_assumptions.neighbouring = Neighbouring::kAddRemove;
  m_assumptions.release = Release::kAllIterates;
  m_assumptions.clipsGradients = true;
  m_assumptions.statements = {
      "SGLD posterior sampling: Poisson batches at rate q = τ/N, gradients clipped to L",
      "Langevin noise N(0, η_t/N): effective noise multiplier σ_t = τ/(L√(η_t N))",
      "schedule: constant η, or η_t = η·t^{−1/3} when the schedule is decreasing",
      "every sample (iterate) may be released; add/remove neighbours",
  };
}

std::string_view SgmcmcAccountant::citation() const {
  return "Li, Chen, Liu & Carin, Connecting SG-MCMC and DP (seed 004), Alg. 1, Thm 3–4; Wang, Fienberg & Smola 2015";
}

std::vector<Violation> SgmcmcAccountant::check(const Params& p) const {
  std::vector<Violation> out = commonViolations(p);
  if (!out.empty() && out.front().assumption == "parameters") return out;
  const double N = static_cast<double>(p.n);
  const double upper = N / (p.L * p.L);
  const double lower = p.q() * p.q() * N / (256.0 * p.L * p.L);
  if (p.eta > upper) {
    out.push_back({"step size", "η = " + formatNumber(p.eta, 4) + " > N/L² = " + formatNumber(upper, 4) +
                                    ": Thm 3 condition 1 needs η ≤ N/L²"});
  }
  if (!(p.eta > lower)) {
    out.push_back({"step size", "η = " + formatNumber(p.eta, 4) + " ≤ q²N/(256L²) = " + formatNumber(lower, 4) +
                                    ": Thm 3 condition 2 needs η > q²N/(256L²)"});
  }
  return out;
}

Result<std::vector<NativeValue>> SgmcmcAccountant::native(const Params& p) const {
  DPX_RETURN_IF_ERROR(p.validate());
  return std::vector<NativeValue>{
      {"sigma_eff", "effective noise multiplier σ = τ/(L√(ηN))", sgmcmcNoiseMultiplier(p, p.eta)},
      {"q", "sampling rate q = τ/N", p.q()},
      {"steps", "steps T", static_cast<double>(p.K)},
  };
}

Result<double> SgmcmcAccountant::totalRdp(const Params& p, double alpha, std::string_view) const {
  return sgmcmcTotalRdp(p.q(), sgmcmcNoiseMultiplier(p, p.eta), p.K, p.schedule == Schedule::kDecreasing, alpha);
}

}  // namespace dpx::core::accounting
