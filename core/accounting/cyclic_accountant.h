// `cyclic` — last-iterate privacy of cyclically sampled DP-SGD: Kong & Ribero 2024, "Privacy of
// the last iterate in cyclically-sampled DP-SGD on nonconvex composite losses", Thm 4.3–4.5. The
// text of the paper available to us lost its formulas; they are restored from the paper's
// framework (the shifted Rényi divergence of Feldman et al. 2018), and the UI labels them as
// restorations.
// Run: fixed-order batches of b = m records, k = ⌈n/b⌉ batches per pass, T = K steps, only the
// last iterate released, parameter noise std s = ησL/b, replace-one neighbours. Loss w-weakly
// convex with upper curvature M (A2): ℓ_η = √(1 + 2ηw + ηw²/(M+w)) (eq. 12; needs η ≤ 1/(M+w)),
// Λ_k(ℓ) = Σ_{i<k} ℓ^{−2i}. Thm 4.4/4.5 need every per-example gradient norm ≤ L (clipping
// never active) or d = 1.
//   headline, Thm 4.5 worst record:  ε_α = (2α/σ²)·[1 + (⌈T/k⌉ − 1)/Λ_k(ℓ_η)]
//   "first-batch", Thm 4.5 paper form: ε_α = (2α/σ²)·E/Λ_k(ℓ_η), E = ⌈T/k⌉
//   "bounded-domain", Thm 4.4:         ε_α = α(ℓ_η D + 2ηL/b)²/(2s²)
//   "no-curvature", Thm 4.3:           ε_α = 2αη²L²T/s²
//   "baseline", all iterates released: ε_α = ⌈T/k⌉·2α/σ²
#pragma once

#include <cstdint>

#include "accounting/rdp_based_accountant.h"

namespace dpx::core::accounting {

struct CyclicConstants {
  std::int64_t batchesPerPass;  // k
  std::int64_t passes;          // ⌈T/k⌉
  double ell;                   // ℓ_η
  double lambdaK;               // Λ_k(ℓ_η)
  double noiseStd;              // s = ησL/b
};
CyclicConstants cyclicConstants(const Params& params);

class CyclicAccountant final : public RdpBasedAccountant {
 public:
  CyclicAccountant();
};

}  // namespace dpx::core::accounting
