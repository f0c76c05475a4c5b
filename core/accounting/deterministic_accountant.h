// `deterministic` — batches in a fixed order, every iterate released (Chua, Ghazi, Kamath, Kumar,
// Manurangsi, Sinha & Zhang 2024, "How Private are DP-SGD Implementations?", ICML 2024: the
// deterministic batch sampler of adaptive batch linear queries).
// With T = ⌈n/m⌉ batches per pass, a record is in one batch of every pass, so E passes release
// its (sensitivity-1, zero-out neighbours) contribution E times under independent N(0, σ²)
// noise: the E-fold Gaussian mechanism, i.e. exactly μ-GDP with μ = √E/σ (Dong, Roth & Su 2022,
// Cor. 2.13 gives δ(ε) and the trade-off G_μ). Exact, so an upper bound that is also tight.
// The same number bounds shuffled batches (a shuffle is a fixed order applied to a randomly
// permuted dataset) and balls-in-bins batches (each record in one random batch per pass: a
// mixture of fixed assignments, and δ(ε) is jointly convex) — without the amplification that
// randomness can add. A last, unfinished pass is charged in full (a record early in the order
// takes part in it).
#pragma once

#include "accounting/gdp_accountant.h"

namespace dpx::core::accounting {

class DeterministicAccountant final : public GaussianDpAccountant {
 public:
  DeterministicAccountant();
  Result<std::vector<NativeValue>> native(const Params& params) const override;

 protected:
  Result<double> mu(const Params& params) const override;  // √E/σ
};

}  // namespace dpx::core::accounting
