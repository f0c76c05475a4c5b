#include "accounting/rdp_accountant.h"

#include "accounting/subsampled_gaussian_rdp.h"

namespace dpx::core::accounting {

RdpAccountant::RdpAccountant() {
  m_assumptions.sampling = Sampling::kPoisson;
  m_assumptions.neighbouring = Neighbouring::kAddRemove;
  m_assumptions.release = Release::kAllIterates;
  m_assumptions.clipsGradients = true;
  m_assumptions.statements = {
      "Poisson sampling: every record joins each batch independently with probability q = m/n",
      "per-example gradients clipped to norm L; noise N(0, σ²L²) added to their sum",
      "every iterate may be released (adaptive composition of K steps)",
      "neighbouring datasets differ by adding or removing one record",
      "no convexity or smoothness needed",
  };
}

std::string_view RdpAccountant::citation() const {
  return "Abadi et al. 2016 (moments accountant); Mironov, Talwar & Zhang 2019, RDP of the sampled Gaussian "
         "mechanism, §3.2–3.3";
}

std::vector<Violation> RdpAccountant::check(const Params& params) const { return commonViolations(params); }

Result<std::vector<NativeValue>> RdpAccountant::native(const Params& params) const {
  DPX_RETURN_IF_ERROR(params.validate());
  return std::vector<NativeValue>{
      {"q", "sampling rate q = m/n", params.q()},
      {"sigma", "noise multiplier σ", params.sigma},
      {"steps", "steps K", static_cast<double>(params.K)},
      {"epochs", "epochs K·m/n", params.epochs()},
  };
}

Result<double> RdpAccountant::totalRdp(const Params& params, double alpha, std::string_view) const {
  Result<double> perStep = subsampledGaussianRdpCached(params.q(), params.sigma, alpha);
  if (!perStep) return perStep;
  return *perStep * static_cast<double>(params.K);
}

}  // namespace dpx::core::accounting
