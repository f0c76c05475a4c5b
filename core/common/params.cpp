#include "common/params.h"

#include <array>
#include <cmath>
#include <limits>

#include "common/format.h"

namespace dpx::core {
namespace {

// The knob ranges of the specification (../shared/SPEC.md). β, w, M and D have no GUI range there;
// the bounds below keep every formula finite and are wide enough for any real loss (β of a logistic
// loss on ‖x‖ ≤ 1 is ≤ 1 + λ).
constexpr std::array<KnobInfo, 13> kKnobs{{
    {Knob::kN, "n", "n", "number of records", 10, 1e8, true, true, true, +1,
     "Records in the training set. Every accountant reads it: the sampling rate q = m/n "
     "(rdp, gdp, pld, sgmcmc) or the 1/n² of the convex analyses (sgld). More records: smaller ε."},
    {Knob::kM, "m", "m", "batch size", 1, 1e8, true, true, true, -1,
     "Records per step (expected size under Poisson sampling), q = m/n. Larger batches are "
     "sampled more often per epoch: at fixed epochs ε grows with m for rdp/gdp/pld."},
    {Knob::kSigma, "sigma", "σ", "noise multiplier", 0.05, 100, true, false, true, +1,
     "Std of the Gaussian noise divided by the sensitivity L of the clipped gradient sum. "
     "Read by every accountant. More noise: smaller ε, noisier training."},
    {Knob::kEta, "eta", "η", "step size", 1e-6, 100, true, false, true, 0,
     "Learning rate (η₀ of a schedule). The convex analyses read it: sgld (Σηₖ), cyclic (ℓ_η), "
     "outpert (contraction ρ), sgmcmc (noise √(η/N)). rdp/gdp/pld do not depend on it."},
    {Knob::kK, "K", "K", "steps", 1, 1e7, true, true, true, -1,
     "Number of noisy steps; epochs E = K·m/n. Composition: ε grows with K (for sgld it "
     "saturates once Σηₖ ≫ 2/λ)."},
    {Knob::kAlpha, "alpha", "α", "Rényi order", 1.01, 1024, true, false, true, 0,
     "Order of the Rényi divergence shown in RDP views. ε(δ) optimises over a grid of orders "
     "unless you fix α."},
    {Knob::kDelta, "delta", "δ", "target δ", 1e-15, 0.1, true, false, true, -1,
     "Probability mass allowed to escape the ε guarantee. Keep it well below 1/n. "
     "Smaller δ: larger ε.",
     0.0, 1.0},
    {Knob::kL, "L", "L", "clip norm / Lipschitz bound", 1e-3, 1e3, true, false, true, 0,
     "DP-SGD clips each per-example gradient to norm L; the convex analyses need the loss to be "
     "L-Lipschitz. ε of rdp/gdp/pld does not depend on L (the noise scales with it)."},
    {Knob::kLambda, "lambda", "λ", "strong convexity", 0, 10, true, false, false, +1,
     "L2 regularisation (λ/2)‖θ‖². sgld and outpert need λ > 0: the contraction it brings makes "
     "their ε stop growing with K."},
    {Knob::kBeta, "beta", "β", "smoothness", 0, 1e6, false, false, true, 0,
     "Smoothness (largest curvature) of the loss. Step sizes must satisfy η < 1/β (sgld) or "
     "η < 2/β (outpert); the trainer computes β from the data."},
    {Knob::kW, "w", "w", "weak convexity", 0, 1e3, true, false, false, +1,
     "Weak convexity of the loss (Kong & Ribero 2024, A2); 0 for convex losses. Larger w: weaker "
     "contraction ℓ_η, larger cyclic ε."},
    {Knob::kCurvatureM, "M", "M", "upper curvature", 0, 1e6, true, false, false, 0,
     "Upper curvature bound of the loss (Kong & Ribero 2024, A2); cyclic needs η ≤ 1/(M + w)."},
    {Knob::kD, "D", "D", "domain diameter", 0, 1e6, false, false, true, 0,
     "Diameter of the parameter domain (Kong & Ribero 2024, Thm 4.4, bounded-domain bound)."},
}};

}  // namespace

std::string_view scheduleName(Schedule schedule) { return schedule == Schedule::kConstant ? "constant" : "decreasing"; }

std::string_view samplingName(Sampling sampling) {
  switch (sampling) {
    case Sampling::kPoisson:
      return "poisson";
    case Sampling::kUniform:
      return "uniform";
    case Sampling::kCyclic:
      return "cyclic";
    case Sampling::kShuffle:
      return "shuffle";
    case Sampling::kBallsInBins:
      return "balls-in-bins";
  }
  return "poisson";
}

std::string_view neighbouringName(Neighbouring relation) {
  return relation == Neighbouring::kAddRemove ? "add-remove" : "replace-one";
}

std::string_view optimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kMomentum:
      return "momentum";
    case Optimizer::kAdam:
      return "adam";
  }
  return "sgd";
}

std::optional<Optimizer> parseOptimizer(std::string_view text) {
  for (Optimizer o : {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam}) {
    if (optimizerName(o) == text) return o;
  }
  return std::nullopt;
}

std::optional<Schedule> parseSchedule(std::string_view text) {
  if (text == "constant") return Schedule::kConstant;
  if (text == "decreasing") return Schedule::kDecreasing;
  return std::nullopt;
}

std::optional<Sampling> parseSampling(std::string_view text) {
  if (text == "poisson") return Sampling::kPoisson;
  if (text == "uniform") return Sampling::kUniform;
  if (text == "cyclic") return Sampling::kCyclic;
  if (text == "shuffle" || text == "shuffled") return Sampling::kShuffle;
  if (text == "balls-in-bins" || text == "random-allocation") return Sampling::kBallsInBins;
  return std::nullopt;
}

std::optional<Neighbouring> parseNeighbouring(std::string_view text) {
  if (text == "add-remove") return Neighbouring::kAddRemove;
  if (text == "replace-one") return Neighbouring::kReplaceOne;
  return std::nullopt;
}

std::span<const KnobInfo> knobInfos() { return kKnobs; }

const KnobInfo& knobInfo(Knob knob) { return kKnobs[static_cast<std::size_t>(knob)]; }

const KnobInfo* findKnob(std::string_view key) {
  for (const KnobInfo& info : kKnobs) {
    if (key == info.key) return &info;
  }
  return nullptr;
}

double knobValue(const Params& p, Knob knob) {
  switch (knob) {
    case Knob::kN:
      return static_cast<double>(p.n);
    case Knob::kM:
      return static_cast<double>(p.m);
    case Knob::kSigma:
      return p.sigma;
    case Knob::kEta:
      return p.eta;
    case Knob::kK:
      return static_cast<double>(p.K);
    case Knob::kAlpha:
      return p.alpha;
    case Knob::kDelta:
      return p.delta;
    case Knob::kL:
      return p.L;
    case Knob::kLambda:
      return p.lambda;
    case Knob::kBeta:
      return p.beta;
    case Knob::kW:
      return p.w;
    case Knob::kCurvatureM:
      return p.M;
    case Knob::kD:
      return p.D;
  }
  return 0.0;
}

void setKnobValue(Params& p, Knob knob, double value) {
  auto toInt = [](double v) {
    // Out-of-range values are kept representable so validate() can report them.
    if (!std::isfinite(v)) return std::int64_t{-1};
    if (v > 9e18) return std::int64_t{9'000'000'000'000'000'000};
    if (v < -9e18) return std::int64_t{-9'000'000'000'000'000'000};
    return static_cast<std::int64_t>(std::llround(v));
  };
  switch (knob) {
    case Knob::kN:
      p.n = toInt(value);
      break;
    case Knob::kM:
      p.m = toInt(value);
      break;
    case Knob::kSigma:
      p.sigma = value;
      break;
    case Knob::kEta:
      p.eta = value;
      break;
    case Knob::kK:
      p.K = toInt(value);
      break;
    case Knob::kAlpha:
      p.alpha = value;
      break;
    case Knob::kDelta:
      p.delta = value;
      break;
    case Knob::kL:
      p.L = value;
      break;
    case Knob::kLambda:
      p.lambda = value;
      break;
    case Knob::kBeta:
      p.beta = value;
      break;
    case Knob::kW:
      p.w = value;
      break;
    case Knob::kCurvatureM:
      p.M = value;
      break;
    case Knob::kD:
      p.D = value;
      break;
  }
}

std::string knobRangeText(const KnobInfo& info) {
  std::string text = info.minInclusive ? "[" : "(";
  text += formatNumber(info.min, 6);
  text += ", ";
  text += info.knob == Knob::kM ? std::string("n") : formatNumber(info.max, 6);
  text += "]";
  return text;
}

std::string knobRequirement(const KnobInfo& info) {
  // Titles such as "target δ" already carry the symbol.
  const std::string title(info.title);
  const std::string name = title.find(info.symbol) == std::string::npos ? title + " " + info.symbol : title;
  return "the " + name + " must be " + (info.integer ? "an integer " : "") + "in " + knobRangeText(info);
}

Status validateKnob(Knob knob, double value) {
  const KnobInfo& info = knobInfo(knob);
  const bool aboveMin = info.minInclusive ? value >= info.min : value > info.min;
  const bool ok =
      std::isfinite(value) && aboveMin && value <= info.max && (!info.integer || value == std::floor(value));
  if (ok) return Status::ok();
  return Status::invalidArgument(std::string(info.key) + " = " + formatNumber(value) +
                                 " is out of range: " + knobRequirement(info));
}

Status validateScriptedKnob(Knob knob, double value) {
  const KnobInfo& info = knobInfo(knob);
  if (!info.hasScriptRange()) return validateKnob(knob, value);
  if (std::isfinite(value) && value > info.scriptMin && value < info.scriptMax) return Status::ok();
  return Status::invalidArgument(std::string(info.key) + " = " + formatNumber(value) +
                                 " is out of range: " + scriptedKnobRequirement(info));
}

std::string scriptedKnobRequirement(const KnobInfo& info) {
  if (!info.hasScriptRange()) return knobRequirement(info);
  const std::string title(info.title);
  const std::string name = title.find(info.symbol) == std::string::npos ? title + " " + info.symbol : title;
  return "the " + name + " must be in (" + formatNumber(info.scriptMin, 6) + ", " + formatNumber(info.scriptMax, 6) +
         ") (the explorer's sliders cover " + knobRangeText(info) + ")";
}

Status Params::validate() const {
  for (const KnobInfo& info : kKnobs) {
    if (Status s = validateScriptedKnob(info.knob, knobValue(*this, info.knob)); !s.isOk()) return s;
  }
  if (m > n) {
    return Status::invalidArgument("m = " + std::to_string(m) + " exceeds n = " + std::to_string(n) +
                                   ": the batch size m must be in [1, n]");
  }
  constexpr std::int64_t kMaxAllocationSteps = 10'000'000;
  if (stepsPerEpoch && (*stepsPerEpoch < 1 || *stepsPerEpoch > kMaxAllocationSteps)) {
    return Status::invalidArgument("steps_per_epoch = " + std::to_string(*stepsPerEpoch) +
                                   " is out of range: the steps per epoch t of balls-in-bins batching must be in [1, "
                                   "1e7]");
  }
  if (selections && (*selections < 1 || *selections > allocationSteps())) {
    return Status::invalidArgument("selections = " + std::to_string(*selections) +
                                   " is out of range: the steps k a record is allocated to per epoch must be in [1, "
                                   "t = " +
                                   std::to_string(allocationSteps()) + "]");
  }
  return Status::ok();
}

Result<std::int64_t> stepsForEpochs(double epochs, std::int64_t n, std::int64_t m) {
  if (!std::isfinite(epochs) || epochs <= 0.0) {
    return Status::invalidArgument("epochs = " + formatNumber(epochs) + " is out of range: epochs must be > 0");
  }
  if (n <= 0 || m <= 0) return Status::invalidArgument("epochs need n ≥ 1 and m ≥ 1");
  const double exact = epochs * static_cast<double>(n) / static_cast<double>(m);
  // Products like 0.1·600/6 land a few ulps above an integer; do not round those up.
  const double steps = std::ceil(exact * (1.0 - 8.0 * std::numeric_limits<double>::epsilon()));
  const KnobInfo& k = knobInfo(Knob::kK);
  if (steps < k.min || steps > k.max) {
    return Status::invalidArgument("epochs = " + formatNumber(epochs) + " gives K = " + formatNumber(steps) +
                                   " steps, out of range: K must be an integer in " + knobRangeText(k));
  }
  return static_cast<std::int64_t>(steps);
}

}  // namespace dpx::core

namespace dpx::core {

double nominalEpochs(const Params& params) {
  const double epochs = params.epochs();
  const double whole = std::round(epochs);
  if (whole >= 1.0) {
    const Result<std::int64_t> steps = stepsForEpochs(whole, params.n, params.m);
    if (steps && *steps == params.K) return whole;
  }
  return epochs;
}

}  // namespace dpx::core
