#include "numerics/special_functions.h"

#include <Eigen/Core>
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>

namespace dpx::core::numerics {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kInvSqrt2 = 0.70710678118654752440;

// Below this Φ(x) is still a normal double but the asymptotic series is already exact to
// rounding (its 10th term is < 1e−17 of the first), so the switch loses nothing.
constexpr double kAsymptoticThreshold = -30.0;

// log of Φ(x)·|x|/φ(x) = log(1 − 1/x² + 3/x⁴ − 15/x⁶ + …) for x ≤ −30.
double logMillsSeries(double x) {
  const double inv2 = 1.0 / (x * x);
  double term = 1.0;
  double sum = 1.0;
  for (int k = 1; k <= 12; ++k) {
    term *= -(2.0 * k - 1.0) * inv2;
    sum += term;
  }
  return std::log(sum);
}

}  // namespace

double normalCdf(double x) {
  if (std::isnan(x)) return x;
  return 0.5 * std::erfc(-x * kInvSqrt2);
}

double logNormalCdf(double x) {
  if (std::isnan(x)) return x;
  if (x == kInf) return 0.0;
  if (x == -kInf) return -kInf;
  if (x >= 0.0) return std::log1p(-0.5 * std::erfc(x * kInvSqrt2));
  if (x > kAsymptoticThreshold) return std::log(0.5 * std::erfc(-x * kInvSqrt2));
  return -0.5 * x * x - kLogSqrt2Pi - std::log(-x) + logMillsSeries(x);
}

void logNormalCdf(std::span<const double> x, std::span<double> out) {
  const auto count = static_cast<Eigen::Index>(x.size());
  const Eigen::Map<const Eigen::ArrayXd> in(x.data(), count);
  Eigen::Map<Eigen::ArrayXd> result(out.data(), count);
  // The Mills series of logMillsSeries in Horner form: 1 + Σ_k (−1)^k (2k − 1)!! / x^{2k}.
  const Eigen::ArrayXd inv2 = in.square().inverse();
  Eigen::ArrayXd series = Eigen::ArrayXd::Constant(count, 1.0);
  for (int k = 12; k >= 1; --k) series = 1.0 - (2.0 * k - 1.0) * inv2 * series;
  result = -0.5 * in.square() - kLogSqrt2Pi - (-in).log() + series.log();
  for (Eigen::Index i = 0; i < count; ++i) {
    if (!(in[i] <= kAsymptoticThreshold)) result[i] = logNormalCdf(in[i]);
  }
}

double normalPdf(double x) { return std::exp(logNormalPdf(x)); }

double logNormalPdf(double x) { return -0.5 * x * x - kLogSqrt2Pi; }

double normalQuantile(double p) {
  if (std::isnan(p)) return p;
  if (p <= 0.0) return -kInf;
  if (p >= 1.0) return kInf;
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

double normalQuantileComplement(double p) {
  if (std::isnan(p)) return p;
  if (p <= 0.0) return kInf;
  if (p >= 1.0) return -kInf;
  return boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), p));
}

double logAddExp(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double hi = std::max(a, b);
  const double lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

double logSubExp(double a, double b) {
  if (b == -kInf) return a;
  if (a <= b) return -kInf;
  return a + log1mExp(b - a);
}

double logSumExp(std::span<const double> values) {
  if (values.empty()) return -kInf;
  const double hi = *std::max_element(values.begin(), values.end());
  if (hi == -kInf || hi == kInf) return hi;
  double sum = 0.0;
  for (double v : values) sum += std::exp(v - hi);
  return hi + std::log(sum);
}

double log1mExp(double x) {
  if (x > 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -kInf;
  // Mächler (2012): expm1 is exact near 0, log1p(−exp(x)) is exact for x < −log 2.
  return x > -0.6931471805599453 ? std::log(-std::expm1(x)) : std::log1p(-std::exp(x));
}

SignedLog logBinomialSigned(double n, double k) {
  // C(n, k) = Γ(n+1) / (Γ(k+1) Γ(n−k+1)); for real n the last gamma may be negative or a pole.
  if (k < 0.0) return {-kInf, 0};
  if (k == 0.0) return {0.0, 1};
  const double nMinusK = n - k;
  if (nMinusK + 1.0 <= 0.0 && nMinusK == std::floor(nMinusK)) return {-kInf, 0};  // pole: C = 0
  int signDen = 1;
  const double logNum = boost::math::lgamma(n + 1.0);
  const double logK = boost::math::lgamma(k + 1.0);
  const double logNk = boost::math::lgamma(nMinusK + 1.0, &signDen);
  return {logNum - logK - logNk, signDen};
}

double logBinomial(double n, double k) { return logBinomialSigned(n, k).logAbs; }

}  // namespace dpx::core::numerics
