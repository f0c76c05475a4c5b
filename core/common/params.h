// The run being explored: one noisy mini-batch gradient descent on n records,
//   θ_{k+1} = Π_C(θ_k − η_k·[(1/m)Σ_{i∈B_k} clip_L(∇ℓ(θ_k; x_i)) + (σL/m)·ξ_k]),  k = 0…K−1.
// Params holds every knob; knobInfo() is the single table of names, ranges and lessons that the
// CLI flags, the GUI sliders and validate() all read, so a range is written down once.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace dpx::core {

enum class Schedule { kConstant, kDecreasing };
// kBallsInBins: each record is placed in k of the t steps of an epoch, uniformly at random (random
// allocation, Feldman & Shenfeld 2025); batch sizes vary.
enum class Sampling { kPoisson, kUniform, kCyclic, kShuffle, kBallsInBins };
enum class Neighbouring { kAddRemove, kReplaceOne };
// How a step turns the (privatised) gradient into a move: plain SGD θ ← θ − ηg, heavy-ball
// momentum v ← μv + g, θ ← θ − ηv, or Adam (Kingma & Ba 2015; on a privatised gradient,
// Bu, Dong, Long & Su 2020's NoisyAdam).
enum class Optimizer { kSgd, kMomentum, kAdam };

std::string_view scheduleName(Schedule schedule);  // "constant" | "decreasing"
std::string_view samplingName(Sampling sampling);  // "poisson" | "uniform" | "cyclic" | "shuffle" | "balls-in-bins"
std::string_view neighbouringName(Neighbouring relation);  // "add-remove" | "replace-one"
std::string_view optimizerName(Optimizer optimizer);       // "sgd" | "momentum" | "adam"
std::optional<Schedule> parseSchedule(std::string_view text);
std::optional<Sampling> parseSampling(std::string_view text);
std::optional<Neighbouring> parseNeighbouring(std::string_view text);
std::optional<Optimizer> parseOptimizer(std::string_view text);

struct Params {
  std::int64_t n = 60000;  // records
  std::int64_t m = 256;    // batch size (expected size under Poisson sampling)
  double sigma = 1.1;      // noise multiplier: noise std / L2 sensitivity of the clipped sum
  // η and λ default to what the trainer needs to reach softmax regression's non-private optimum on
  // unit-norm rows (Fashion-MNIST: 84 % at m = 64 and 30 epochs, Xiao et al. 2017's logistic
  // regression 84.2 %): η = 1/(2β) for the rows' β ≈ 1, and an L2 term small enough not to
  // underfit. Strong convexity that small leaves the Langevin bound in its linear regime; the
  // papers' presets set their own λ.
  double eta = 0.5;        // step size (η₀ of a schedule)
  std::int64_t K = 14063;  // steps
  double alpha = 8.0;      // Rényi order shown in RDP views
  double delta = 1e-5;     // target δ
  double L = 1.0;          // clip norm = Lipschitz bound of the per-example loss
  double lambda = 1e-6;    // strong convexity (L2 regularisation (λ/2)‖θ‖²)
  double beta = 1.0;       // smoothness of the loss
  double w = 0.0;          // weak convexity (Kong & Ribero 2024, A2)
  double M = 1.0;          // upper curvature (Kong & Ribero 2024, A2)
  double D = 10.0;         // domain diameter (Kong & Ribero 2024, Thm 4.4)
  Schedule schedule = Schedule::kConstant;
  // Unset: every accountant analyses the scheme its theorem assumes. Set: the run uses this
  // scheme, and accountants that assume another report a violation.
  std::optional<Sampling> sampling;
  std::optional<Neighbouring> neighbouring;
  // Unset: every analysis reads the update rule its theorem assumes (plain SGD / SGLD steps).
  // Set: the run's optimiser. Momentum and Adam only post-process a privatised gradient, so the
  // composition accountants (rdp, gdp, pld, the sampler-aware ones) still bound the run; the
  // analyses that follow the iterates themselves (sgld, cyclic, outpert, sgmcmc, the last-iterate
  // heuristic) assume plain steps and report a violation.
  std::optional<Optimizer> optimizer;
  // The loss is convex in the parameters (softmax regression, the default). False for a network:
  // the analyses that need a convex loss (sgld, cyclic's Thm 4.4/4.5, outpert) then report a
  // "non-convex model" violation; the composition accountants hold for any loss.
  bool convexLoss = true;
  bool averaged = false;  // outpert: release the average of the last epoch (Chen, Lee & Kifer 2019, Prop. 3)
  // Balls-in-bins batching (read by `random-allocation` only): each record is in `selections` = k
  // of the `stepsPerEpoch` = t steps of every epoch. Unset: k = 1, t = ⌈n/m⌉.
  std::optional<std::int64_t> selections;
  std::optional<std::int64_t> stepsPerEpoch;

  bool operator==(const Params&) const = default;  // every knob, exactly

  double q() const { return static_cast<double>(m) / static_cast<double>(n); }
  double epochs() const { return static_cast<double>(K) * static_cast<double>(m) / static_cast<double>(n); }
  // Balls-in-bins: t (default ⌈n/m⌉) and k (default 1).
  std::int64_t allocationSteps() const { return stepsPerEpoch.value_or((n + m - 1) / m); }
  std::int64_t allocationSelections() const { return selections.value_or(1); }

  // Every knob inside its knobInfo() range, m ≤ n, and 1 ≤ k ≤ t ≤ 10⁷ when set. The message names the parameter, its
  // value and the accepted range.
  Status validate() const;
};

// K = ⌈epochs·n/m⌉, robust to the rounding of epochs·n/m (15·60000/256 → 3516).
Result<std::int64_t> stepsForEpochs(double epochs, std::int64_t n, std::int64_t m);
// The epochs a run of these knobs trains: K·m/n, or the whole number E it came from when
// K = ⌈E·n/m⌉ (so "30 epochs" stays 30 passes, not 30.003).
double nominalEpochs(const Params& params);

enum class Knob { kN, kM, kSigma, kEta, kK, kAlpha, kDelta, kL, kLambda, kBeta, kW, kCurvatureM, kD };

struct KnobInfo {
  Knob knob;
  const char* key;     // CLI flag without "--", JSON key and preset key: "n", "sigma", "K", …
  const char* symbol;  // UTF-8 symbol shown in the GUI: "σ", "η", …
  const char* title;   // "noise multiplier"
  double min;
  double max;
  bool minInclusive;
  bool integer;
  bool logScale;         // the GUI slider is logarithmic
  int privateDirection;  // +1: larger is more private, −1: smaller is more private, 0: neither
  const char* lesson;    // tooltip: what it is, who reads it, how it moves ε
  // Set where scripts may go beyond the explorer's range [min, max] (δ: the sliders stop at 0.1,
  // but libraries' users ask for δ(ε) and calibrate at δ = 0.13 or 0.79): the open interval
  // (scriptMin, scriptMax) that Params::validate() and the command line accept. NaN: [min, max].
  double scriptMin = std::numeric_limits<double>::quiet_NaN();
  double scriptMax = std::numeric_limits<double>::quiet_NaN();
  bool hasScriptRange() const { return scriptMin == scriptMin; }
};

std::span<const KnobInfo> knobInfos();
const KnobInfo& knobInfo(Knob knob);
const KnobInfo* findKnob(std::string_view key);

double knobValue(const Params& params, Knob knob);
void setKnobValue(Params& params, Knob knob, double value);

// "sigma = -1 is out of range: the noise multiplier σ must be in [0.05, 100]"
// Checks the knob's own range only; m ≤ n is checked by Params::validate().
Status validateKnob(Knob knob, double value);

// The range scripts may use: the explorer's, or the wider open interval of KnobInfo::scriptMin/
// scriptMax (δ ∈ (0, 1)). Params::validate() and the command line read this one; the GUI's
// fields, sliders and presets keep validateKnob's.
Status validateScriptedKnob(Knob knob, double value);
std::string scriptedKnobRequirement(const KnobInfo& info);

// "[0.05, 100]", "(0, 1e+06]", "[1, n]" for a message.
std::string knobRangeText(const KnobInfo& info);
// "the noise multiplier σ must be in [0.05, 100]" — the tail of every range message.
std::string knobRequirement(const KnobInfo& info);

}  // namespace dpx::core
