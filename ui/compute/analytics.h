// What the explorer's charts and table show for one parameter set, computed off the GUI thread
// (plain C++, no widgets, so it is unit-testable and benchmarkable):
//  * every analytic accountant's ε at δ, native parameters and violated assumptions;
//  * ε vs K (or epochs) for each of them and their teaching variants, with the current K marked
//    (chart 1);
//  * total RDP ε_α vs α for the RDP accountants (chart 2);
//  * the trade-off plane: identity, G_μ of the accountants that report a Gaussian-DP μ (`gdp`),
//    f_{ε,δ} of every accountant and, for the RDP accountants, the curve their ε_α at the α knob
//    alone implies (Balle et al. 2020) (chart 3);
//  * at the α knob: each RDP accountant's ε_α and the (ε, δ) of converting that single order.
// The exact `pld` results and the step-size curves are slower and have their own jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.h"
#include "common/params.h"

namespace dpx::ui {

struct PlotCurve {
  std::string id;          // unique within a chart: "rdp", "sgld:baseline", "tradeoff:rdp"
  std::string label;       // legend text
  std::string accountant;  // id of the accountant it belongs to ("" for references)
  std::vector<double> x;
  std::vector<double> y;
  bool greyed = false;  // the accountant's assumptions fail for this run
  bool dashed = false;  // a variant or reference curve
  std::string tooltip;  // why it is greyed, or what it is
};

struct AccountantSummary {
  std::string id;
  std::string name;
  std::string citation;
  core::accounting::BoundKind bound = core::accounting::BoundKind::kUpper;
  std::optional<core::accounting::EpsilonResult> epsilon;
  std::string error;  // why there is no ε
  std::vector<core::accounting::Violation> violations;
  std::vector<core::accounting::NativeValue> native;
  std::vector<std::string> assumptions;
  // RDP accountants at the α knob alone: the total ε_α and the (ε, δ) of converting that one order.
  std::optional<double> rdpAtAlpha;
  std::optional<core::accounting::EpsilonResult> epsilonAtAlpha;
};

struct AnalyticsSnapshot {
  core::Params params;
  core::accounting::Conversion conversion = core::accounting::Conversion::kImproved;
  bool epochsAxis = false;
  bool fixedAlpha = false;  // ε curves of the RDP accountants at the α knob only
  std::vector<AccountantSummary> accountants;
  std::vector<PlotCurve> epsilonCurves;
  double currentX = 0.0;  // K or epochs of the run
  std::vector<PlotCurve> rdpCurves;
  std::vector<PlotCurve> tradeoffCurves;
  bool draft = false;  // computed on the draft axes (kDraft…Points)
  double computeMilliseconds = 0.0;
};

// Points per ε-vs-K curve and per trade-off curve. An accountant whose ε is a root search of its
// own (AccountantInfo::cheapPerPoint false) gets the sparse count: its curve is smooth at that
// density, and 300 root searches would cost a slider move several frames.
inline constexpr int kEpsilonCurvePoints = 300;
inline constexpr int kSparseEpsilonCurvePoints = 60;
inline constexpr int kTradeoffPoints = 300;
// A draft (a slider being dragged: values stream in faster than a frame) computes every curve on
// a coarser axis; each point is still the exact value at its x. The settled view recomputes at
// full density.
inline constexpr int kDraftEpsilonCurvePoints = 40;
inline constexpr int kDraftSparseEpsilonCurvePoints = 16;
inline constexpr int kDraftTradeoffPoints = 80;
// The RDP chart of a draft draws every kDraftRdpOrderStride-th order of the default grid (and its
// last): at a new σ each fractional order is a series of its own, and the chart's 418 are most
// of a draft's cost there.
inline constexpr int kDraftRdpOrderStride = 5;

// `draft`: the coarse axes of a slider drag (the table's values are exact either way).
AnalyticsSnapshot computeAnalytics(const core::Params& params, core::accounting::Conversion conversion, bool epochsAxis,
                                   bool fixedAlpha = false, bool draft = false);

// The ε the accountant table shows in its rdp row (the DP-SGD baseline): the trainer's default
// calibration target. Nullopt when rdp has no answer for these knobs.
std::optional<double> tableEpsilon(const core::Params& params, core::accounting::Conversion conversion);
// The same ε read from a computed table (its snapshot's row of that accountant).
std::optional<double> tableEpsilon(const AnalyticsSnapshot& snapshot);

// The largest K shown on the ε-vs-K chart: ten times the run, at least 100, at most 10⁷.
std::int64_t epsilonAxisMaxSteps(const core::Params& params);

// Display colours shared by every chart: the accountant's AccountantInfo::color (RGB), grey for
// an unknown id.
unsigned accountantColor(const std::string& id);
// A trained mechanism's colour: its proving accountant's; dark grey for the non-private ones.
unsigned mechanismColor(const std::string& id);

// "assumption: reason" lines joined with newlines.
std::string violationsText(const std::vector<core::accounting::Violation>& violations);

}  // namespace dpx::ui
