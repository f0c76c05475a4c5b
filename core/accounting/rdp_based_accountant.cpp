#include "accounting/rdp_based_accountant.h"

#include <cmath>

#include "accounting/rdp_conversion.h"
#include "accounting/tradeoff.h"
#include "common/format.h"

namespace dpx::core::accounting {

Status RdpBasedAccountant::validateQuery(const Params& params, std::string_view variant) const {
  DPX_RETURN_IF_ERROR(params.validate());
  return checkVariant(variant);
}

Result<double> RdpBasedAccountant::rdp(const Params& params, double alpha, std::string_view variant) const {
  DPX_RETURN_IF_ERROR(validateQuery(params, variant));
  DPX_RETURN_IF_ERROR(normalizeOrders({alpha}));
  Result<double> value = totalRdp(params, alpha, variant);
  if (!value) return value.status();
  if (!isReportable(*value)) return finiteOrStatus(*value, "ε_α at α = " + formatNumber(alpha));
  return value;
}

Result<std::vector<double>> RdpBasedAccountant::rdpProfile(const Params& params, std::span<const double> orders,
                                                           std::string_view variant) const {
  DPX_RETURN_IF_ERROR(validateQuery(params, variant));
  std::vector<double> values;
  values.reserve(orders.size());
  for (double alpha : orders) {
    Result<double> value = totalRdp(params, alpha, variant);
    if (!value) return value.status();
    if (!isReportable(*value)) return finiteOrStatus(*value, "ε_α at α = " + formatNumber(alpha)).status();
    values.push_back(*value);
  }
  return values;
}

Result<EpsilonResult> RdpBasedAccountant::epsilon(const Params& params, const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateQuery(params, options.variant));
  Result<OrderGrid> grid = ordersFor(options);
  if (!grid) return grid.status();
  const std::span<const double> orders = grid->orders();
  auto rdpAt = [&](std::size_t i) -> Result<double> {
    Result<double> value = totalRdp(params, orders[i], options.variant);
    if (!value || isReportable(*value)) return value;
    return finiteOrStatus(*value, "ε_α at α = " + formatNumber(orders[i]));
  };
  Result<OrderOptimum> best =
      minimizeOverOrders(orders, rdpAt, params.delta, options.conversion, rdpMonotoneInOrder(), options.alphaHint);
  if (!best) return best.status();
  Result<double> eps = finiteOrStatus(best->epsilon, "ε");
  if (!eps) return eps.status();
  EpsilonResult result;
  result.epsilon = *eps;
  result.delta = params.delta;
  result.bound = boundKind();
  result.alpha = best->alpha;
  result.conversion = options.conversion;
  return result;
}

Result<double> RdpBasedAccountant::delta(const Params& params, double epsilon, const EpsilonOptions& options) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  Result<OrderGrid> grid = ordersFor(options);
  if (!grid) return grid.status();
  Result<std::vector<double>> profile = rdpProfile(params, grid->orders(), options.variant);
  if (!profile) return profile.status();
  return deltaOverOrders(grid->orders(), *profile, epsilon, options.conversion);
}

Result<TradeoffCurve> RdpBasedAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                                   const EpsilonOptions& options) const {
  Result<OrderGrid> grid = ordersFor(options);
  if (!grid) return grid.status();
  Result<std::vector<double>> profile = rdpProfile(params, grid->orders(), options.variant);
  if (!profile) return profile.status();
  auto epsilonAt = [&](double delta) -> Result<double> {
    auto rdpAt = [&](std::size_t i) -> Result<double> { return (*profile)[i]; };
    Result<OrderOptimum> best = minimizeOverOrders(grid->orders(), rdpAt, delta, options.conversion, false);
    if (!best) return best.status();
    return best->epsilon;
  };
  return tradeoffEnvelope(epsilonAt, typeOne);
}

}  // namespace dpx::core::accounting
