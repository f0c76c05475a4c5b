// Hypothesis-testing trade-off functions (f-DP; Dong, Roth, Su 2019; seed 003 §2):
//   G_μ(x)      = Φ(Φ⁻¹(1−x) − μ)                          (μ-GDP)
//   f_{ε,δ}(x)  = max{0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x)}   (seed 003 eq. 2.1)
// and the trade-off implied by a family of (ε(δ), δ) guarantees: their pointwise maximum over
// δ, the tightest curve that every one of them certifies.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

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

}  // namespace dpx::core::accounting
