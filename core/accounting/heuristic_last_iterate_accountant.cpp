#include "accounting/heuristic_last_iterate_accountant.h"

#include <Eigen/Core>
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "accounting/tradeoff.h"
#include "common/format.h"
#include "numerics/root_finding.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Each binomial tail beyond the kept atoms holds at most e^{−69.08} = 1e−30 (Chernoff).
constexpr double kLogTailMass = -69.07755278982137;
// Terms of a log-space tail sum this far below the largest change it by < e^{−40} each.
constexpr double kPruneGap = 40.0;
// log δ below this is reported as this: δ < e^{−5000} is 0 for every purpose, and root finding
// needs finite values.
constexpr double kLogDeltaFloor = -5000.0;
constexpr int kExpandGuard = 200;

const numerics::RootOptions kRootOptions{.relativeTolerance = 1e-12, .absoluteTolerance = 1e-14};

enum class End { kUp, kDown };

// The binomial's atoms kept: [lo, hi], and the log masses of the tails folded onto others.
struct Support {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  double logLowerTail = -kInf;  // log P(K < lo)
  double logUpperTail = -kInf;  // log P(K > hi)
};

// The heuristic's P with atoms (or groups) at a_i = k_i/s, s = σ√T, ascending; Q = N(0, 1).
struct Mixture {
  std::vector<double> a;
  std::vector<double> logW;
  double logWAtZero = -kInf;         // log mass at a = 0: the privacy loss at z → −∞
  double smallestPositive = 0.0;     // smallest a > 0
  std::size_t heaviestPositive = 0;  // index of the heaviest atom with a > 0
  double topCore = 0.0;              // largest a of the kept atoms (without the upper fold)
  double logTopFold = -kInf;         // log mass of the upper tail's atom at a = T/s (ε_up only)
  double z0 = 0.0;                   // where the privacy loss is 0
  double logWMax = 0.0;              // the largest log w_i
  std::vector<double> relW;          // w_i / max w (0 where that underflows)
  // The binomial's atoms whose masses are exact (log-concave in their index, on an even spacing):
  // all kept atoms but the first and last, which carry a folded tail or a shorter group.
  std::size_t interiorBegin = 0;
  std::size_t interiorEnd = 0;
  std::size_t interiorMode = 0;  // the heaviest of them
};

// Bernoulli relative entropy KL(x‖q): T·KL(k/T‖q) is the Chernoff exponent of P(K ≥ k), k ≥ Tq
// (of P(K ≤ k), k ≤ Tq).
double bernoulliEntropy(double x, double q) {
  double r = 0.0;
  if (x > 0.0) r += x * std::log(x / q);
  if (x < 1.0) r += (1.0 - x) * (std::log1p(-x) - std::log1p(-q));
  return r;
}

// Smallest k in [from, to] with exponent(k) ≥ −kLogTailMass, exponent increasing; to + 1 if none.
template <typename F>
std::int64_t firstBeyond(std::int64_t from, std::int64_t to, F&& exponent) {
  if (from > to || exponent(to) < -kLogTailMass) return to + 1;
  if (exponent(from) >= -kLogTailMass) return from;
  while (to - from > 1) {
    const std::int64_t mid = from + (to - from) / 2;
    (exponent(mid) >= -kLogTailMass ? to : from) = mid;
  }
  return to;
}

double logOrMinusInf(double value) { return value > 0.0 ? std::log(value) : -kInf; }

Result<Support> keptSupport(double q, std::int64_t steps) {
  Support out{.lo = 0, .hi = steps};
  if (q >= 1.0) {
    out.lo = steps;
    return out;
  }
  const double t = static_cast<double>(steps);
  const auto exponentAt = [&](std::int64_t k) { return t * bernoulliEntropy(static_cast<double>(k) / t, q); };
  const auto mean = static_cast<std::int64_t>(std::floor(t * q));
  // P(K ≥ k) ≤ exp(−T·KL(k/T‖q)) for k ≥ Tq, so K > hi has mass ≤ 1e−30 (likewise K < lo).
  out.hi = firstBeyond(mean + 1, steps, exponentAt) - 1;
  std::int64_t lo = mean;  // largest k ≤ mean with a large enough exponent, found from the top
  if (exponentAt(0) < -kLogTailMass) {
    lo = 0;
  } else {
    std::int64_t below = 0, above = mean;  // exponent(below) ≥ bound > exponent(above)
    if (exponentAt(above) >= -kLogTailMass) below = above;
    while (above - below > 1) {
      const std::int64_t mid = below + (above - below) / 2;
      (exponentAt(mid) >= -kLogTailMass ? below : above) = mid;
    }
    lo = below + 1;
  }
  out.lo = std::min(lo, out.hi);
  try {
    // P(K ≥ k) = I_q(k, T − k + 1) and P(K ≤ k − 1) = 1 − I_q(k, T − k + 1).
    if (out.hi < steps) out.logUpperTail = logOrMinusInf(boost::math::ibeta(out.hi + 1.0, t - out.hi, q));
    if (out.lo > 0) out.logLowerTail = logOrMinusInf(boost::math::ibetac(double(out.lo), t - out.lo + 1.0, q));
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("binomial tail: ") + e.what());
  }
  return out;
}

void finishMixture(Mixture& m, std::size_t coreBegin, std::size_t coreEnd) {
  m.topCore = m.a[coreEnd - 1];
  m.interiorBegin = std::min(coreBegin + 1, coreEnd);
  m.interiorEnd = std::max(m.interiorBegin, coreEnd - 1);
  m.interiorMode = m.interiorBegin;
  for (std::size_t i = m.interiorBegin; i < m.interiorEnd; ++i) {
    if (m.logW[i] > m.logW[m.interiorMode]) m.interiorMode = i;
  }
  m.logWMax = *std::max_element(m.logW.begin(), m.logW.end());
  m.relW.resize(m.logW.size());
  for (std::size_t i = 0; i < m.logW.size(); ++i) m.relW[i] = std::exp(m.logW[i] - m.logWMax);
  double heaviest = -kInf;
  m.smallestPositive = kInf;
  for (std::size_t i = 0; i < m.a.size(); ++i) {
    if (m.a[i] == 0.0) {
      m.logWAtZero = numerics::logAddExp(m.logWAtZero, m.logW[i]);
      continue;
    }
    m.smallestPositive = std::min(m.smallestPositive, m.a[i]);
    if (m.logW[i] > heaviest) {
      heaviest = m.logW[i];
      m.heaviestPositive = i;
    }
  }
}

// Groups of g neighbouring atoms, each at its largest (kUp) or smallest (kDown) atom; the
// binomial's masses by the ratio pmf(k + 1)/pmf(k) = (T − k)/(k + 1) · q/(1 − q), linear within
// a group (its atoms' masses stay within 1e±32 of its first) and in logs across groups.
Mixture buildMixture(double q, std::int64_t steps, double sigma, std::int64_t width, End end, const Support& support) {
  const double t = static_cast<double>(steps);
  const double s = sigma * std::sqrt(t);
  Mixture m;
  if (end == End::kDown && support.logLowerTail > -kInf) {
    m.a.push_back(0.0);
    m.logW.push_back(support.logLowerTail);
  }
  const std::size_t coreBegin = m.a.size();
  const double odds = q < 1.0 ? q / (1.0 - q) : 0.0;
  double logFirst = q < 1.0 ? numerics::logBinomial(t, double(support.lo)) + support.lo * std::log(q) +
                                  (t - support.lo) * std::log1p(-q)
                            : 0.0;
  for (std::int64_t k = support.lo; k <= support.hi; k += width) {
    const std::int64_t last = std::min(k + width - 1, support.hi);
    double sum = 1.0, ratio = 1.0;
    for (std::int64_t j = k; j < last; ++j) {
      ratio *= (t - double(j)) / double(j + 1) * odds;
      sum += ratio;
    }
    double logMass = logFirst + std::log(sum);
    if (k == support.lo && end == End::kUp) logMass = numerics::logAddExp(logMass, support.logLowerTail);
    if (last == support.hi && end == End::kDown) logMass = numerics::logAddExp(logMass, support.logUpperTail);
    m.a.push_back(double(end == End::kUp ? last : k) / s);
    m.logW.push_back(logMass);
    if (last < support.hi) logFirst += std::log(ratio * (t - double(last)) / double(last + 1) * odds);
  }
  const std::size_t coreEnd = m.a.size();
  if (end == End::kUp && support.logUpperTail > -kInf) {
    m.a.push_back(t / s);
    m.logW.push_back(support.logUpperTail);
    m.logTopFold = support.logUpperTail;
  }
  finishMixture(m, coreBegin, coreEnd);
  return m;
}

// The privacy loss ℓ(z) = log(p/q)(z) = log Σ w_i exp(a_i (z − a_i/2)). Every root search
// evaluates it dozens of times per ε: Eigen's vectorised exp over all atoms costs less than a
// pruned scalar loop (a term e^{−40} below the largest changes the sum by less than its rounding).
double lossAt(const Mixture& m, double z) {
  const auto count = static_cast<Eigen::Index>(m.a.size());
  const Eigen::Map<const Eigen::ArrayXd> a(m.a.data(), count);
  const Eigen::Map<const Eigen::ArrayXd> logW(m.logW.data(), count);
  const double best = (logW + a * (z - 0.5 * a)).maxCoeff();
  return best + std::log((logW + a * (z - 0.5 * a) - best).exp().sum());
}

// ℓ(z) as lossAt, and ℓ′(z) = Σ w_i a_i e^{a_i(z − a_i/2)} / Σ w_i e^{a_i(z − a_i/2)}: the mean atom
// under the tilted weights, from the same exponentials.
numerics::ValueAndSlope lossAndSlope(const Mixture& m, double z) {
  const auto count = static_cast<Eigen::Index>(m.a.size());
  const Eigen::Map<const Eigen::ArrayXd> a(m.a.data(), count);
  const Eigen::Map<const Eigen::ArrayXd> logW(m.logW.data(), count);
  const double best = (logW + a * (z - 0.5 * a)).maxCoeff();
  const Eigen::ArrayXd tilted = (logW + a * (z - 0.5 * a) - best).exp();
  const double sum = tilted.sum();
  return {best + std::log(sum), (a * tilted).sum() / sum};
}

// Running log-sum-exp.
struct LogSum {
  double best = -kInf;
  double sum = 0.0;
  void add(double term) {
    if (term <= best) {
      sum += std::exp(term - best);
    } else {
      sum = sum * std::exp(best - term) + 1.0;
      best = term;
    }
  }
  double value() const { return best == -kInf ? -kInf : best + std::log(sum); }
};

// Σ w_i Φ(±(a_i − z)) (+ for the upper tail), in units of the largest weight: one erfc per atom
// evaluated, no logarithm or exponential. 0 when every term underflows (then log space is needed).
// The interior atoms' terms are log-concave in their index (a log-concave mass times the
// log-concave Φ of an evenly spaced argument), so they are summed outward from the heaviest atom
// and each side stops at the first term that has fallen below 1e−18 of the sum so far while
// falling (the rest are smaller still). At the roots this skips about one erfc in eight. The
// atoms around them (folded tails, a shorter last group) are always summed.
template <bool kUpper>
double linearTail(const Mixture& m, double z) {
  const auto term = [&](std::size_t i) { return m.relW[i] * numerics::normalCdf(kUpper ? m.a[i] - z : z - m.a[i]); };
  double sum = 0.0;
  for (std::size_t i = 0; i < m.interiorBegin; ++i) sum += term(i);
  for (std::size_t i = m.interiorEnd; i < m.a.size(); ++i) sum += term(i);
  if (m.interiorBegin == m.interiorEnd) return sum;
  const double atMode = term(m.interiorMode);
  sum += atMode;
  double previous = atMode;
  for (std::size_t i = m.interiorMode + 1; i < m.interiorEnd; ++i) {
    const double t = term(i);
    sum += t;
    if (t < previous && t < 1e-18 * sum) break;
    previous = t;
  }
  previous = atMode;
  for (std::size_t i = m.interiorMode; i-- > m.interiorBegin;) {
    const double t = term(i);
    sum += t;
    if (t < previous && t < 1e-18 * sum) break;
    previous = t;
  }
  return sum;
}

// Above this the linear sum is exact to rounding: a term lost to underflow is below 1e−58 of it.
constexpr double kLinearTailFloor = 1e-250;

// log P(Z > z) = log Σ w_i Φ(a_i − z), from the top: Φ(a_i − z) only falls on the way down, so
// an atom whose weight times the last Φ is e^{40} below the largest term is skipped unevaluated.
// Summed in linear space unless that underflows.
double logUpperTail(const Mixture& m, double z) {
  if (const double linear = linearTail<true>(m, z); linear > kLinearTailFloor) return m.logWMax + std::log(linear);
  LogSum total;
  double bound = 0.0;
  for (std::size_t i = m.a.size(); i-- > 0;) {
    if (m.logW[i] + bound < total.best - kPruneGap) continue;
    bound = numerics::logNormalCdf(m.a[i] - z);
    total.add(m.logW[i] + bound);
  }
  return total.value();
}

// log P(Z < z) = log Σ w_i Φ(z − a_i), from the bottom (the mirror of logUpperTail).
double logLowerTail(const Mixture& m, double z) {
  if (const double linear = linearTail<false>(m, z); linear > kLinearTailFloor) return m.logWMax + std::log(linear);
  LogSum total;
  double bound = 0.0;
  for (std::size_t i = 0; i < m.a.size(); ++i) {
    if (m.logW[i] + bound < total.best - kPruneGap) continue;
    bound = numerics::logNormalCdf(z - m.a[i]);
    total.add(m.logW[i] + bound);
  }
  return total.value();
}

// log H_{e^ε}(P‖Q) at ε = ℓ(z) (the test "Z > z"), and its slope in z for Newton's method:
// H′ = −p(z) − e^ℓ ℓ′ Q(Z > z) + e^ℓ q(z) = −e^ℓ ℓ′ Q(Z > z), as p = e^ℓ q.
numerics::ValueAndSlope removeDirection(const Mixture& m, double z) {
  const numerics::ValueAndSlope loss = lossAndSlope(m, z);
  const double logRejectedQ = loss.value + numerics::logNormalCdf(-z);
  const double value = numerics::logSubExp(logUpperTail(m, z), logRejectedQ);
  if (value <= kLogDeltaFloor) return {kLogDeltaFloor, 0.0};
  return {value, -loss.slope * std::exp(logRejectedQ - value)};
}

// log H_{e^ε}(Q‖P) at ε = −ℓ(z) (the test "Z < z"), and its slope: H′ = e^{−ℓ} ℓ′ P(Z < z).
numerics::ValueAndSlope addDirection(const Mixture& m, double z) {
  const numerics::ValueAndSlope loss = lossAndSlope(m, z);
  const double logAcceptedP = -loss.value + logLowerTail(m, z);
  const double value = numerics::logSubExp(numerics::logNormalCdf(z), logAcceptedP);
  if (value <= kLogDeltaFloor) return {kLogDeltaFloor, 0.0};
  return {value, loss.slope * std::exp(logAcceptedP - value)};
}

double logDeltaRemove(const Mixture& m, double z) { return removeDirection(m, z).value; }
double logDeltaAdd(const Mixture& m, double z) { return addDirection(m, z).value; }

// z0 with ℓ(z0) = 0. ℓ(0) < 0 (all a ≥ 0), and by Jensen ℓ(z) ≥ E[a]z − E[a²]/2 ≥ 0 at
// z = E[a²]/(2E[a]).
Result<double> zeroLossPoint(const Mixture& m) {
  const auto f = [&](double z) { return lossAt(m, z); };
  if (f(0.0) >= 0.0) return 0.0;
  double first = 0.0, second = 0.0;
  for (std::size_t i = 0; i < m.a.size(); ++i) {
    const double w = std::exp(m.logW[i]);
    first += w * m.a[i];
    second += w * m.a[i] * m.a[i];
  }
  double hi = second / (2.0 * first);
  for (int i = 0; f(hi) < 0.0; ++i) {
    if (i > kExpandGuard || !std::isfinite(hi)) return Status::numericalIssue("no zero of the privacy loss found");
    hi = 2.0 * hi + 1e-300;
  }
  DPX_ASSIGN_OR_RETURN(const numerics::Bracket b, numerics::findRootBracket(f, 0.0, hi, kRootOptions));
  return b.upper;
}

// A bracket [lo, hi] of the z with ℓ(z) = y (lo for y < 0 from ℓ(z) ≤ log(w₀ + (1 − w₀)e^{a₁z − a₁²/2})
// at z ≤ 0, a₁ the smallest positive atom; hi for y ≥ 0 from ℓ(z) ≥ log w_j + a_j(z − a_j/2) at the
// heaviest positive atom j), widened while rounding disagrees.
Result<numerics::Bracket> lossLevelBracket(const Mixture& m, double y, double z0) {
  numerics::Bracket b{z0, z0};
  if (y >= 0.0) {
    const std::size_t j = m.heaviestPositive;
    b.upper = std::max(z0, (y - m.logW[j]) / m.a[j] + 0.5 * m.a[j]);
    for (int i = 0; lossAt(m, b.upper) < y; ++i) {
      if (i > kExpandGuard) return Status::numericalIssue("privacy loss level not bracketed");
      b.upper = z0 + 2.0 * (b.upper - z0) + 1.0;
    }
  } else {
    const double a1 = m.smallestPositive;
    const double logShare = numerics::logSubExp(y, m.logWAtZero) - numerics::log1mExp(std::min(m.logWAtZero, -1e-300));
    b.lower = std::min(z0, (logShare + 0.5 * a1 * a1) / a1);
    for (int i = 0; lossAt(m, b.lower) > y; ++i) {
      if (i > kExpandGuard) return Status::numericalIssue("privacy loss level not bracketed");
      b.lower = z0 - 2.0 * (z0 - b.lower) - 1.0;
    }
  }
  return b;
}

Result<numerics::Bracket> lossLevel(const Mixture& m, double y, double z0) {
  DPX_ASSIGN_OR_RETURN(const numerics::Bracket range, lossLevelBracket(m, y, z0));
  return numerics::findRootBracket([&](double z) { return lossAt(m, z) - y; }, range.lower, range.upper, kRootOptions);
}

// ε of the direction P‖Q at δ: the z where H(P‖Q) at ε = ℓ(z) falls to δ, from its upper end.
// P(Z > z) ≤ fold + Φ(topCore − z) bounds the far end.
// Every root search of a tail evaluates dozens of Φ per atom: Newton's method from the far
// end of the bracket (where log δ is nearly linear in z) needs about half the evaluations of
// TOMS 748, and closes the same bracket.
Result<double> epsilonRemove(const Mixture& m, double logDelta, double z0) {
  const auto f = [&](double z) {
    const numerics::ValueAndSlope d = removeDirection(m, z);
    return numerics::ValueAndSlope{d.value - logDelta, d.slope};
  };
  double lo = z0;
  const double atZ0 = f(z0).value;
  if (atZ0 <= 0.0) return 0.0;
  double atLo = atZ0;
  const double delta = std::exp(logDelta);
  double hi = m.logTopFold <= logDelta - std::log(2.0) ? m.topCore + numerics::normalQuantileComplement(0.5 * delta)
                                                       : m.a.back() + numerics::normalQuantileComplement(delta);
  hi = std::max(hi, z0);
  numerics::ValueAndSlope atHi = f(hi);
  for (int i = 0; atHi.value > 0.0; ++i) {
    if (i > kExpandGuard) return Status::numericalIssue("ε(δ) of the heuristic not bracketed");
    lo = hi;
    atLo = atHi.value;
    hi = z0 + 2.0 * (hi - z0) + 1.0;
    atHi = f(hi);
  }
  DPX_ASSIGN_OR_RETURN(const numerics::Bracket b,
                       numerics::findRootBracketNewton(f, lo, atLo, hi, atHi.value, hi, atHi, kRootOptions));
  return std::max(lossAt(m, b.upper), 0.0);
}

// ε of the direction Q‖P at δ when it exceeds `atLeast` (else `atLeast`): the z where H(Q‖P)
// at ε = −ℓ(z) falls to δ, from its lower end. Q(Z < z) = Φ(z) bounds the far end.
Result<double> epsilonAdd(const Mixture& m, double logDelta, double z0, double atLeast) {
  if (-atLeast <= m.logWAtZero) return atLeast;  // ℓ never reaches −atLeast: H(Q‖P) = 0 there
  double top = z0;
  if (atLeast > 0.0) {
    DPX_ASSIGN_OR_RETURN(const numerics::Bracket level, lossLevel(m, -atLeast, z0));
    top = level.upper;
  }
  const auto f = [&](double z) {
    const numerics::ValueAndSlope d = addDirection(m, z);
    return numerics::ValueAndSlope{d.value - logDelta, d.slope};
  };
  double hi = top;
  double atHi = f(top).value;
  if (atHi <= 0.0) return atLeast;
  double lo = std::min(top, -numerics::normalQuantileComplement(std::exp(logDelta)));
  numerics::ValueAndSlope atLo = f(lo);
  for (int i = 0; atLo.value > 0.0; ++i) {
    if (i > kExpandGuard) return Status::numericalIssue("ε(δ) of the heuristic not bracketed");
    hi = lo;
    atHi = atLo.value;
    lo = top - 2.0 * (top - lo) - 1.0;
    atLo = f(lo);
  }
  DPX_ASSIGN_OR_RETURN(const numerics::Bracket b,
                       numerics::findRootBracketNewton(f, lo, atLo.value, hi, atHi, lo, atLo, kRootOptions));
  return std::max(-lossAt(m, b.lower), atLeast);
}

Result<double> mixtureEpsilon(const Mixture& m, double delta) {
  const double logDelta = std::log(delta);
  const double z0 = m.z0;
  DPX_ASSIGN_OR_RETURN(const double remove, epsilonRemove(m, logDelta, z0));
  return epsilonAdd(m, logDelta, z0, remove);
}

// δ(ε) = max of both directions, each at a z whose loss is on the side that over-states δ.
Result<double> mixtureDelta(const Mixture& m, double epsilon) {
  const double z0 = m.z0;
  double zRemove = z0, zAdd = z0;
  if (epsilon > 0.0) {
    DPX_ASSIGN_OR_RETURN(const numerics::Bracket r, lossLevel(m, epsilon, z0));
    zRemove = r.lower;
  }
  double logDelta = logDeltaRemove(m, zRemove);
  if (-epsilon > m.logWAtZero) {
    if (epsilon > 0.0) {
      DPX_ASSIGN_OR_RETURN(const numerics::Bracket a, lossLevel(m, -epsilon, z0));
      zAdd = a.upper;
    }
    logDelta = std::max(logDelta, logDeltaAdd(m, zAdd));
  }
  return std::clamp(logDelta <= kLogDeltaFloor ? 0.0 : std::exp(logDelta), 0.0, 1.0);
}

// The mixtures of the last few (q, T, σ, g, end): the trade-off envelope and calibration ask
// for the same run many times.
Result<std::shared_ptr<const Mixture>> mixtureFor(double q, std::int64_t steps, double sigma, std::int64_t width,
                                                  End end, const Support& support) {
  using Key = std::tuple<double, std::int64_t, double, std::int64_t, End>;
  const Key key{q, steps, sigma, width, end};
  static std::mutex mutex;
  static std::list<std::pair<Key, std::shared_ptr<const Mixture>>> cache;  // most recent first
  {
    const std::lock_guard lock(mutex);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first != key) continue;
      cache.splice(cache.begin(), cache, it);
      return cache.front().second;
    }
  }
  Mixture built = buildMixture(q, steps, sigma, width, end, support);
  DPX_ASSIGN_OR_RETURN(built.z0, zeroLossPoint(built));
  auto shared = std::make_shared<const Mixture>(std::move(built));
  const std::lock_guard lock(mutex);
  cache.emplace_front(key, shared);
  if (cache.size() > 32) cache.pop_back();
  return shared;
}

Status validateRun(double q, double sigma, std::int64_t steps) {
  if (!(q > 0.0 && q <= 1.0)) return Status::invalidArgument("q = " + formatNumber(q) + " must be in (0, 1]");
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    return Status::invalidArgument("sigma = " + formatNumber(sigma) + " must be a positive finite number");
  }
  if (steps < 1) return Status::invalidArgument("steps = " + std::to_string(steps) + " must be ≥ 1");
  return Status::ok();
}

// Atoms per group before any check: none merged up to `maxGroups` atoms; else as few groups as
// `maxGroups` allows, but no wider than the shift (g − 1 atoms) that moves ε by about a quarter of
// the tolerance (ε moves by ≲ 2(g − 1)/(Tq) of itself when every atom moves by g − 1).
std::int64_t initialGroupWidth(double q, std::int64_t steps, const Support& support,
                               const LastIterateHeuristicOptions& options) {
  const std::int64_t atoms = support.hi - support.lo + 1;
  const std::int64_t maxGroups = std::max<std::int64_t>(options.maxGroups, 1);
  if (atoms <= maxGroups) return 1;
  const double byCount = std::ceil(double(atoms) / double(maxGroups));
  const double byShift = 1.0 + std::floor(options.tolerance * double(steps) * q / 4.0);
  return static_cast<std::int64_t>(std::max(1.0, std::min(byCount, byShift)));
}

}  // namespace

Result<LastIterateHeuristicEpsilon> lastIterateHeuristicEpsilon(double q, double sigma, std::int64_t steps,
                                                                double delta,
                                                                const LastIterateHeuristicOptions& options) {
  DPX_RETURN_IF_ERROR(validateRun(q, sigma, steps));
  if (!(delta > 0.0 && delta < 1.0)) {
    return Status::invalidArgument("delta = " + formatNumber(delta) + " is out of range: δ must be in (0, 1)");
  }
  DPX_ASSIGN_OR_RETURN(const Support support, keptSupport(q, steps));
  std::int64_t width = initialGroupWidth(q, steps, support, options);
  for (;;) {
    DPX_ASSIGN_OR_RETURN(const auto up, mixtureFor(q, steps, sigma, width, End::kUp, support));
    DPX_ASSIGN_OR_RETURN(const double eps, mixtureEpsilon(*up, delta));
    DPX_ASSIGN_OR_RETURN(const double reportable, finiteOrStatus(eps, "ε of the last-iterate heuristic"));
    LastIterateHeuristicEpsilon out{reportable, reportable, width, static_cast<std::int64_t>(up->a.size())};
    if (width == 1 || reportable == 0.0) return out;
    // The lower end: δ_down at ε_up(1 − tolerance) still above δ puts ε_down above that point.
    DPX_ASSIGN_OR_RETURN(const auto down, mixtureFor(q, steps, sigma, width, End::kDown, support));
    out.epsilonLower = reportable * (1.0 - options.tolerance);
    DPX_ASSIGN_OR_RETURN(const double deltaDown, mixtureDelta(*down, out.epsilonLower));
    if (deltaDown >= delta) return out;
    width = std::max<std::int64_t>(1, width / 2);
  }
}

Result<double> lastIterateHeuristicDelta(double q, double sigma, std::int64_t steps, double epsilon,
                                         const LastIterateHeuristicOptions& options) {
  DPX_RETURN_IF_ERROR(validateRun(q, sigma, steps));
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const Support support, keptSupport(q, steps));
  const std::int64_t width = initialGroupWidth(q, steps, support, options);
  DPX_ASSIGN_OR_RETURN(const auto up, mixtureFor(q, steps, sigma, width, End::kUp, support));
  return mixtureDelta(*up, epsilon);
}

HeuristicLastIterateAccountant::HeuristicLastIterateAccountant()
    : Accountant({
          .id = "heuristic-last-iterate",
          .name = "Last-iterate heuristic (linear losses)",
          .citation = "Steinke, Nasr, Ganesh, Balle, Choquette-Choo, Jagielski, Hayes, Thakurta, Smith & Terzis 2024, "
                      "The Last Iterate Advantage (ICLR 2025), Thm 1 (linear losses) as a heuristic for every loss",
          .bound = BoundKind::kEstimate,
          .assumptions =
              {
                  .sampling = Sampling::kPoisson,
                  .neighbouring = Neighbouring::kAddRemove,
                  .release = Release::kLastIterate,
                  .statements = {"Poisson sampling: every record joins each batch independently with probability "
                                 "q = m/n",
                                 "per-example gradients clipped to norm L; noise N(0, σ²L²) added to their sum",
                                 "only the last iterate is released",
                                 "linear losses (the heuristic's model): the last iterate is Binomial(K, q) + "
                                 "N(0, σ²K) against N(0, σ²K), in units of L",
                                 "not a proof: the paper shows losses where the last iterate leaks more"},
                  .plainGradientSteps = true,
              },
          .nativeKeys = {"q", "steps", "sigma", "mu_mean"},
          .color = 0xe377c2,
          .cheapPerPoint = false,
      }) {}

Result<std::vector<NativeValue>> HeuristicLastIterateAccountant::native(const Params& params) const {
  DPX_RETURN_IF_ERROR(params.validate());
  const double steps = static_cast<double>(params.K);
  return std::vector<NativeValue>{
      {"q", "sampling rate q = m/n", params.q()},
      {"steps", "steps K", steps},
      {"sigma", "noise multiplier σ", params.sigma},
      {"mu_mean", "√K·q/σ: the binomial's mean over the noise's sd (its spread adds to the leak)",
       std::sqrt(steps) * params.q() / params.sigma},
  };
}

Result<EpsilonResult> HeuristicLastIterateAccountant::epsilon(const Params& params,
                                                              const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(checkVariant(options.variant));
  DPX_ASSIGN_OR_RETURN(const LastIterateHeuristicEpsilon e,
                       lastIterateHeuristicEpsilon(params.q(), params.sigma, params.K, params.delta));
  EpsilonResult result;
  result.epsilon = e.epsilon;
  result.delta = params.delta;
  result.bound = BoundKind::kEstimate;
  result.native = {
      {"group_width", "binomial atoms merged per group (1: none)", static_cast<double>(e.groupWidth)},
      {"epsilon_merge_lower", "lower end of ε's certified bracket when atoms are merged (= ε when none are)",
       e.epsilonLower},
  };
  return result;
}

Result<double> HeuristicLastIterateAccountant::delta(const Params& params, double epsilon,
                                                     const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(checkVariant(options.variant));
  return lastIterateHeuristicDelta(params.q(), params.sigma, params.K, epsilon);
}

Result<TradeoffCurve> HeuristicLastIterateAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                                               const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(checkVariant(options.variant));
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  return tradeoffEnvelope(
      [&](double delta) -> Result<double> {
        DPX_ASSIGN_OR_RETURN(const LastIterateHeuristicEpsilon e,
                             lastIterateHeuristicEpsilon(params.q(), params.sigma, params.K, delta));
        return e.epsilon;
      },
      typeOne);
}

}  // namespace dpx::core::accounting
