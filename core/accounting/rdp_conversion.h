// From Rényi DP to (ε, δ)-DP over a grid of orders.
//   classic  (Mironov 2017, Prop. 3; Ryffel, Bach & Pointcheval 2022, Prop. 2.1):
//            ε = min_α ε_α + log(1/δ)/(α−1)
//   improved (Balle, Barthe, Gaboardi, Hsu, Sato 2020, Thm 21):
//            ε = min_α ε_α + log((α−1)/α) − (log δ + log α)/(α−1)
// ε is clamped at 0 (an (ε′, δ) guarantee with ε′ < 0 implies (0, δ)). The default order grid
// (defaultOrders) is dense near 1, where small ε are decided, and reaches 1024; the legacy grid
// reproduces the pre-2021 TF Privacy "moments accountant".
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

// {1.01 … 1.99 step 0.01} ∪ {1.25, 1.5, 1.75} ∪ {2 … 64 step 0.5} ∪ {65 … 256} ∪ {512, 1024}.
std::span<const double> defaultOrders();
// [1 + x/10 for x = 1…99] ∪ {12 … 63} (TF Privacy before 2021; Opacus' default).
std::span<const double> legacyOrders();
// Sorted, de-duplicated orders, each in [1.01, 1024]; names the first bad order otherwise.
Result<std::vector<double>> normalizeOrders(std::vector<double> orders);
// The orders an EpsilonOptions asks for: fixedAlpha, else options.orders, else defaultOrders()
// (viewed, not copied: ε is asked for thousands of times per curve).
class OrderGrid {
 public:
  OrderGrid() = default;
  explicit OrderGrid(std::vector<double> custom) : m_custom(std::move(custom)) {}
  std::span<const double> orders() const {
    return m_custom.empty() ? defaultOrders() : std::span<const double>(m_custom);
  }
  std::size_t size() const { return orders().size(); }
  double operator[](std::size_t i) const { return orders()[i]; }

 private:
  std::vector<double> m_custom;  // empty: the default grid
};
Result<OrderGrid> ordersFor(const EpsilonOptions& options);

// ε − ε_α for the conversion at order α and δ.
double conversionOffset(double alpha, double delta, Conversion conversion);
// log δ certified at ε by RDP value ε_α at order α (the inverse of the conversion).
double logDeltaFromRdp(double rdpValue, double alpha, double epsilon, Conversion conversion);

struct OrderOptimum {
  double epsilon;
  double alpha;
};

// min over orders of ε_α + offset(α). `rdpAt(i)` gives the total RDP at orders[i]. With
// `monotone` (ε_α non-decreasing in α, true of any Rényi divergence) a branch-and-bound skips
// orders whose lower bound ε_{α′} + offset(α) (α′ < α evaluated) cannot beat the best so far:
// the minimum found is exactly the grid minimum, usually after a tenth of the evaluations.
// `hint` (an order near the expected optimum, e.g. the previous answer during calibration)
// only changes the work done, never the result.
Result<OrderOptimum> minimizeOverOrders(std::span<const double> orders,
                                        const std::function<Result<double>(std::size_t)>& rdpAt, double delta,
                                        Conversion conversion, bool monotone, std::optional<double> hint = {});

// min over orders of δ_α(ε), capped at 1.
Result<double> deltaOverOrders(std::span<const double> orders, std::span<const double> rdpValues, double epsilon,
                               Conversion conversion);

}  // namespace dpx::core::accounting
