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

using numerics::logAddExp;

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

// log A_α for fractional α: the series of Mironov, Talwar & Zhang 2019 (§3.3), two alternating
// sums of terms whose magnitudes fall only polynomially past the binomial's peak at small σ
// (hundreds of terms at σ = 0.5). Terms are formed a block at a time with vectorised log and
// log Φ, then added in order, in linear space relative to the largest term so far, so the stop
// (past the peak, once a term is negligible both absolutely, as Opacus stops at e^−30, and
// relative to the sum, e^−36 ≈ 2e−16) and the positivity check fall on the same term as a
// term-by-term log-space sum would. Each sum's first term stays in log form and the others are
// added to it through log1p: when A − 1 is tiny (large σ, small q), log A ≈ 10⁻¹⁸ keeps its
// digits, which a sum of terms near 1 would round away.
Result<double> fractionalOrderLogA(double q, double sigma, double alpha) {
  const double logQ = std::log(q);
  const double log1mQ = std::log1p(-q);
  const double s2 = sigma * sigma;
  const double z0 = s2 * (std::log1p(-q) - logQ) + 0.5;  // σ² log(1/q − 1) + 1/2
  constexpr int kMaxTerms = 200000;
  constexpr int kBlock = 32;
  const Eigen::ArrayXd offsets = Eigen::ArrayXd::LinSpaced(kBlock, 0.0, kBlock - 1.0);
  Eigen::ArrayXd logS0(kBlock), logS1(kBlock), logE0(kBlock), logE1(kBlock), arg0(kBlock), arg1(kBlock);
  double logAbsCoef = 0.0;  // log |C(α, i)| of the last term formed
  int coefSign = 1;
  // A₀ = e^head0 + e^scale·rest0 and A₁ = e^head1 + e^scale·rest1: the first terms apart.
  double scale = -std::numeric_limits<double>::infinity();
  double head0 = 0.0, head1 = 0.0, rest0 = 0.0, rest1 = 0.0;
  // log(e^head + e^scale·rest), rest > −e^{head − scale}.
  const auto combine = [&](double head, double rest) {
    if (rest == 0.0) return head;
    if (scale - head < 700.0) return head + std::log1p(rest * std::exp(scale - head));
    return scale + std::log(rest + std::exp(head - scale));
  };
  for (int first = 0; first < kMaxTerms; first += kBlock) {
    const Eigen::ArrayXd i = offsets + first;
    const Eigen::ArrayXd j = alpha - i;
    // log |α − (i − 1)| − log i, the step of log |C(α, i)|; its prefix sums are the coefficients.
    const Eigen::ArrayXd step = (alpha + 1.0 - i).abs().log() - i.log();
    Eigen::ArrayXd logCoef(kBlock);
    for (int k = 0; k < kBlock; ++k) {
      if (first + k > 0) logAbsCoef += step[k];
      logCoef[k] = logAbsCoef;
    }
    arg0 = (z0 - i) / sigma;  // log E₀ = log ½ erfc((i − z0)/(√2 σ))
    arg1 = (j - z0) / sigma;  // log E₁ = log ½ erfc((z0 − j)/(√2 σ))
    numerics::logNormalCdf(std::span<const double>(arg0.data(), kBlock), std::span<double>(logE0.data(), kBlock));
    numerics::logNormalCdf(std::span<const double>(arg1.data(), kBlock), std::span<double>(logE1.data(), kBlock));
    logS0 = logCoef + i * logQ + j * log1mQ + (i.square() - i) / (2.0 * s2) + logE0;
    logS1 = logCoef + j * logQ + i * log1mQ + (j.square() - j) / (2.0 * s2) + logE1;
    const double blockLargest = std::max(logS0.maxCoeff(), logS1.maxCoeff());
    if (first == 0) {
      head0 = logS0[0];
      head1 = logS1[0];
    }
    if (blockLargest > scale) {
      const double shrink = std::exp(scale - blockLargest);
      rest0 *= shrink;
      rest1 *= shrink;
      scale = blockLargest;
    }
    const Eigen::ArrayXd term0 = (logS0 - scale).exp();
    const Eigen::ArrayXd term1 = (logS1 - scale).exp();
    const double headShare0 = std::exp(head0 - scale), headShare1 = std::exp(head1 - scale);
    for (int k = first == 0 ? 1 : 0; k < kBlock; ++k) {
      const int index = first + k;
      if (alpha - (index - 1) < 0) coefSign = -coefSign;
      if (coefSign > 0) {
        rest0 += term0[k];
        rest1 += term1[k];
      } else {
        if (term0[k] > headShare0 + rest0 || term1[k] > headShare1 + rest1) {
          return Status::numericalIssue("the fractional-order RDP series lost positivity at α = " +
                                        formatNumber(alpha));
        }
        rest0 -= term0[k];
        rest1 -= term1[k];
      }
      const double largest = std::max(logS0[k], logS1[k]);
      const double total = headShare0 + rest0 + headShare1 + rest1;
      if (index > alpha && largest < -30.0 && std::max(term0[k], term1[k]) < total * std::exp(-36.0)) {
        return logAddExp(combine(head0, rest0), combine(head1, rest1));
      }
    }
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
