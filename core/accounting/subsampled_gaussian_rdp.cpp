#include "accounting/subsampled_gaussian_rdp.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/format.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {
namespace {

using numerics::log1mExp;
using numerics::logAddExp;
using numerics::logNormalCdf;
using numerics::logSubExp;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// log k for the binomial recurrences (orders up to 1024 use the table).
double logInt(int k) {
  static const std::vector<double> table = [] {
    std::vector<double> t(4097);
    t[0] = kNegInf;
    for (std::size_t i = 1; i < t.size(); ++i) t[i] = std::log(static_cast<double>(i));
    return t;
  }();
  return k < static_cast<int>(table.size()) ? table[static_cast<std::size_t>(k)] : std::log(static_cast<double>(k));
}

// log(e^x − 1) for x > 0.
double logExpm1(double x) { return x > 50.0 ? x + std::log1p(-std::exp(-x)) : std::log(std::expm1(x)); }

// log A_α for integer α. The log-terms need no transcendental call (log C(α, j) by a table
// recurrence), so the cost is one vectorised exp per term. When A_α − 1 is small the direct sum
// would lose its digits to 1 + tiny; then A_α − 1 is summed instead (terms j ≥ 2, all ≥ 0).
double integerOrderLogA(double q, double sigma, int alpha) {
  const double logQ = std::log(q);
  const double log1mQ = std::log1p(-q);
  const double inv2s2 = 1.0 / (2.0 * sigma * sigma);
  Eigen::ArrayXd terms(alpha + 1);
  double logBinom = 0.0;  // log C(α, 0)
  for (int j = 0; j <= alpha; ++j) {
    if (j > 0) logBinom += logInt(alpha - j + 1) - logInt(j);
    terms[j] = logBinom + j * logQ + (alpha - j) * log1mQ + static_cast<double>(j) * (j - 1) * inv2s2;
  }
  const double maxTerm = terms.maxCoeff();
  const double logA = maxTerm + std::log((terms - maxTerm).exp().sum());
  if (logA > 1e-3) return logA;

  // Precise branch: A_α − 1 = Σ_{j≥2} C(α,j) q^j (1−q)^{α−j} expm1((j²−j)/(2σ²)).
  Eigen::ArrayXd minusOne(alpha - 1);
  for (int j = 2; j <= alpha; ++j) {
    const double x = static_cast<double>(j) * (j - 1) * inv2s2;
    minusOne[j - 2] = terms[j] - x + logExpm1(x);
  }
  const double maxMinusOne = minusOne.maxCoeff();
  const double logAMinus1 = maxMinusOne + std::log((minusOne - maxMinusOne).exp().sum());
  return logAddExp(0.0, logAMinus1);  // log A = log(1 + (A − 1))
}

Result<double> fractionalOrderLogA(double q, double sigma, double alpha) {
  const double logQ = std::log(q);
  const double log1mQ = std::log1p(-q);
  const double s2 = sigma * sigma;
  const double z0 = s2 * (std::log1p(-q) - logQ) + 0.5;  // σ² log(1/q − 1) + 1/2
  double logA0 = kNegInf;
  double logA1 = kNegInf;
  double logAbsCoef = 0.0;  // C(α, 0) = 1
  int coefSign = 1;
  constexpr int kMaxTerms = 200000;
  for (int i = 0; i < kMaxTerms; ++i) {
    if (i > 0) {
      const double factor = alpha - (i - 1);
      logAbsCoef += std::log(std::fabs(factor)) - std::log(static_cast<double>(i));
      if (factor < 0) coefSign = -coefSign;
    }
    const double j = alpha - i;
    const double logT0 = logAbsCoef + i * logQ + j * log1mQ;
    const double logT1 = logAbsCoef + j * logQ + i * log1mQ;
    const double logE0 = logNormalCdf((z0 - i) / sigma);  // ½ erfc((i − z0)/(√2 σ))
    const double logE1 = logNormalCdf((j - z0) / sigma);  // ½ erfc((z0 − j)/(√2 σ))
    const double logS0 = logT0 + (static_cast<double>(i) * i - i) / (2.0 * s2) + logE0;
    const double logS1 = logT1 + (j * j - j) / (2.0 * s2) + logE1;
    if (coefSign > 0) {
      logA0 = logAddExp(logA0, logS0);
      logA1 = logAddExp(logA1, logS1);
    } else {
      if (logS0 > logA0 || logS1 > logA1) {
        return Status::numericalIssue("the fractional-order RDP series lost positivity at α = " + formatNumber(alpha));
      }
      logA0 = logSubExp(logA0, logS0);
      logA1 = logSubExp(logA1, logS1);
    }
    const double largest = std::max(logS0, logS1);
    const double total = logAddExp(logA0, logA1);
    // Past the binomial peak, stop once the terms are negligible both absolutely (as Opacus
    // does, e^−30) and relative to the sum (e^−36 ≈ 2e−16), so tiny A − 1 keep their digits.
    if (i > alpha && largest < -30.0 && largest < total - 36.0) return total;
  }
  return Status::noConvergence("the fractional-order RDP series did not converge at α = " + formatNumber(alpha));
}

struct Key {
  double q, sigma, alpha;
  bool operator==(const Key& o) const { return std::memcmp(this, &o, sizeof(Key)) == 0; }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::uint64_t words[3];
    std::memcpy(words, &k, sizeof words);
    std::uint64_t h = words[0] * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 29) ^ words[1]) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31) ^ words[2]) * 0x94D049BB133111EBull;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

}  // namespace

Result<double> subsampledGaussianRdp(double q, double sigma, double alpha) {
  if (!(q > 0.0 && q <= 1.0))
    return Status::invalidArgument("sampling rate q = " + formatNumber(q) + " is not in (0, 1]");
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    return Status::invalidArgument("noise multiplier σ = " + formatNumber(sigma) + " must be > 0");
  }
  if (!(alpha > 1.0) || !std::isfinite(alpha)) {
    return Status::invalidArgument("Rényi order α = " + formatNumber(alpha) + " must be > 1");
  }
  if (q == 1.0) return alpha / (2.0 * sigma * sigma);
  double logA;
  if (alpha == std::floor(alpha) && alpha <= 1e6) {
    logA = integerOrderLogA(q, sigma, static_cast<int>(alpha));
  } else {
    DPX_ASSIGN_OR_RETURN(const double r, fractionalOrderLogA(q, sigma, alpha));
    logA = r;
  }
  const double value = logA / (alpha - 1.0);
  if (!std::isfinite(value)) {
    return Status::numericalIssue("ε_α of one step exceeds the double range at q = " + formatNumber(q) +
                                  ", σ = " + formatNumber(sigma) + ", α = " + formatNumber(alpha));
  }
  return std::max(0.0, value);
}

namespace {

// The memo shared by all threads, keyed by (q, σ, α).
Result<double> sharedMemo(double q, double sigma, double alpha) {
  static std::mutex mutex;
  static std::unordered_map<Key, double, KeyHash> memo;
  const Key key{q, sigma, alpha};
  {
    std::lock_guard lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  DPX_ASSIGN_OR_RETURN(double value, subsampledGaussianRdp(q, sigma, alpha));
  std::lock_guard lock(mutex);
  if (memo.size() > 400000) memo.clear();  // a few thousand (q, σ) pairs; recomputing is cheap
  memo.emplace(key, value);
  return value;
}

}  // namespace

Result<double> subsampledGaussianRdpCached(double q, double sigma, double alpha) {
  // A per-thread front memo for the last (q, σ): a K-curve asks for the same few dozen orders
  // at every point, and the shared map's lock would cost more than the lookup.
  struct Front {
    double q = -1.0;
    double sigma = -1.0;
    std::unordered_map<double, double> values;
  };
  thread_local Front front;
  if (front.q == q && front.sigma == sigma) {
    if (auto it = front.values.find(alpha); it != front.values.end()) return it->second;
  } else {
    front.q = q;
    front.sigma = sigma;
    front.values.clear();
  }
  Result<double> shared = sharedMemo(q, sigma, alpha);
  if (shared) front.values.emplace(alpha, *shared);
  return shared;
}

}  // namespace dpx::core::accounting
