// ε as a function of one knob (SPEC §5 `dpx curve`, the GUI's ε chart). Points are computed
// with the accountant's own epsilon(); the accountants memoise what does not change along the
// axis (per-step RDP of the subsampled Gaussian), so a 500-point K-curve costs little more
// than its order conversions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

enum class CurveVariable { kSteps, kEpochs, kSigma, kN, kM, kEta };

std::optional<CurveVariable> parseCurveVariable(std::string_view text);  // K | epochs | sigma | n | m | eta
std::string_view curveVariableName(CurveVariable variable);

struct CurveSpec {
  CurveVariable variable = CurveVariable::kSteps;
  double from = 1;
  double to = 1;
  int points = 100;
  bool logSpacing = false;
};

inline constexpr int kMaxCurvePoints = 100000;

// The x values: `points` values from `from` to `to` (linear or log spacing), rounded to
// integers for K, n and m. Rejects ranges outside the knob's SPEC §1 range.
Result<std::vector<double>> curveAxis(const CurveSpec& spec);

// params with the curve's variable set to x (epochs set K = ⌈x·n/m⌉).
Result<Params> paramsAt(const Params& base, CurveVariable variable, double x);

struct AccountantCurve {
  std::string accountant;
  std::vector<std::optional<double>> epsilon;  // empty where the point has no finite ε
  Status firstError;                           // why the first empty point is empty
};

AccountantCurve epsilonCurve(const Accountant& accountant, const Params& base, CurveVariable variable,
                             std::span<const double> xs, const EpsilonOptions& options = {});

// The curves of several accountants, computed in parallel (oneTBB), in the order given.
std::vector<AccountantCurve> epsilonCurves(std::span<const Accountant* const> accountants, const Params& base,
                                           CurveVariable variable, std::span<const double> xs,
                                           const EpsilonOptions& options = {});

}  // namespace dpx::core::accounting
