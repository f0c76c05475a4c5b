// `heuristic-last-iterate` — the last-iterate heuristic of Steinke, Nasr, Ganesh, Balle,
// Choquette-Choo, Jagielski, Hayes, Thakurta, Smith & Terzis 2024, "The Last Iterate Advantage:
// Empirical Auditing and Principled Heuristic Analysis of Differentially Private SGD" (ICLR 2025,
// arXiv 2410.06186), Thm 1 and the heuristic built on it.
// For LINEAR per-example losses, DP-SGD with Poisson sampling at rate q, T steps, noise multiplier
// σ and clip norm L = 1 releases a last iterate whose privacy is exactly that of the 1-D pair
//   P = Binomial(T, q) + N(0, σ²T)   against   Q = N(0, σ²T)
// (the differing record's gradient is the same unit vector at every step, so the iterate is its
// count of participations plus the summed noise). The heuristic reports this pair's profile for
// every loss:
//   δ(ε) = max{H_{e^ε}(P‖Q), H_{e^ε}(Q‖P)},   H_γ(A‖B) = sup_S A(S) − γB(S).
// It is an ESTIMATE: the paper builds losses whose last iterate leaks more than this.
//
// Computed exactly, not through a discretised loss distribution. In units of s = σ√T the atoms
// sit at a_k = k/s ≥ 0, so the privacy loss ℓ(z) = log Σ_k w_k exp(a_k z − a_k²/2) is increasing
// in z and both hockey-stick divergences are threshold tests:
//   H(P‖Q) = P(Z > z) − e^ε Q(Z > z) with ℓ(z) = ε,   H(Q‖P) = Q(Z < z) − e^ε P(Z < z) with ℓ(z) = −ε.
// ε(δ) is one root in z per direction (ε = ±ℓ(z) along it; Newton steps inside a shrinking
// bracket), every tail summed relative to the largest weight, in log space when that underflows.
// Only the binomial's atoms holding all but 1e−30 of its mass on each side are summed; the tails
// are folded onto atoms that keep the direction of the answer (below). When more than a few
// hundred atoms remain, neighbouring atoms are merged into groups of g. Moving every group's mass
// to its largest atom makes P stochastically larger, and that can only raise both divergences
// (their optimal sets are half-lines: P's mass moves out of the left ones and into the right
// ones), so the answer is an upper end ε_up of the exact heuristic value; the groups' smallest
// atoms give a lower end ε_down the same way. ε_up is reported; when atoms are merged,
// δ_down(ε_up·(1 − tolerance)) ≥ δ certifies ε_down ≥ ε_up·(1 − tolerance) (else g is halved). The
// folded tails follow the same rule: for ε_up the lower tail joins the lowest kept atom and the
// upper tail an atom at T, for ε_down the lower tail goes to 0 and the upper tail to the highest
// kept atom.
#pragma once

#include <cstdint>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

struct LastIterateHeuristicOptions {
  // Wanted relative width of the certified bracket [ε_down, ε_up] when atoms are merged.
  double tolerance = 2e-3;
  // More kept atoms than this are merged into groups (fewer when the tolerance needs it).
  std::int64_t maxGroups = 256;
};

struct LastIterateHeuristicEpsilon {
  double epsilon = 0.0;         // ε_up: the headline
  double epsilonLower = 0.0;    // certified: the exact heuristic ε lies in [epsilonLower, epsilon]
  std::int64_t groupWidth = 1;  // binomial atoms per group (1: none merged)
  std::int64_t groups = 0;      // groups (atoms) summed, folded tails included
};

// ε(δ) of the heuristic for `steps` steps at sampling rate q ∈ (0, 1] and noise multiplier σ > 0;
// 0 when the pair's total variation distance is at most δ ∈ (0, 1).
Result<LastIterateHeuristicEpsilon> lastIterateHeuristicEpsilon(double q, double sigma, std::int64_t steps,
                                                                double delta,
                                                                const LastIterateHeuristicOptions& options = {});
// δ(ε) of the heuristic at ε ≥ 0 (ε_up's grouping: an upper end of the exact value).
Result<double> lastIterateHeuristicDelta(double q, double sigma, std::int64_t steps, double epsilon,
                                         const LastIterateHeuristicOptions& options = {});

class HeuristicLastIterateAccountant final : public Accountant {
 public:
  HeuristicLastIterateAccountant();
  Result<std::vector<NativeValue>> native(const Params& params) const override;
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  // The envelope of f_{ε(δ),δ} over δ (tradeoffEnvelope).
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;
};

}  // namespace dpx::core::accounting
