#include "accounting/rdp_conversion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/format.h"

namespace dpx::core::accounting {
namespace {

std::vector<double> buildDefaultOrders() {
  std::vector<double> orders;
  for (int i = 101; i <= 199; ++i) orders.push_back(i / 100.0);  // includes 1.25, 1.5, 1.75
  for (int i = 4; i <= 128; ++i) orders.push_back(i / 2.0);      // 2 … 64 step 0.5
  for (int a = 65; a <= 256; ++a) orders.push_back(a);
  orders.push_back(512);
  orders.push_back(1024);
  return orders;
}

std::vector<double> buildLegacyOrders() {
  std::vector<double> orders;
  for (int x = 1; x <= 99; ++x) orders.push_back(1.0 + x / 10.0);
  for (int a = 12; a <= 63; ++a) orders.push_back(a);
  return orders;
}

// Orders evaluated before the pruned scan: enough that every order has an evaluated
// neighbour below it to bound its RDP.
constexpr std::size_t kCoarseOrders = 24;

}  // namespace

std::span<const double> defaultOrders() {
  static const std::vector<double> orders = buildDefaultOrders();
  return orders;
}

std::span<const double> legacyOrders() {
  static const std::vector<double> orders = buildLegacyOrders();
  return orders;
}

Result<std::vector<double>> normalizeOrders(std::vector<double> orders) {
  if (orders.empty()) return Status::invalidArgument("alphas: the list of Rényi orders is empty");
  const KnobInfo& info = knobInfo(Knob::kAlpha);
  for (double a : orders) {
    if (!std::isfinite(a) || a < info.min || a > info.max) {
      return Status::invalidArgument("alphas: order " + formatNumber(a) + " is out of range: Rényi orders must be in " +
                                     knobRangeText(info));
    }
  }
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  return orders;
}

Result<OrderGrid> ordersFor(const EpsilonOptions& options) {
  if (options.fixedAlpha || !options.orders.empty()) {
    DPX_ASSIGN_OR_RETURN(
        std::vector<double> custom,
        normalizeOrders(options.fixedAlpha ? std::vector<double>{*options.fixedAlpha} : options.orders));
    return OrderGrid(std::move(custom));
  }
  return OrderGrid();
}

double conversionOffset(double alpha, double delta, Conversion conversion) {
  const double logDelta = std::log(delta);
  if (conversion == Conversion::kClassic) return -logDelta / (alpha - 1.0);
  return std::log1p(-1.0 / alpha) - (logDelta + std::log(alpha)) / (alpha - 1.0);
}

double logDeltaFromRdp(double rdpValue, double alpha, double epsilon, Conversion conversion) {
  if (conversion == Conversion::kClassic) return (alpha - 1.0) * (rdpValue - epsilon);
  return -(alpha - 1.0) * (epsilon - rdpValue - std::log1p(-1.0 / alpha)) - std::log(alpha);
}

namespace {

// ε − ε_α for every order, memoised per thread: curves and calibration ask for the same grid
// and δ thousands of times, and three logarithms per order would dominate their cost.
const std::vector<double>& offsetsFor(std::span<const double> orders, double delta, Conversion conversion) {
  struct Memo {
    std::vector<double> orders;
    double delta = -1.0;
    Conversion conversion = Conversion::kImproved;
    std::vector<double> offsets;
  };
  thread_local Memo memo;
  thread_local bool memoIsDefaultGrid = false;
  // The default grid is one static array: its address identifies it. Custom grids are compared.
  const bool isDefault = orders.data() == defaultOrders().data() && orders.size() == defaultOrders().size();
  const bool sameGrid = isDefault ? memoIsDefaultGrid
                                  : !memoIsDefaultGrid && memo.orders.size() == orders.size() &&
                                        std::equal(orders.begin(), orders.end(), memo.orders.begin());
  const bool same = sameGrid && memo.delta == delta && memo.conversion == conversion;
  memoIsDefaultGrid = isDefault;
  if (!same) {
    memo.orders.assign(orders.begin(), orders.end());
    memo.delta = delta;
    memo.conversion = conversion;
    memo.offsets.resize(orders.size());
    for (std::size_t i = 0; i < orders.size(); ++i) memo.offsets[i] = conversionOffset(orders[i], delta, conversion);
  }
  return memo.offsets;
}

}  // namespace

Result<OrderOptimum> minimizeOverOrders(std::span<const double> orders,
                                        const std::function<Result<double>(std::size_t)>& rdpAt, double delta,
                                        Conversion conversion, bool monotone, std::optional<double> hint) {
  const std::size_t count = orders.size();
  if (count == 0) return Status::invalidArgument("no Rényi orders to optimise over");
  const std::vector<double>& offset = offsetsFor(orders, delta, conversion);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // NaN: not evaluated yet. Per thread and reused (rdpAt must not call back into this function).
  thread_local std::vector<double> rdpValue;
  rdpValue.assign(count, std::numeric_limits<double>::quiet_NaN());
  double best = kInf;
  std::size_t bestIndex = count;
  Status firstError;

  auto evaluate = [&](std::size_t i) {
    Result<double> r = rdpAt(i);
    if (!r) {
      if (firstError.isOk()) firstError = r.status();
      rdpValue[i] = kInf;  // unusable order (its RDP overflows); others may still be fine
      return;
    }
    rdpValue[i] = *r;
    const double value = *r + offset[i];
    if (value < best) {
      best = value;
      bestIndex = i;
    }
  };

  if (!monotone) {
    for (std::size_t i = 0; i < count; ++i) evaluate(i);
  } else {
    // An incumbent first — the hinted order and its neighbours, or a few orders spread over
    // the grid — then every order is either evaluated or pruned by the bound
    // ε_α ≥ ε_{α′} for the nearest evaluated α′ < α.
    if (hint) {
      const std::size_t at =
          static_cast<std::size_t>(std::lower_bound(orders.begin(), orders.end(), *hint) - orders.begin());
      for (std::size_t i = at > 0 ? at - 1 : 0; i <= std::min(count - 1, at + 1); ++i) evaluate(i);
    }
    const std::size_t stride = std::max<std::size_t>(1, count / kCoarseOrders);
    for (std::size_t i = stride / 2; i < count; i += stride) {
      if (std::isnan(rdpValue[i])) evaluate(i);
    }
    // Most orders are pruned: that path reads only locals (the incumbent is re-read after an
    // evaluation), which keeps this loop, run for every point of a curve, out of memory.
    double lowerRdp = 0.0;  // RDP is ≥ 0 at every order
    double incumbent = best;
    const double* values = rdpValue.data();
    const double* offsets = offset.data();
    for (std::size_t i = 0; i < count; ++i) {
      double value = values[i];
      if (std::isnan(value)) {
        if (lowerRdp + offsets[i] >= incumbent) continue;
        evaluate(i);
        incumbent = best;
        value = values[i];
      }
      if (value != kInf) lowerRdp = std::max(lowerRdp, value);
    }
  }
  if (bestIndex == count) {
    if (!firstError.isOk()) return firstError;
    return Status::numericalIssue("ε is not finite at any Rényi order");
  }
  return OrderOptimum{std::max(0.0, best), orders[bestIndex]};
}

Result<double> deltaOverOrders(std::span<const double> orders, std::span<const double> rdpValues, double epsilon,
                               Conversion conversion) {
  if (orders.size() != rdpValues.size() || orders.empty()) {
    return Status::invalidArgument("orders and RDP values differ in length");
  }
  double best = 0.0;  // log δ ≤ 0
  for (std::size_t i = 0; i < orders.size(); ++i) {
    if (!std::isfinite(rdpValues[i])) continue;
    best = std::min(best, logDeltaFromRdp(rdpValues[i], orders[i], epsilon, conversion));
  }
  return std::exp(best);
}

}  // namespace dpx::core::accounting
