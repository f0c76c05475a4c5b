#include "accounting/rdp_based_accountant.h"

#include <cmath>
#include <limits>
#include <utility>

#include "accounting/rdp_conversion.h"
#include "accounting/tradeoff.h"
#include "common/format.h"

namespace dpx::core::accounting {

RdpBasedAccountant::RdpBasedAccountant(AccountantInfo info, RdpAnalysis analysis)
    : Accountant(std::move(info)), m_analysis(analysis) {}

Result<std::vector<NativeValue>> RdpBasedAccountant::native(const Params& params) const {
  return m_analysis.native(params);
}

void RdpBasedAccountant::addViolations(const Params& params, std::vector<Violation>& out) const {
  if (m_analysis.addViolations != nullptr) m_analysis.addViolations(params, out);
}

Status RdpBasedAccountant::validateQuery(const Params& params, std::string_view variant) const {
  DPX_RETURN_IF_ERROR(params.validate());
  return checkVariant(variant);
}

Result<double> RdpBasedAccountant::rdp(const Params& params, double alpha, std::string_view variant) const {
  DPX_RETURN_IF_ERROR(validateQuery(params, variant));
  DPX_RETURN_IF_ERROR(normalizeOrders({alpha}));
  DPX_ASSIGN_OR_RETURN(double value, totalRdp(params, alpha, variant));
  if (!isReportable(value)) return finiteOrStatus(value, "ε_α at α = " + formatNumber(alpha));
  return value;
}

Result<std::vector<double>> RdpBasedAccountant::rdpProfile(const Params& params, std::span<const double> orders,
                                                           std::string_view variant) const {
  DPX_RETURN_IF_ERROR(validateQuery(params, variant));
  std::vector<double> values;
  values.reserve(orders.size());
  for (double alpha : orders) {
    DPX_ASSIGN_OR_RETURN(const double value, totalRdp(params, alpha, variant));
    if (!isReportable(value)) return finiteOrStatus(value, "ε_α at α = " + formatNumber(alpha)).status();
    values.push_back(value);
  }
  return values;
}

Result<EpsilonResult> RdpBasedAccountant::epsilonOverOrders(const Params& params, std::span<const double> orders,
                                                            const std::function<Result<double>(std::size_t)>& rdpAt,
                                                            const EpsilonOptions& options,
                                                            std::optional<double> alphaHint) const {
  // Every analysis here has ε_α non-decreasing in α (a run's RDP is, for any mechanism), which
  // lets the search prune orders; the grid minimum is exact either way.
  constexpr bool kRdpMonotoneInOrder = true;
  DPX_ASSIGN_OR_RETURN(const OrderOptimum best, minimizeOverOrders(orders, rdpAt, params.delta, options.conversion,
                                                                   kRdpMonotoneInOrder, alphaHint));
  DPX_ASSIGN_OR_RETURN(const double eps, finiteOrStatus(best.epsilon, "ε"));
  EpsilonResult result;
  result.epsilon = eps;
  result.delta = params.delta;
  result.bound = boundKind();
  result.alpha = best.alpha;
  result.conversion = options.conversion;
  return result;
}

Result<EpsilonResult> RdpBasedAccountant::epsilon(const Params& params, const EpsilonOptions& options) const {
  DPX_RETURN_IF_ERROR(validateQuery(params, options.variant));
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  const std::span<const double> orders = grid.orders();
  auto rdpAt = [&](std::size_t i) -> Result<double> {
    Result<double> value = totalRdp(params, orders[i], options.variant);
    if (!value || isReportable(*value)) return value;
    return finiteOrStatus(*value, "ε_α at α = " + formatNumber(orders[i]));
  };
  return epsilonOverOrders(params, orders, rdpAt, options, options.alphaHint);
}

std::vector<Result<EpsilonResult>> RdpBasedAccountant::epsilonAlongSteps(std::span<const Params> points,
                                                                         const EpsilonOptions& options) const {
  std::vector<Result<EpsilonResult>> results;
  results.reserve(points.size());
  if (!rdpLinearInSteps()) {
    for (const Params& p : points) results.push_back(epsilon(p, options));
    return results;
  }
  Result<OrderGrid> grid = ordersFor(options);
  if (!grid) {
    results.assign(points.size(), grid.status());
    return results;
  }
  const std::span<const double> orders = grid->orders();
  // Per-step RDP by order, filled on first use (NaN: not yet computed); the branch-and-bound
  // asks for a tenth of the orders, so the profile is never computed in full.
  std::vector<double> perStep(orders.size(), std::numeric_limits<double>::quiet_NaN());
  std::optional<double> hint = options.alphaHint;
  for (const Params& p : points) {
    if (Status s = validateQuery(p, options.variant); !s.isOk()) {
      results.push_back(s);
      continue;
    }
    auto rdpAt = [&](std::size_t i) -> Result<double> {
      if (std::isnan(perStep[i])) {
        Params oneStep = p;
        oneStep.K = 1;
        DPX_ASSIGN_OR_RETURN(const double value, totalRdp(oneStep, orders[i], options.variant));
        perStep[i] = value;
      }
      const double value = perStep[i] * static_cast<double>(p.K);
      if (isReportable(value)) return value;
      return finiteOrStatus(value, "ε_α at α = " + formatNumber(orders[i]));
    };
    results.push_back(epsilonOverOrders(p, orders, rdpAt, options, hint));
    if (results.back()) hint = results.back()->alpha;
  }
  return results;
}

Result<double> RdpBasedAccountant::delta(const Params& params, double epsilon, const EpsilonOptions& options) const {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  DPX_ASSIGN_OR_RETURN(const std::vector<double> profile, rdpProfile(params, grid.orders(), options.variant));
  return deltaOverOrders(grid.orders(), profile, epsilon, options.conversion);
}

Result<TradeoffCurve> RdpBasedAccountant::tradeoff(const Params& params, std::span<const double> typeOne,
                                                   const EpsilonOptions& options) const {
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  DPX_ASSIGN_OR_RETURN(const std::vector<double> profile, rdpProfile(params, grid.orders(), options.variant));
  auto epsilonAt = [&](double delta) -> Result<double> {
    auto rdpAt = [&](std::size_t i) -> Result<double> { return profile[i]; };
    DPX_ASSIGN_OR_RETURN(const OrderOptimum best,
                         minimizeOverOrders(grid.orders(), rdpAt, delta, options.conversion, false));
    return best.epsilon;
  };
  return tradeoffEnvelope(epsilonAt, typeOne);
}

}  // namespace dpx::core::accounting
