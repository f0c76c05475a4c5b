// `sgmcmc` — privacy of SGLD posterior sampling and its step-size bounds: Li, Chen, Liu & Carin
// 2019, "On Connecting Stochastic Gradient MCMC and Differential Privacy", Alg. 1, Thm 3, Thm 4;
// Wang, Fienberg & Smola 2015.
// Alg. 1: θ ← θ − η_t(∇log p/N + (1/τ)Σ_{i∈B} clip_L(g_i)) + N(0, η_t/N), Poisson batches at rate
// q = τ/N (τ = m, N = n), all iterates released, add/remove neighbours. The clipped sum's
// sensitivity η_tL/τ against noise std √(η_t/N) makes each step a subsampled Gaussian with noise
// multiplier σ_t = τ/(L√(η_t N)); the run composes T = K of them (the `rdp` accountant).
// Schedules: constant η, or η_t = η·t^{−1/3} (t = 1…T) — the schedule knob's "decreasing" reads
// as the t^{−1/3} sequence of Thm 3 here. The decreasing run is a heterogeneous composition:
// the first 32 steps are charged exactly; later steps are grouped on a fixed lattice of σ values
// 0.2 % apart and each group is charged the RDP of its lattice point below: an upper bound,
// typically within 1 % of the exact sum (more only for σ well below 1). The lattice is fixed (it
// does not move with σ₁), so its per-step values are memoised by (q, α, cell) and shared by every
// profile, calibration step and step-size search of the same q, in a bounded memo (16 MiB).
#pragma once

#include <cstdint>

#include "accounting/rdp_based_accountant.h"

namespace dpx::core::accounting {

// σ_t = τ/(L√(η_t N)) for step size η_t.
double sgmcmcNoiseMultiplier(const Params& params, double eta);
// Total RDP at α of T steps at rate q: constant noise σ₁, or σ_t = σ₁ t^{1/6} when decreasing.
Result<double> sgmcmcTotalRdp(double q, double sigma1, std::int64_t steps, bool decreasing, double alpha);

class SgmcmcAccountant final : public RdpBasedAccountant {
 public:
  SgmcmcAccountant();
};

}  // namespace dpx::core::accounting
