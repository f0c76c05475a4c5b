// `outpert` — output perturbation of contractive permutation SGD: Chen, Lee & Kifer 2019, "Rényi
// Differentially Private ERM for Smooth Objectives" (AISTATS), supplementary, Lemma 2, Prop. 2,
// Prop. 3. Noiseless SGD over a permutation: k = ⌈n/m⌉ disjoint batches per epoch,
// E = ⌈K/k⌉ epochs, constant η; then θ + N(0, s²I) is released with s = σ·Δ.
// Contraction ρ = max(|1 − ηλ|, |1 − ηβ|) < 1 (λ-strongly convex, β-smooth, L-Lipschitz loss).
// Sensitivity after E epochs, worst position of the differing record (Prop. 2):
//   Δ_E = (2ηL/m)·(1 − ρ^{kE})/(1 − ρ^k)  ≤  Δ_∞ = 2ηL/(m(1 − ρ^k)).
// RDP of the release: ε_α = αΔ²/(2s²) = α/(2σ²); with `averaged` (Prop. 3, average of the last
// epoch's iterates released): ε_α = (1/(α−1))·log((1/k)·Σ_{j=1}^{k} exp(α(α−1)ρ^{2(k−j)}/(2σ²))).
// η* = 2/(β+λ) minimises ρ; with one batch (m = n) and η*, Δ = 2L/(nλ).
#pragma once

#include <cstdint>
#include <optional>

#include "accounting/rdp_based_accountant.h"

namespace dpx::core::accounting {

struct OutputPerturbationConstants {
  double rho;
  std::int64_t batchesPerEpoch;            // k
  std::int64_t epochs;                     // E = ⌈K/k⌉
  double sensitivity;                      // Δ_E (may exceed Δ_∞ only if ρ ≥ 1, where Δ_∞ is undefined)
  std::optional<double> sensitivityLimit;  // Δ_∞, defined for ρ < 1
  double noiseStd;                         // s = σ·Δ_E
};
// Fails only if Δ_E is not a finite double (ρ > 1 over very many epochs).
Result<OutputPerturbationConstants> outputPerturbationConstants(const Params& params);

// Σ_{i=0}^{k−1} exp(c·r^i) in log space, r ∈ [0, 1), c ≥ 0: exact for the first terms, then an
// upper bound by the integral of the decreasing summand (never below the true sum).
double logSumExpGeometric(double c, double r, std::int64_t k);

class OutputPerturbationAccountant final : public RdpBasedAccountant {
 public:
  OutputPerturbationAccountant();
};

}  // namespace dpx::core::accounting
