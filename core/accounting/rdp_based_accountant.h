// Shared machinery of the accountants that bound Rényi DP (rdp, sgld, cyclic, outpert,
// sgmcmc): ε(δ) by converting their RDP over a grid of orders (rdp_conversion.h), δ(ε) the
// same way, and the trade-off curve as the envelope of the f_{ε(δ),δ} they certify.
// Such an accountant is data and functions: its AccountantInfo and an RdpAnalysis (total RDP,
// native values, extra assumptions), both written in its own .cpp; the class adds nothing else.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

// The computation of one RDP analysis, as plain functions.
struct RdpAnalysis {
  // Total RDP of the whole run at order α; params are valid and the variant exists.
  Result<double> (*totalRdp)(const Params& params, double alpha, std::string_view variant) = nullptr;
  // Accountant::native: the analysis' own parameters; validates params itself.
  Result<std::vector<NativeValue>> (*native)(const Params& params) = nullptr;
  // Accountant::addViolations: assumptions beyond the common ones; params are valid. Optional.
  void (*addViolations)(const Params& params, std::vector<Violation>& out) = nullptr;
  // Total RDP is K × (per-step RDP), as for the subsampled Gaussian: then a curve along K needs
  // each order's per-step value once, not once per point (epsilonAlongSteps).
  bool linearInSteps = false;
};

class RdpBasedAccountant : public Accountant {
 public:
  RdpBasedAccountant(AccountantInfo info, RdpAnalysis analysis);

  bool hasRdp() const final { return true; }
  Result<std::vector<NativeValue>> native(const Params& params) const final;
  Result<double> rdp(const Params& params, double alpha, std::string_view variant = {}) const override;
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;

  bool rdpLinearInSteps() const { return m_analysis.linearInSteps; }
  // ε at each of `points` (parameter sets that differ only in K), equal to epsilon() at each;
  // with rdpLinearInSteps() the per-step RDP is computed at most once per order for all points.
  std::vector<Result<EpsilonResult>> epsilonAlongSteps(std::span<const Params> points,
                                                       const EpsilonOptions& options = {}) const;

  // Total RDP at every order (the RDP chart, δ(ε), the trade-off envelope).
  Result<std::vector<double>> rdpProfile(const Params& params, std::span<const double> orders,
                                         std::string_view variant = {}) const;

 protected:
  void addViolations(const Params& params, std::vector<Violation>& out) const final;

 private:
  Result<double> totalRdp(const Params& params, double alpha, std::string_view variant) const {
    return m_analysis.totalRdp(params, alpha, variant);
  }
  Status validateQuery(const Params& params, std::string_view variant) const;
  Result<EpsilonResult> epsilonOverOrders(const Params& params, std::span<const double> orders,
                                          const std::function<Result<double>(std::size_t)>& rdpAt,
                                          const EpsilonOptions& options, std::optional<double> alphaHint) const;

  RdpAnalysis m_analysis;
};

}  // namespace dpx::core::accounting
