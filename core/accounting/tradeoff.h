// Hypothesis-testing trade-off functions (f-DP; Dong, Roth & Su 2019; Bu, Dong, Long & Su 2020, §2):
//   G_μ(x)      = Φ(Φ⁻¹(1−x) − μ)                          (μ-GDP)
//   f_{ε,δ}(x)  = max{0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x)}   (Bu, Dong, Long & Su 2020, eq. 2.1)
// the trade-off implied by a family of (ε(δ), δ) guarantees: their pointwise maximum over δ, the
// tightest curve that every one of them certifies; and the trade-off implied by Rényi DP itself.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

class RdpBasedAccountant;

double gaussianTradeoff(double mu, double typeOne);
double epsilonDeltaTradeoff(double epsilon, double delta, double typeOne);

// {0} ∪ (points − 1) type I errors log-spaced over [1e−6, 1]; points ≥ 3.
std::vector<double> defaultTypeOneGrid(int points);

// δ values the envelope is taken over: log-spaced from 1e−16 to 0.99.
std::span<const double> envelopeDeltas();

// max over δ ∈ envelopeDeltas() of f_{ε(δ),δ}(x). δ values where epsilonAt fails are skipped;
// if all fail the first error is returned.
Result<TradeoffCurve> tradeoffEnvelope(const std::function<Result<double>(double)>& epsilonAt,
                                       std::span<const double> typeOne);

Status validateTypeOneGrid(std::span<const double> typeOne);

// The trade-off curve one Rényi order certifies. A test between neighbouring outputs P and Q
// with type I error x = E_P[φ] and type II error y = E_Q[1 − φ] post-processes P and Q into
// Bernoulli(x) and Bernoulli(1 − y); Rényi divergence cannot grow under post-processing (van
// Erven & Harremoës 2014, Thm 9), so ε_α-RDP (in both directions) forces
//   c₁(x, y) = (1/(α−1)) log[(1−x)^α y^{1−α} + x^α (1−y)^{1−α}] ≤ ε_α   and   c₂(x, y) = c₁(y, x) ≤ ε_α
// (the hypothesis-testing reading of Rényi DP in Balle, Barthe, Gaboardi, Hsu & Sato 2020).
// f_α(x) is the smallest y ∈ [0, 1 − x] meeting both. For fixed x ∈ (0, 1), both c₁ and c₂ are
// convex in y, strictly decreasing on [0, 1 − x] and equal to 0 at y = 1 − x (their common minimum,
// where the test ignores the data), so each constraint holds exactly on an interval [y_i, 1 − x]
// and f_α(x) = max(y₁, y₂): each y_i is one bracketed root. f_α is symmetric (c₂ is c₁ with the
// roles swapped), convex, f_α(0) = 1 and f_α(1) = 0, and f_α = 1 − x at ε_α = 0.
// Computed in log space (α = 1024 would overflow the powers), and near the diagonal from the
// second-order excess of the sum over 1 (so ε_α·(α−1) of 1e−18 still resolves); each y_i is a
// TOMS 748 root on a proven bracket (y₁ in log y, so a y₁ below the smallest double comes out as 0,
// never as a non-finite value). The answer is the lower end of the final root bracket: not above
// the true f_α beyond rounding (about 1e−15 relative), so the curve stays a valid lower bound on
// every test's type II error.
// Fails (InvalidArgument) for α not in (1, ∞), ε_α not finite or < 0, x not in [0, 1].
Result<double> renyiTradeoff(double epsilonAlpha, double alpha, double typeOne);

// max over orders of f_α(x): the tightest curve an RDP profile (total ε_α at each order)
// certifies through the inequality above. orders[i] pairs with totalRdp[i]; both non-empty and
// of the same length. An order whose f_α cannot beat the running maximum at x is rejected with
// one evaluation of its constraints (no root finding), so the exact maximum over a few hundred
// orders costs little more than a few roots per x.
Result<TradeoffCurve> renyiEnvelope(std::span<const double> orders, std::span<const double> totalRdp,
                                    std::span<const double> typeOne);

// renyiEnvelope over the accountant's RDP profile for params: the orders of `options`
// (fixedAlpha → that order alone, i.e. f_α of the order the user fixed; else options.orders;
// else the default grid) and its variant.
Result<TradeoffCurve> renyiTradeoffCurve(const RdpBasedAccountant& accountant, const Params& params,
                                         std::span<const double> typeOne, const EpsilonOptions& options = {});

}  // namespace dpx::core::accounting
