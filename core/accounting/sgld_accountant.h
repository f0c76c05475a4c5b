// `sgld` — the Langevin bound for DP-SGLD: Ryffel, Bach & Pointcheval 2022, "Differential Privacy
// Guarantees for Stochastic Gradient Langevin Dynamics", Thm 3.1, Cor. 3.2–3.3.
//   ε_α = 4αL² / (λ n² σ_L²) · (1 − exp(−(λ/2) Σ_{k<K} η_k))
// Algorithm (their Alg. 1): uniform fixed-size batches of m, θ ← Π_C(θ − η_k∇L_B(θ) +
// √(2η_k)·σ_L·ξ), θ₀ ~ Π_C(N(0, 2σ_L²/λ·I)), only the last iterate is released, replace-one
// neighbours. Assumes an L-Lipschitz, λ-strongly convex (λ > 0), β-smooth loss, η_k < 1/β and a
// projection radius ≥ L/λ. Knob mapping: σ_L = σ·L·√η₀ / (m√2), so a constant step adds the same
// noise per step as DP-SGD at noise multiplier σ (the decreasing schedule keeps σ_L fixed, as the
// paper does).
// Schedules: constant η, or η_k = 1/(2β + λk/2) (η₀ = 1/(2β); the η knob is not read). Σ η_k is
// the exact sum of the schedule run (digamma form); the paper's integral closed form
// λK/(4β + λK) is the variant "closed-form". Variant "baseline" is the composition analysis the
// paper compares with (Discussion after Cor. 3.3): ε′_α = αL²·Σ η_k / (n² σ_L²).
// The utility bounds of the same paper (Lemma 4.1–4.2, Thm 4.1–4.4) are in utility/langevin_utility.h.
#pragma once

#include "accounting/rdp_based_accountant.h"

namespace dpx::core::accounting {

// σ_L of the knob mapping, η₀ and Σ_{k<K} η_k of the schedule.
struct SgldSchedule {
  double sigmaL;
  double eta0;
  double sumEta;
};
SgldSchedule sgldSchedule(const Params& params);
// OK when the schedule's values are finite; else why not (a subnormal β makes η₀ = 1/(2β) +inf).
Status sgldScheduleStatus(const Params& params, const SgldSchedule& schedule);

class SgldAccountant final : public RdpBasedAccountant {
 public:
  SgldAccountant();
};

}  // namespace dpx::core::accounting
