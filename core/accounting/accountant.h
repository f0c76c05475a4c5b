// One interface for every privacy analysis in the seed papers (SPEC §2). An accountant states
// what it assumes (as data), checks those assumptions against a run, reports its native
// parameters, and answers rdp(α), ε(δ), δ(ε) and the trade-off curve where they are defined —
// each number tagged upper bound / estimate / lower bound. Nothing non-finite is returned: a
// value that would not be a finite double comes back as a Status saying why.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.h"
#include "common/status.h"

namespace dpx::core::accounting {

enum class BoundKind { kUpper, kEstimate, kLower };
enum class Conversion { kImproved, kClassic };
enum class Release { kAllIterates, kLastIterate };

std::string_view boundKindName(BoundKind kind);  // "upper" | "estimate" | "lower"
std::string_view conversionName(Conversion conversion);  // "improved" | "classic"
std::string_view releaseName(Release release);  // "all iterates" | "last iterate"
std::optional<Conversion> parseConversion(std::string_view text);

// What an analysis assumes about the run, as data: printed in reports and compared with the
// run by check().
struct Assumptions {
  Sampling sampling;
  Neighbouring neighbouring;
  Release release;
  bool needsStrongConvexity = false;  // λ > 0
  bool needsSmoothness = false;       // β-smooth loss, step size bounded by β
  bool needsLipschitz = false;        // per-example loss L-Lipschitz (clipping never active)
  bool clipsGradients = false;        // clipping to L is the mechanism (DP-SGD)
  std::vector<std::string> statements;  // the assumptions in words
};

struct Violation {
  std::string assumption;  // short tag: "step size", "strong convexity", "sampling", …
  std::string reason;      // the bound and why, in words, with the offending values
};

// A native parameter of the analysis (q, σ_L, ℓ_η, Δ, μ, …), shown next to its ε.
struct NativeValue {
  std::string key;    // JSON key (SPEC §5): "q", "sigma_L", "Lambda_k", …
  std::string label;  // for people: "sampling rate q = m/n"
  double value;
};

// A named variant of an analysis, e.g. the composition baseline of `sgld` or the
// all-iterates baseline of `cyclic`. Variant 0 is the accountant's headline result.
struct Variant {
  std::string id;     // "" for the headline, else e.g. "baseline"
  std::string label;  // "composition baseline (all iterates)"
};

// Settings of the exact (PLD) accountant; ignored by the analytic ones.
struct ExactOptions {
  std::optional<double> discretisation;  // loss grid Δ; unset: chosen to meet `accuracy`
  double accuracy = 0.01;                // wanted (ε_upper − ε_lower)/ε_upper at the run's δ
  std::function<void(double)> progress;  // fraction done, from the computing thread
  const std::atomic<bool>* cancel = nullptr;
};

struct EpsilonOptions {
  Conversion conversion = Conversion::kImproved;
  // Orders to optimise over (RDP accountants); empty means the SPEC §2 default grid.
  std::vector<double> orders;
  // When set, only this order is used (the user "fixes α").
  std::optional<double> fixedAlpha;
  std::string variant;  // "" = headline
  // An order near the expected optimum (e.g. the last answer while calibrating): saves work,
  // never changes the result.
  std::optional<double> alphaHint;
  ExactOptions exact;
};

struct EpsilonResult {
  double epsilon = 0.0;
  double delta = 0.0;
  BoundKind bound = BoundKind::kUpper;
  std::optional<double> alpha;            // optimal order, RDP accountants
  std::optional<Conversion> conversion;   // RDP accountants
  std::optional<double> epsilonUpper;     // bracket, `pld`
  std::optional<double> epsilonLower;
  std::vector<NativeValue> native;        // values specific to this computation (pld: Δ used, …)
};

struct TradeoffCurve {
  std::vector<double> typeOne;  // x: type I error
  std::vector<double> typeTwo;  // y: smallest type II error at that x
};

class Accountant {
 public:
  virtual ~Accountant() = default;

  virtual std::string_view id() const = 0;
  virtual std::string_view name() const = 0;
  virtual std::string_view citation() const = 0;  // paper and theorem
  virtual const Assumptions& assumptions() const = 0;
  virtual BoundKind boundKind() const = 0;
  // Defines rdp(α); its ε(δ) is the RDP→(ε,δ) conversion over orders.
  virtual bool hasRdp() const = 0;
  // Cheap enough to recompute on every slider move (closed forms, cached series). `pld` is not.
  virtual bool isAnalytic() const { return true; }
  // The noise multiplier knob σ sets this analysis' noise (false for `sgmcmc`, whose noise is
  // set by the step size): calibrating σ only makes sense when true.
  virtual bool noiseSetBySigma() const { return true; }
  virtual std::vector<Variant> variants() const { return {Variant{"", std::string(name())}}; }

  // Violated assumptions for this run, in words. Empty when the analysis applies.
  // Invalid params produce a single violation quoting Params::validate().
  virtual std::vector<Violation> check(const Params& params) const = 0;
  virtual Result<std::vector<NativeValue>> native(const Params& params) const = 0;

  // Total RDP of the run at order α (all K steps), for accountants with hasRdp().
  virtual Result<double> rdp(const Params& params, double alpha, std::string_view variant = {}) const;
  virtual Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const = 0;
  // Smallest δ this analysis certifies at ε (with the conversion of `options` for RDP).
  virtual Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const = 0;
  // Type II error at each type I error in `typeOne` (values in [0, 1]).
  virtual Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                         const EpsilonOptions& options = {}) const = 0;

 protected:
  // Violations common to every accountant: invalid params, a sampling scheme or neighbouring
  // relation set on the run that differs from the one assumed.
  std::vector<Violation> commonViolations(const Params& params) const;
  Status checkVariant(std::string_view variant) const;
};

// A number core may hand out: finite and |value| ≤ 1e300.
inline bool isReportable(double value) { return value == value && value <= 1e300 && value >= -1e300; }
// `value`, or a Status "<what> exceeds 1e300" / "<what> is not a number" when it is not reportable.
Result<double> finiteOrStatus(double value, std::string_view what);

}  // namespace dpx::core::accounting
