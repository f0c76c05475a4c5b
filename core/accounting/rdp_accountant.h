// `rdp` — the moments accountant: Rényi DP of DP-SGD's Poisson-subsampled Gaussian steps.
// Abadi et al. 2016, "Deep Learning with Differential Privacy" (moments accountant);
// Mironov, Talwar, Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism",
// §3.2 (integer orders) and §3.3 (fractional orders). SPEC §2.1.
// Assumptions: each step samples every record independently with probability q = m/n
// (Poisson), adds N(0, σ²L²) to the sum of gradients clipped to norm L, and releases every
// iterate; neighbours differ by adding or removing one record. K steps compose: ε_α·K.
#pragma once

#include "accounting/rdp_based_accountant.h"

namespace dpx::core::accounting {

class RdpAccountant final : public RdpBasedAccountant {
 public:
  RdpAccountant();
  std::string_view id() const override { return "rdp"; }
  std::string_view name() const override { return "Moments accountant (RDP)"; }
  std::string_view citation() const override;
  const Assumptions& assumptions() const override { return m_assumptions; }
  BoundKind boundKind() const override { return BoundKind::kUpper; }
  std::vector<Violation> check(const Params& params) const override;
  Result<std::vector<NativeValue>> native(const Params& params) const override;
  bool rdpLinearInSteps() const override { return true; }

 protected:
  Result<double> totalRdp(const Params& params, double alpha, std::string_view variant) const override;

 private:
  Assumptions m_assumptions;
};

}  // namespace dpx::core::accounting
