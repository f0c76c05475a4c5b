#include "accounting/tradeoff.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "accounting/rdp_based_accountant.h"
#include "accounting/rdp_conversion.h"
#include "common/format.h"
#include "numerics/root_finding.h"
#include "numerics/special_functions.h"

namespace dpx::core::accounting {

double gaussianTradeoff(double mu, double typeOne) {
  if (typeOne <= 0.0) return 1.0;
  if (typeOne >= 1.0) return 0.0;
  // Φ⁻¹(1 − x) = −Φ⁻¹(x), exact for x near 0 where 1 − x would round.
  return numerics::normalCdf(-numerics::normalQuantile(typeOne) - mu);
}

double epsilonDeltaTradeoff(double epsilon, double delta, double typeOne) {
  const double x = std::clamp(typeOne, 0.0, 1.0);
  const double a = 1.0 - delta - std::exp(epsilon) * x;
  const double b = std::exp(-epsilon) * (1.0 - delta - x);
  return std::max({0.0, a, b});
}

std::vector<double> defaultTypeOneGrid(int points) {
  points = std::max(points, 3);
  std::vector<double> grid;
  grid.reserve(static_cast<std::size_t>(points));
  grid.push_back(0.0);
  const int logPoints = points - 1;
  const double lo = std::log(1e-6);
  for (int i = 0; i < logPoints; ++i) {
    grid.push_back(i == logPoints - 1 ? 1.0 : std::exp(lo - lo * i / (logPoints - 1)));
  }
  return grid;
}

std::span<const double> envelopeDeltas() {
  static const std::vector<double> deltas = [] {
    std::vector<double> d;
    const int count = 160;
    const double lo = std::log(1e-16);
    const double hi = std::log(0.99);
    for (int i = 0; i < count; ++i) d.push_back(std::exp(lo + (hi - lo) * i / (count - 1)));
    return d;
  }();
  return deltas;
}

Status validateTypeOneGrid(std::span<const double> typeOne) {
  if (typeOne.empty()) return Status::invalidArgument("the type I error grid is empty");
  for (double x : typeOne) {
    if (!std::isfinite(x) || x < 0.0 || x > 1.0) {
      return Status::invalidArgument("type I error " + formatNumber(x) + " is outside [0, 1]");
    }
  }
  return Status::ok();
}

Result<TradeoffCurve> tradeoffEnvelope(const std::function<Result<double>(double)>& epsilonAt,
                                       std::span<const double> typeOne) {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  TradeoffCurve curve;
  curve.typeOne.assign(typeOne.begin(), typeOne.end());
  curve.typeTwo.assign(typeOne.size(), 0.0);
  Status firstError;
  bool any = false;
  for (double delta : envelopeDeltas()) {
    Result<double> eps = epsilonAt(delta);
    if (!eps) {
      if (firstError.isOk()) firstError = eps.status();
      continue;
    }
    any = true;
    for (std::size_t i = 0; i < typeOne.size(); ++i) {
      curve.typeTwo[i] = std::max(curve.typeTwo[i], epsilonDeltaTradeoff(*eps, delta, typeOne[i]));
    }
  }
  if (!any) return firstError;
  return curve;
}

namespace {

// u^α − 1 − α(u − 1) at u = 1 + w: the part of a Rényi sum that is second order in w. A series
// where α|w| is small, where the direct form would cancel to nothing.
double powerExcess(double alpha, double w) {
  if (std::fabs(alpha * w) <= 0.5 && std::fabs(w) <= 0.5) {
    double term = alpha * (alpha - 1.0) / 2.0 * w * w;
    double sum = term;
    // Term ratios (α − k + 1)w/k are at most 1/2 in size here: 60 terms reach 1e−17.
    for (int k = 3; k < 64 && term != 0.0; ++k) {
      term *= (alpha - k + 1.0) / k * w;
      sum += term;
      if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
    }
    return sum;
  }
  return std::expm1(alpha * std::log1p(w)) - alpha * w;
}

// The two Rényi constraints of one order at one type I error x ∈ (0, 1), each multiplied by
// α − 1 and less (α − 1)ε_α, so that "≤ 0" means "allowed" and no power is ever formed:
//   first(t)  = log[(1−x)^α e^{(1−α)t} + x^α (1−e^t)^{1−α}] − (α−1)ε_α     (y = e^t)
//   second(y) = log[(1−y)^α x^{1−α} + y^α (1−x)^{1−α}] − (α−1)ε_α
// Far from the diagonal y = 1 − x the bracket is a log-sum-exp of its two terms. Near it (both
// likelihood ratios within 1/2 of 1) it is 1 + (second-order excess) with the excess summed
// directly: with a sum written as y·u^α + (1−y)·v^α where y·u + (1−y)·v = 1, subtracting the
// first-order part α(u − 1) from each term leaves log1p(y·φ(u) + (1−y)·φ(v)), accurate even when
// (α − 1)ε_α is 1e−18 and the log-sum-exp form would drown in rounding.
// (α − 1)ε_α stays finite for every reportable ε_α (≤ 1e300) and α ≤ 1e5; larger products are
// handled by the caller as the limit ε_α → ∞.
class RenyiConstraints {
 public:
  RenyiConstraints(double alpha, double scaledEpsilon, double typeOne)
      : m_alpha(alpha),
        m_scaled(scaledEpsilon),
        m_x(typeOne),
        m_1mX(1.0 - typeOne),
        m_logX(std::log(typeOne)),
        m_log1mX(std::log1p(-typeOne)) {}

  // Decreasing in t on (−∞, log(1 − x)], +∞ as t → −∞, −(α−1)ε_α at t = log(1 − x).
  double first(double logY) const {
    const double y = std::exp(logY);
    const double d = m_1mX - y;  // likelihood ratios (1−x)/y = 1 + d/y and x/(1−y) = 1 − d/(1−y)
    if (std::fabs(d) <= 0.5 * std::min(y, 1.0 - y)) {
      return std::log1p(y * powerExcess(m_alpha, d / y) + (1.0 - y) * powerExcess(m_alpha, -d / (1.0 - y))) - m_scaled;
    }
    return numerics::logAddExp(m_alpha * m_log1mX + (1.0 - m_alpha) * logY,
                               m_alpha * m_logX + (1.0 - m_alpha) * std::log1p(-y)) -
           m_scaled;
  }
  // Decreasing in y on [0, 1 − x], −(α−1)ε_α at y = 1 − x.
  double second(double y) const {
    const double d = m_1mX - y;  // ratios (1−y)/x = 1 + d/x and y/(1−x) = 1 − d/(1−x)
    if (std::fabs(d) <= 0.5 * std::min(m_x, m_1mX)) {
      return std::log1p(m_x * powerExcess(m_alpha, d / m_x) + m_1mX * powerExcess(m_alpha, -d / m_1mX)) - m_scaled;
    }
    const double logY = y > 0.0 ? std::log(y) : -std::numeric_limits<double>::infinity();
    return numerics::logAddExp(m_alpha * std::log1p(-y) + (1.0 - m_alpha) * m_logX,
                               m_alpha * logY + (1.0 - m_alpha) * m_log1mX) -
           m_scaled;
  }

  // Smallest y with first ≤ 0. Proven bracket in t = log y: the first term alone exceeds the
  // budget below tLo = (α log(1−x) − (α−1)ε)/(α−1); the second term is at most x on [0, 1 − x]
  // (as (1−y) ≥ x), so y = e^{tHi} with (1−x)^α y^{1−α} + x = e^{(α−1)ε} is allowed.
  double smallestFirst() const {
    const double am1 = m_alpha - 1.0;
    const double tLo = (m_alpha * m_log1mX - m_scaled) / am1;
    const double tHi =
        std::min(m_log1mX, (m_alpha * m_log1mX - m_scaled - std::log1p(-std::exp(m_logX - m_scaled))) / am1);
    if (!(tLo < tHi)) return std::exp(std::min(tLo, tHi));
    // Rounding can spoil the sign at an end of the proven bracket; the proof decides then.
    if (first(tLo) <= 0.0) return std::exp(tLo);
    if (first(tHi) > 0.0) return std::exp(tHi);
    numerics::RootOptions options;
    options.relativeTolerance = 1e-14;
    options.absoluteTolerance = 1e-16;
    auto bracket = numerics::findRootBracket([this](double t) { return first(t); }, tLo, tHi, options);
    // The lower end of the bracket: never above the true root.
    return bracket ? std::exp(bracket->lower) : std::exp(tLo);
  }

  // Smallest y with second ≤ 0: 0 when x ≥ e^{−ε} (y = 0 is allowed), else in the proven bracket
  // [1 − (x e^ε)^{(α−1)/α}, 1 − x] (below it the first term alone exceeds the budget).
  double smallestSecond() const {
    if (second(0.0) <= 0.0) return 0.0;
    const double lo = -std::expm1(((m_alpha - 1.0) * m_logX + m_scaled) / m_alpha);
    const double hi = m_1mX;
    if (!(lo < hi)) return std::max(0.0, std::min(lo, hi));
    if (second(lo) <= 0.0) return lo;
    if (second(hi) > 0.0) return hi;
    numerics::RootOptions options;
    options.relativeTolerance = 1e-14;
    auto bracket = numerics::findRootBracket([this](double y) { return second(y); }, lo, hi, options);
    return bracket ? bracket->lower : lo;
  }

  // f_α(x) ≤ y exactly when y meets both constraints (each holds on an interval ending at 1 − x).
  bool allows(double y) const { return y > 0.0 && first(std::log(y)) <= 0.0 && second(y) <= 0.0; }

 private:
  double m_alpha, m_scaled, m_x, m_1mX, m_logX, m_log1mX;
};

Status validateOrder(double alpha, double epsilonAlpha) {
  if (!std::isfinite(alpha) || !(alpha > 1.0)) {
    return Status::invalidArgument("alpha = " + formatNumber(alpha) + " is out of range: the Rényi order must be > 1");
  }
  if (!std::isfinite(epsilonAlpha) || epsilonAlpha < 0.0) {
    return Status::invalidArgument("ε_α = " + formatNumber(epsilonAlpha) + " at α = " + formatNumber(alpha) +
                                   " is out of range: it must be finite and ≥ 0");
  }
  return Status::ok();
}

// f_α(x) for validated inputs.
double renyiTradeoffUnchecked(double epsilonAlpha, double alpha, double x) {
  if (x <= 0.0) return 1.0;  // c₂ = +∞ at x = 0 unless y = 1: no test avoids both errors
  if (x >= 1.0) return 0.0;
  const double scaled = (alpha - 1.0) * epsilonAlpha;
  if (scaled == 0.0) return 1.0 - x;  // ε_α = 0: P = Q, every test lies on the diagonal
  // The limit ε_α → ∞ (both minimal y underflow long before (α − 1)ε_α overflows).
  if (!(scaled <= 1e305)) return 0.0;
  const RenyiConstraints c(alpha, scaled, x);
  return std::clamp(std::max(c.smallestFirst(), c.smallestSecond()), 0.0, 1.0 - x);
}

}  // namespace

Result<double> renyiTradeoff(double epsilonAlpha, double alpha, double typeOne) {
  DPX_RETURN_IF_ERROR(validateOrder(alpha, epsilonAlpha));
  if (!std::isfinite(typeOne) || typeOne < 0.0 || typeOne > 1.0) {
    return Status::invalidArgument("type I error " + formatNumber(typeOne) + " is outside [0, 1]");
  }
  return renyiTradeoffUnchecked(epsilonAlpha, alpha, typeOne);
}

Result<TradeoffCurve> renyiEnvelope(std::span<const double> orders, std::span<const double> totalRdp,
                                    std::span<const double> typeOne) {
  DPX_RETURN_IF_ERROR(validateTypeOneGrid(typeOne));
  if (orders.empty() || orders.size() != totalRdp.size()) {
    return Status::invalidArgument("the Rényi envelope needs one RDP value per order (" +
                                   std::to_string(orders.size()) + " orders, " + std::to_string(totalRdp.size()) +
                                   " values)");
  }
  for (std::size_t i = 0; i < orders.size(); ++i) DPX_RETURN_IF_ERROR(validateOrder(orders[i], totalRdp[i]));
  TradeoffCurve curve;
  curve.typeOne.assign(typeOne.begin(), typeOne.end());
  curve.typeTwo.assign(typeOne.size(), 0.0);
  // Neighbouring x are best served by neighbouring orders: the order that won at the previous x
  // goes first, so the running maximum is high from the start and most orders are rejected by
  // the cheap test.
  std::size_t lastBest = 0;
  for (std::size_t k = 0; k < typeOne.size(); ++k) {
    const double x = typeOne[k];
    if (x <= 0.0 || x >= 1.0) {
      curve.typeTwo[k] = x <= 0.0 ? 1.0 : 0.0;
      continue;
    }
    double best = 0.0;
    for (std::size_t j = 0; j < orders.size(); ++j) {
      const std::size_t i = j == 0 ? lastBest : (j <= lastBest ? j - 1 : j);
      const double scaled = (orders[i] - 1.0) * totalRdp[i];
      if (scaled == 0.0) {
        best = 1.0 - x;
        break;  // nothing lies above the diagonal
      }
      if (!(scaled <= 1e305)) continue;  // f_α = 0 in the limit
      const RenyiConstraints c(orders[i], scaled, x);
      if (c.allows(best)) continue;  // f_α(x) ≤ best: this order does not raise the envelope
      const double y = std::clamp(std::max(c.smallestFirst(), c.smallestSecond()), 0.0, 1.0 - x);
      if (y > best) {
        best = y;
        lastBest = i;
      }
    }
    curve.typeTwo[k] = best;
  }
  return curve;
}

Result<TradeoffCurve> renyiTradeoffCurve(const RdpBasedAccountant& accountant, const Params& params,
                                         std::span<const double> typeOne, const EpsilonOptions& options) {
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  DPX_ASSIGN_OR_RETURN(const std::vector<double> profile,
                       accountant.rdpProfile(params, grid.orders(), options.variant));
  return renyiEnvelope(grid.orders(), profile, typeOne);
}

}  // namespace dpx::core::accounting
