#include "accounting/privacy_profile.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "accounting/gdp_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

constexpr double kGridDelta = 1e-12;

Status validateEpsilonGrid(std::span<const double> grid) {
  if (grid.empty()) return Status::invalidArgument("the ε grid of the privacy profile is empty");
  for (double e : grid) {
    if (!std::isfinite(e) || e < 0.0) {
      return Status::invalidArgument("epsilon = " + formatNumber(e) + " is out of range: ε must be finite and ≥ 0");
    }
  }
  return Status::ok();
}

ProfileCurve curveFrom(std::string accountant, std::string label, BoundKind kind, std::span<const double> grid,
                       const std::function<Result<double>(double)>& deltaAt) {
  ProfileCurve c{std::move(accountant), std::move(label), kind, {}, {}};
  for (double e : grid) {
    Result<double> d = deltaAt(e);
    if (!d || !std::isfinite(*d)) continue;
    c.epsilon.push_back(e);
    c.delta.push_back(std::clamp(*d, 0.0, 1.0));
  }
  return c;
}

Result<ProfileCurve> gdpProfile(const Params& params, std::span<const double> grid, const EpsilonOptions& options) {
  const GdpAccountant& gdp = accountantOf<GdpAccountant>();
  const std::string& id = gdp.info().id;
  return curveFrom(id, id + " (CLT estimate)", gdp.boundKind(), grid,
                   [&](double e) { return gdp.delta(params, e, options); });
}

// The RDP profile once, then each ε's δ minimised over the orders.
Result<ProfileCurve> rdpProfile(const Params& params, std::span<const double> grid, const EpsilonOptions& options) {
  const RdpAccountant& rdp = accountantOf<RdpAccountant>();
  const std::string& id = rdp.info().id;
  DPX_ASSIGN_OR_RETURN(const OrderGrid orders, ordersFor(options));
  DPX_ASSIGN_OR_RETURN(const std::vector<double> profile, rdp.rdpProfile(params, orders.orders(), options.variant));
  const std::string label = id + " (" + std::string(conversionName(options.conversion)) + " conversion)";
  return curveFrom(id, label, rdp.boundKind(), grid,
                   [&](double e) { return deltaOverOrders(orders.orders(), profile, e, options.conversion); });
}

Result<std::vector<ProfileCurve>> pldProfiles(const Params& params, std::span<const double> grid,
                                              const EpsilonOptions& options, const pld::ComputeControl& control) {
  ExactOptions exact = options.exact;
  if (control.cancel) exact.cancel = control.cancel;
  if (control.progress) exact.progress = [&control](double f) { control.report(0.1 + 0.85 * f); };
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, exact));
  const pld::ComposedRun run = r.run->tabulated();  // δ on the whole grid
  const std::string& id = accountantOf<PldAccountant>().info().id;
  std::vector<ProfileCurve> curves;
  curves.push_back(curveFrom(id, id + " upper", BoundKind::kUpper, grid,
                             [&](double e) -> Result<double> { return run.deltaUpper(e); }));
  curves.push_back(curveFrom(id, id + " lower", BoundKind::kLower, grid, [&](double e) -> Result<double> {
    return std::min(run.deltaUpper(e), run.deltaLower(e));
  }));
  return curves;
}

}  // namespace

std::vector<double> profileEpsilonGrid(const Params& params, int points) {
  points = std::max(points, 2);
  double top = 0.0;
  for (const Accountant* a : {static_cast<const Accountant*>(&accountantOf<RdpAccountant>()),
                              static_cast<const Accountant*>(&accountantOf<GdpAccountant>())}) {
    if (top > 0.0) continue;
    Params at = params;
    at.delta = kGridDelta;
    if (Result<EpsilonResult> e = a->epsilon(at); e && std::isfinite(e->epsilon) && e->epsilon > 0.0) {
      top = e->epsilon;
    }
  }
  // No analysis answered (invalid knobs): a generic decade range the chart can still draw.
  if (!(top > 0.0)) top = 10.0;
  top = std::min(top, 1e4);
  const double lo = std::log(top * 1e-3);
  const double hi = std::log(top);
  std::vector<double> grid(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) grid[static_cast<std::size_t>(i)] = std::exp(lo + (hi - lo) * i / (points - 1));
  return grid;
}

Result<std::vector<ProfileCurve>> privacyProfiles(const Params& params, std::span<const double> epsilonGrid,
                                                  const EpsilonOptions& options, const pld::ComputeControl& control) {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(validateEpsilonGrid(epsilonGrid));
  std::vector<ProfileCurve> curves;
  Status firstError;
  auto keep = [&](Result<ProfileCurve> c) {
    if (c && !c->epsilon.empty()) {
      curves.push_back(*std::move(c));
    } else if (firstError.isOk()) {
      firstError = c ? Status::numericalIssue(c->label + ": no finite δ on the ε grid") : c.status();
    }
  };
  keep(gdpProfile(params, epsilonGrid, options));
  keep(rdpProfile(params, epsilonGrid, options));
  control.report(0.1);
  if (control.cancelled()) return Status::cancelled("the privacy profile computation was cancelled");
  Result<std::vector<ProfileCurve>> pld = pldProfiles(params, epsilonGrid, options, control);
  if (!pld && pld.status().code() == StatusCode::kCancelled) return pld.status();
  if (pld) {
    for (ProfileCurve& c : *pld) keep(std::move(c));
  } else if (firstError.isOk()) {
    firstError = pld.status();
  }
  control.report(1.0);
  if (curves.empty()) return firstError;
  return curves;
}

}  // namespace dpx::core::accounting
