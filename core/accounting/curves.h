// ε as a function of one knob (`dpx curve`, the GUI's ε chart). Points are computed with the
// accountant's own epsilon(); the accountants memoise what does not change along the axis
// (per-step RDP of the subsampled Gaussian), so a 500-point K-curve costs little more than its
// order conversions. The exact `pld` accountant along K is the exception: pldEpsilonCurve
// composes the whole curve on one loss grid.
#pragma once

#include <cstdint>
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
// integers for K, n and m. Rejects ranges outside the knob's range (knobInfo).
Result<std::vector<double>> curveAxis(const CurveSpec& spec);

// params with the curve's variable set to x (epochs set K = ⌈x·n/m⌉).
Result<Params> paramsAt(const Params& base, CurveVariable variable, double x);

struct AccountantCurve {
  std::string accountant;
  std::vector<std::optional<double>> epsilon;  // empty where the point has no finite ε
  Status firstError;                           // why the first empty point is empty
  // `pld` along K or epochs only (pldEpsilonCurve): the optimistic end of each point's bracket
  // (`epsilon` is the pessimistic end) and the one loss grid Δ of the whole curve.
  std::vector<std::optional<double>> epsilonLower;
  std::optional<double> discretisation;
};

// ---------------------------------------------------------------------------------------------
// The exact `pld` accountant along K: one function for `dpx curve --accountant pld --vary K|epochs`
// and the GUI's ε-vs-K bracket, so both draw the same numbers.
//
// Every point is composed on ONE loss grid Δ. On a fixed grid the pessimistic (connect-the-dots)
// composition of K + 1 steps dominates that of K (the first K steps are a post-processing of
// K + 1), and likewise the optimistic one, so both ends of the bracket are non-decreasing in K
// (up to the truncated tail mass, ≤ 1e−20 in δ). Choosing Δ per point, as PldAccountant::epsilon
// does, lets a coarser grid at a larger K give a smaller ε: the curve can dip (it did at K = 4670
// → 4680 for the default knobs, where the automatic Δ halves).
//
// Δ policy:
//  * options.discretisation set: that Δ for every point. A point whose composed window would
//    exceed the memory guard fails with the guard's reason (it is not coarsened: the caller
//    asked for that grid).
//  * unset: the automatic Δ of PldAccountant at the curve's largest valid K and the requested
//    options.accuracy, i.e. the Δ for which ε_upper − ε_lower ≤ accuracy·ε_upper at that K and
//    the run's δ (or, when the memory guard stops the refinement first, the finest grid that fits
//    there, with the width reached in `achievedWidth`). Every smaller K composes into a smaller
//    window on the same Δ, so no point needs coarsening. The relative width grows with K on a
//    fixed grid (in every regime we looked at), so the largest K is where the accuracy binds;
//    each point reports both ends, so its width is visible.
// A point is the same composition as PldAccountant::epsilon at that K with discretisation = Δ
// (equal up to FFT round-off; bit-identical in practice).
struct PldCurvePoint {
  std::int64_t steps = 0;
  std::optional<double> epsilonUpper;  // pessimistic discretisation: an upper bound on ε(δ)
  std::optional<double> epsilonLower;  // optimistic discretisation: a lower bound, ≤ epsilonUpper
  Status error;                        // why the point has no bracket; ok when it has one
};

struct PldCurve {
  double discretisation = 0.0;        // the loss grid Δ of every point
  bool automatic = false;             // Δ chosen by the policy above (false: fixed by the caller)
  std::int64_t gridSteps = 0;         // automatic: the K Δ was chosen at (the largest valid K)
  double requestedWidth = 0.0;        // automatic: options.accuracy
  double achievedWidth = 0.0;         // automatic: (ε_upper − ε_lower)/ε_upper at gridSteps
  std::vector<PldCurvePoint> points;  // one per requested K, in the order given
  Status firstError() const;          // the first failed point's reason; ok when none failed
};

// The ε bracket at the run's δ for each K in `steps` (other knobs from `base`), on one grid Δ.
// Duplicated K are composed once. Progress is reported in [0, 1] and cancellation is polled
// between and inside compositions (a cancelled call returns StatusCode::kCancelled). Returns an
// error only when no Δ can be chosen (no valid K, invalid knobs or options, cancelled);
// otherwise points fail one by one with their reason.
Result<PldCurve> pldEpsilonCurve(const Params& base, std::span<const std::int64_t> steps,
                                 const ExactOptions& options = {});

// ε of `accountant` at each x. For `pld` along K or epochs this is pldEpsilonCurve (one Δ for
// the curve; epsilonLower and discretisation are filled); along the other knobs, and for every
// other accountant, each point is the accountant's own epsilon().
AccountantCurve epsilonCurve(const Accountant& accountant, const Params& base, CurveVariable variable,
                             std::span<const double> xs, const EpsilonOptions& options = {});

// The curves of several accountants, computed in parallel (oneTBB), in the order given.
std::vector<AccountantCurve> epsilonCurves(std::span<const Accountant* const> accountants, const Params& base,
                                           CurveVariable variable, std::span<const double> xs,
                                           const EpsilonOptions& options = {});

}  // namespace dpx::core::accounting
