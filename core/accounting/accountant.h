// One interface for every privacy analysis DP Explorer offers. An accountant states what it
// assumes (as data), checks those assumptions against a run, reports its native parameters, and
// answers rdp(α), ε(δ), δ(ε) and the trade-off curve where they are defined — each number tagged
// upper bound / estimate / lower bound. Nothing non-finite is returned: a value that would not be
// a finite double comes back as a Status saying why.
// What an accountant *is* (id, name, paper and theorem, assumptions, variants, the native keys
// the CLI promises, its colour) is one AccountantInfo written once in its constructor; every
// consumer (registry, CLI, GUI) reads it from there.
#pragma once

#include <atomic>
#include <cstdint>
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

std::string_view boundKindName(BoundKind kind);          // "upper" | "estimate" | "lower"
std::string_view conversionName(Conversion conversion);  // "improved" | "classic"
std::string_view releaseName(Release release);           // "all iterates" | "last iterate"
std::optional<Conversion> parseConversion(std::string_view text);

// What an analysis assumes about the run, as data: printed in reports and compared with the
// run by check().
struct Assumptions {
  Sampling sampling;
  Neighbouring neighbouring;
  Release release;
  std::vector<std::string> statements{};  // the assumptions in words (convexity, smoothness, clipping, …)
  // Other samplers the analysis also bounds (a fixed-order bound covers shuffled batches: a
  // shuffle is a fixed order applied to a randomly permuted dataset).
  std::vector<Sampling> alsoValidFor{};
  // The analysis follows the iterates of plain (noisy) gradient steps, so a run with momentum or
  // Adam is outside it. False for the analyses of the released noisy gradients, which any
  // optimiser only post-processes.
  bool plainGradientSteps = false;
  // The analysis needs a convex (or weakly convex with certified constants) loss; the reason it
  // gives when Params::convexLoss is false.
  std::string convexLossReason{};
};

struct Violation {
  std::string assumption;  // short tag: "step size", "strong convexity", "sampling", …
  std::string reason;      // the bound and why, in words, with the offending values
  std::string text() const { return assumption + ": " + reason; }
};

// A native parameter of the analysis (q, σ_L, ℓ_η, Δ, μ, …), shown next to its ε.
struct NativeValue {
  std::string key;    // JSON key of `dpx epsilon --json`'s "native": "q", "sigma_L", "Lambda_k", …
  std::string label;  // for people: "sampling rate q = m/n"
  double value;
};

// A named variant of an analysis, e.g. the composition baseline of `sgld` or the
// all-iterates baseline of `cyclic`. Variant 0 is the accountant's headline result.
struct Variant {
  std::string id;     // "" for the headline, else e.g. "baseline"
  std::string label;  // short, reads after the accountant's id: "composition baseline"
  // What the variant teaches, with its formula and source. A variant that has one is drawn on the
  // GUI's ε chart as a dashed curve beside its headline (this text is its tooltip); the others
  // are reachable with `dpx --variant`.
  std::string tooltip;
};

// The native key whose value is a Gaussian-DP μ (see AccountantInfo::reportsGdpMu).
inline constexpr std::string_view kGdpMuKey = "mu";

// Everything about an accountant that is data rather than computation, written once per
// accountant (in its constructor) and read by the registry, the CLI and the GUI alike.
struct AccountantInfo {
  std::string id;        // "rdp": --accountant, JSON "accountant", curve ids, CSV headers
  std::string name;      // for people: "Moments accountant (RDP)"
  std::string citation;  // authors, year and theorem: "Ryffel, Bach & Pointcheval 2022, Thm 3.1, …"
  BoundKind bound = BoundKind::kUpper;
  Assumptions assumptions;
  // The headline first (id ""; added from `name` when omitted), then the named variants.
  std::vector<Variant> variants{};
  // Keys `dpx epsilon --json` always prints under "native", as null where a value is undefined
  // (Δ_∞ when ρ ≥ 1): scripts may rely on them. The values come from native() and epsilon().
  std::vector<std::string> nativeKeys{};
  std::uint32_t color = 0x7f7f7f;  // display colour, 0xRRGGBB, the same in every chart
  // native() reports kGdpMuKey, a μ such that the run is (approximately) μ-GDP: the GUI draws its
  // trade-off G_μ, and the f_{ε,δ} of its one (ε, δ) only as a dashed reference.
  bool reportsGdpMu = false;
  // Cheap enough to recompute on every slider move (closed forms, cached series). `pld` is not.
  bool isAnalytic = true;
  // One ε costs microseconds, so a chart draws it at every point of a dense axis. False for an
  // analytic accountant whose ε is a root search (≈0.1 ms at 10⁵ steps): the explorer draws it
  // on a sparser axis so that a slider move stays within a frame.
  bool cheapPerPoint = true;
  // The noise multiplier knob σ sets this analysis' noise (false for `sgmcmc`, whose noise is
  // set by the step size): calibrating σ only makes sense when true.
  bool noiseSetBySigma = true;
  // The relative difference within which this accountant's numbers, recomputed on another CPU
  // (other vector math, FFT plans, fused multiply-adds), agree with this one's: a privacy
  // statement records it and `dpx verify` compares with it. Closed forms, series and root
  // searches (which stop at 1e−12–1e−13 relative, and a last-bit change of f can move where they
  // stop): 1e−10. The exact composition (grids of 10⁵–10⁶ points discretised with vector math,
  // composed by FFT): 1e−6 — the portable paths (numerics/code_paths.h) move pld's ε by 4e−10
  // at K = 10³, and FFTW's estimated against its measured plans by 6.5e−8 at K = 10⁶, Δ = 1e−4
  // (whose bracket is 6.7e−5 wide). The shuffle bound's numerical integration: 1e−7.
  double crossMachineTolerance = 1e-10;
};

// Settings of the exact (PLD) accountant; ignored by the analytic ones.
struct ExactOptions {
  std::optional<double> discretisation;  // loss grid Δ; unset: chosen to meet `accuracy`
  double accuracy = 0.01;                // wanted (ε_upper − ε_lower)/ε_upper at the run's δ
  // Set (δ(ε) questions: `dpx delta`): `accuracy` is the wanted (δ_upper − δ_lower)/δ_upper at
  // this ε instead, so a tighter accuracy tightens the δ asked for, not the ε at the run's δ.
  std::optional<double> deltaAtEpsilon;
  std::function<void(double)> progress;  // fraction done, from the computing thread
  const std::atomic<bool>* cancel = nullptr;
};

struct EpsilonOptions {
  Conversion conversion = Conversion::kImproved;
  // Orders to optimise over (RDP accountants); empty means defaultOrders() (rdp_conversion.h).
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
  std::optional<double> alpha;           // optimal order, RDP accountants
  std::optional<Conversion> conversion;  // RDP accountants
  std::optional<double> epsilonUpper;    // bracket, `pld`
  std::optional<double> epsilonLower;
  std::vector<NativeValue> native;   // values specific to this computation (pld: Δ used, …)
  std::vector<std::string> caveats;  // what the number does not do that was asked of it, in words
};

struct TradeoffCurve {
  std::vector<double> typeOne;  // x: type I error
  std::vector<double> typeTwo;  // y: smallest type II error at that x
};

class Accountant {
 public:
  virtual ~Accountant() = default;

  const AccountantInfo& info() const { return m_info; }
  std::string_view id() const { return m_info.id; }
  std::string_view name() const { return m_info.name; }
  std::string_view citation() const { return m_info.citation; }  // paper and theorem
  const Assumptions& assumptions() const { return m_info.assumptions; }
  BoundKind boundKind() const { return m_info.bound; }
  const std::vector<Variant>& variants() const { return m_info.variants; }
  bool isAnalytic() const { return m_info.isAnalytic; }
  bool cheapPerPoint() const { return m_info.cheapPerPoint; }
  bool noiseSetBySigma() const { return m_info.noiseSetBySigma; }
  // Defines rdp(α); its ε(δ) is the RDP→(ε,δ) conversion over orders. A property of the code
  // (RdpBasedAccountant implements rdp()), not of the data, so it is not in AccountantInfo.
  virtual bool hasRdp() const { return false; }

  // Violated assumptions for this run, in words. Empty when the analysis applies.
  // Invalid params produce a single violation quoting Params::validate().
  std::vector<Violation> check(const Params& params) const;
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
  explicit Accountant(AccountantInfo info);
  // The assumptions beyond those every accountant checks (valid params, the sampling scheme and
  // neighbouring relation set on the run): appended to `out`; params are valid.
  virtual void addViolations(const Params& params, std::vector<Violation>& out) const;
  Status checkVariant(std::string_view variant) const;

 private:
  AccountantInfo m_info;
};

// A number core may hand out: finite and |value| ≤ 1e300.
inline bool isReportable(double value) { return value == value && value <= 1e300 && value >= -1e300; }
// `value`, or a Status "<what> exceeds 1e300" / "<what> is not a number" when it is not reportable.
Result<double> finiteOrStatus(double value, std::string_view what);

}  // namespace dpx::core::accounting
