#include "utility/series.h"

#include <cmath>
#include <cstdint>

namespace dpx::core::utility {
namespace {

constexpr double kDirectTerms = 4096.0;  // sums this short are added term by term
constexpr double kHeadTerms = 1024.0;    // terms added exactly before the Euler–Maclaurin tail

// Compensated sum of (t + shift)^{−s} for t = last down to first: the small terms first. Only
// called for short ranges of small t (at most 4096 terms below t + shift = 1024), so the whole
// numbers are exact and an integer counter walks them.
double directSum(double s, double shift, double first, double last) {
  double sum = 0.0;
  double carry = 0.0;
  const auto count = static_cast<std::int64_t>(last - first) + 1;
  for (std::int64_t i = count - 1; i >= 0; --i) {
    const double term = std::pow(first + static_cast<double>(i) + shift, -s) - carry;
    const double next = sum + term;
    carry = (next - sum) - term;
    sum = next;
  }
  return sum;
}

// ∫_a^b u^{−s} du without cancellation when b is close to a.
double integral(double s, double a, double b) {
  const double logRatio = std::log1p((b - a) / a);
  if (s == 1.0) return logRatio;
  return std::pow(a, 1.0 - s) * std::expm1((1.0 - s) * logRatio) / (1.0 - s);
}

// Odd derivatives of f(u) = u^{−s}: f′ = −s u^{−s−1}, f‴ = −s(s+1)(s+2) u^{−s−3}, f⁽⁵⁾ likewise.
double derivative1(double s, double u) { return -s * std::pow(u, -s - 1.0); }
double derivative3(double s, double u) { return -s * (s + 1.0) * (s + 2.0) * std::pow(u, -s - 3.0); }
double derivative5(double s, double u) {
  return -s * (s + 1.0) * (s + 2.0) * (s + 3.0) * (s + 4.0) * std::pow(u, -s - 5.0);
}

}  // namespace

double shiftedPowerSum(double s, double shift, double first, double last) {
  if (last < first) return 0.0;
  // Terms far out (u = t + shift ≥ 1024) go to Euler–Maclaurin whatever their number: a loop over
  // t ≈ 10²⁰ in steps of 1 would not even advance.
  const bool asymptotic = first + shift >= kHeadTerms;
  if (!asymptotic && last - first + 1.0 <= kDirectTerms) return directSum(s, shift, first, last);
  const double tailFirst = asymptotic ? first : first + kHeadTerms;
  const double head = asymptotic ? 0.0 : directSum(s, shift, first, tailFirst - 1.0);
  // Euler–Maclaurin over u = t + shift from a to b: ∫ + (f(a) + f(b))/2 + Σ B₂ₖ/(2k)!·(f⁽²ᵏ⁻¹⁾(b) − f⁽²ᵏ⁻¹⁾(a)),
  // with B₂/2! = 1/12, B₄/4! = −1/720, B₆/6! = 1/30240.
  const double a = tailFirst + shift;
  const double b = last + shift;
  const double tail = integral(s, a, b) + 0.5 * (std::pow(a, -s) + std::pow(b, -s)) +
                      (derivative1(s, b) - derivative1(s, a)) / 12.0 - (derivative3(s, b) - derivative3(s, a)) / 720.0 +
                      (derivative5(s, b) - derivative5(s, a)) / 30240.0;
  return head + tail;
}

}  // namespace dpx::core::utility
