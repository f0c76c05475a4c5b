// Shared machinery of the accountants that bound Rényi DP (rdp, sgld, cyclic, outpert,
// sgmcmc): ε(δ) by converting their RDP over a grid of orders (rdp_conversion.h), δ(ε) the
// same way, and the trade-off curve as the envelope of the f_{ε(δ),δ} they certify.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

class RdpBasedAccountant : public Accountant {
 public:
  bool hasRdp() const final { return true; }
  Result<double> rdp(const Params& params, double alpha, std::string_view variant = {}) const override;
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;

  // Whether total RDP is K × (per-step RDP), as for the subsampled Gaussian: then a curve along K
  // needs each order's per-step value once, not once per point (epsilonAlongSteps).
  virtual bool rdpLinearInSteps() const { return false; }
  // ε at each of `points` (parameter sets that differ only in K), equal to epsilon() at each;
  // with rdpLinearInSteps() the per-step RDP is computed at most once per order for all points.
  std::vector<Result<EpsilonResult>> epsilonAlongSteps(std::span<const Params> points,
                                                       const EpsilonOptions& options = {}) const;

  // Total RDP at every order (the RDP chart, δ(ε), the trade-off envelope).
  Result<std::vector<double>> rdpProfile(const Params& params, std::span<const double> orders,
                                         std::string_view variant = {}) const;

 protected:
  using Accountant::Accountant;
  // Total RDP of the whole run at order α; params are valid and the variant exists.
  virtual Result<double> totalRdp(const Params& params, double alpha, std::string_view variant) const = 0;
  // ε_α non-decreasing in α lets ε(δ) prune orders (exact grid minimum either way).
  virtual bool rdpMonotoneInOrder() const { return true; }

 private:
  Status validateQuery(const Params& params, std::string_view variant) const;
  Result<EpsilonResult> epsilonOverOrders(const Params& params, std::span<const double> orders,
                                          const std::function<Result<double>(std::size_t)>& rdpAt,
                                          const EpsilonOptions& options, std::optional<double> alphaHint) const;
};

}  // namespace dpx::core::accounting
