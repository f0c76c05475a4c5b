#include "accounting/tradeoff.h"

#include <algorithm>
#include <cmath>

#include "common/format.h"
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

}  // namespace dpx::core::accounting
