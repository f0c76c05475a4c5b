// Special functions for privacy accounting, on Boost.Math and the C library, accurate in the
// tails that accountants live in: Φ and log Φ far below −30 (δ of 1e−300), Φ⁻¹ of 1e−300,
// log-space sums of terms that would overflow a double, and signed log binomials for the
// fractional-order RDP series (Mironov, Talwar, Zhang 2019, §3.3).
#pragma once

#include <cstddef>
#include <span>

namespace dpx::core::numerics {

inline constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log √(2π)

// Standard normal CDF Φ(x). Φ(−x) is computed as normalCdf(−x), never as 1 − Φ(x).
double normalCdf(double x);
// log Φ(x), accurate for every finite x (asymptotic series below x = −30, where Φ underflows).
double logNormalCdf(double x);
// log Φ at every element of x, into out (of the same length): equal to the scalar logNormalCdf,
// with the asymptotic branch (x ≤ −30), where long series spend their terms, vectorised.
void logNormalCdf(std::span<const double> x, std::span<double> out);
// Standard normal density φ(x) and its logarithm.
double normalPdf(double x);
double logNormalPdf(double x);
// Φ⁻¹(p) for p ∈ (0, 1); −∞ for p ≤ 0 and +∞ for p ≥ 1.
double normalQuantile(double p);
// Φ⁻¹(1 − p) for p ∈ (0, 1), without forming 1 − p (exact for p = 1e−300).
double normalQuantileComplement(double p);

// log(exp(a) + exp(b)); −∞ inputs are the additive identity.
double logAddExp(double a, double b);
// log(exp(a) − exp(b)) for a ≥ b; −∞ when a == b.
double logSubExp(double a, double b);
// log Σ exp(x_i); −∞ for an empty span.
double logSumExp(std::span<const double> values);
// log(1 − exp(x)) for x ≤ 0 (Mächler's two-branch form).
double log1mExp(double x);

// log |C(n, k)| for real n ≥ 0 and integer k ≥ 0 (C(n, k) = n(n−1)…(n−k+1)/k!), and its sign.
struct SignedLog {
  double logAbs;
  int sign;  // −1, 0 or +1
};
SignedLog logBinomialSigned(double n, double k);
// log C(n, k) for integers 0 ≤ k ≤ n (exact factorial-ratio through lgamma).
double logBinomial(double n, double k);

}  // namespace dpx::core::numerics
