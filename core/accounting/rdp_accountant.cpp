#include "accounting/rdp_accountant.h"

#include "accounting/subsampled_gaussian_rdp.h"

namespace dpx::core::accounting {

// The assumptions of DP-SGD's Poisson-subsampled Gaussian steps, as `rdp` and `pld` state them.
Assumptions dpSgdAssumptions(std::vector<std::string> more) {
  Assumptions a{
      .sampling = Sampling::kPoisson, .neighbouring = Neighbouring::kAddRemove, .release = Release::kAllIterates};
  a.statements = {"Poisson sampling: every record joins each batch independently with probability q = m/n",
                  "per-example gradients clipped to norm L; noise N(0, σ²L²) added to their sum",
                  "every iterate may be released (adaptive composition of the K steps)",
                  "neighbouring datasets differ by adding or removing one record"};
  a.statements.insert(a.statements.end(), more.begin(), more.end());
  return a;
}

Result<std::vector<NativeValue>> subsampledGaussianNative(const Params& params) {
  DPX_RETURN_IF_ERROR(params.validate());
  return std::vector<NativeValue>{
      {"q", "sampling rate q = m/n", params.q()},
      {"sigma", "noise multiplier σ", params.sigma},
      {"steps", "steps K", static_cast<double>(params.K)},
      {"epochs", "epochs K·m/n", params.epochs()},
  };
}

namespace {

Result<double> subsampledGaussianRdp(const Params& params, double alpha, std::string_view) {
  DPX_ASSIGN_OR_RETURN(const double perStep, subsampledGaussianRdpCached(params.q(), params.sigma, alpha));
  return perStep * static_cast<double>(params.K);
}

}  // namespace

RdpAccountant::RdpAccountant()
    : RdpBasedAccountant(
          {
              .id = "rdp",
              .name = "Moments accountant (RDP)",
              .citation =
                  "Abadi et al. 2016, Thm 2 (moments accountant); Mironov, Talwar & Zhang 2019, Rényi DP of the "
                  "sampled Gaussian mechanism, §3.2–3.3",
              .assumptions = dpSgdAssumptions({"no convexity or smoothness needed"}),
              .nativeKeys = {"q", "sigma", "steps"},
              .color = 0x1f77b4,
          },
          {.totalRdp = &subsampledGaussianRdp, .native = &subsampledGaussianNative, .linearInSteps = true}) {}

}  // namespace dpx::core::accounting
