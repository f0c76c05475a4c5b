// `rdp` — the moments accountant: Rényi DP of DP-SGD's Poisson-subsampled Gaussian steps.
// Abadi et al. 2016, "Deep Learning with Differential Privacy" (moments accountant);
// Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism",
// §3.2 (integer orders) and §3.3 (fractional orders).
// Assumptions: each step samples every record independently with probability q = m/n
// (Poisson), adds N(0, σ²L²) to the sum of gradients clipped to norm L, and releases every
// iterate; neighbours differ by adding or removing one record. K steps compose: ε_α·K.
#pragma once

#include "accounting/rdp_based_accountant.h"

namespace dpx::core::accounting {

// What every analysis of DP-SGD's Poisson-subsampled Gaussian steps (`rdp`, `gdp`, `pld`) assumes:
// Poisson sampling, clipping to L with noise σL, add/remove neighbours, every iterate released;
// `more` adds the analysis' own statements.
Assumptions dpSgdAssumptions(std::vector<std::string> more);

// The native parameters of K Poisson-subsampled Gaussian steps (q, σ, K, epochs), shared by the
// accountants that analyse exactly that mechanism (`rdp`, `pld`).
Result<std::vector<NativeValue>> subsampledGaussianNative(const Params& params);

class RdpAccountant final : public RdpBasedAccountant {
 public:
  RdpAccountant();
};

}  // namespace dpx::core::accounting
