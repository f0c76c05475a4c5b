#include "accounting/phased_run.h"

#include <cmath>
#include <limits>

#include "accounting/random_allocation_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/subsampled_gaussian_rdp.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// Overloaded lambdas for std::visit.
template <class... F>
struct Visitor : F... {
  using F::operator()...;
};
template <class... F>
Visitor(F...) -> Visitor<F...>;

std::string phaseName(std::size_t index) { return "phase " + std::to_string(index + 1); }

std::string plural(std::int64_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

Status validateGaussian(const GaussianPhase& p, const std::string& where) {
  if (!(p.samplingProbability > 0.0 && p.samplingProbability <= 1.0)) {
    return Status::invalidArgument(where + ": sampling_probability = " + formatNumber(p.samplingProbability) +
                                   " must be in (0, 1] (the probability that a record joins a step's batch)");
  }
  if (!(p.noiseMultiplier > 0.0) || !std::isfinite(p.noiseMultiplier)) {
    return Status::invalidArgument(where + ": noise_multiplier = " + formatNumber(p.noiseMultiplier) +
                                   " must be a finite number > 0 (noise std / L2 sensitivity)");
  }
  if (p.steps < 1) return Status::invalidArgument(where + ": steps = " + std::to_string(p.steps) + " must be ≥ 1");
  return Status::ok();
}

Status validateAllocation(const RandomAllocationPhase& p, const std::string& where) {
  if (!(p.noiseMultiplier > 0.0) || !std::isfinite(p.noiseMultiplier)) {
    return Status::invalidArgument(where + ": noise_multiplier = " + formatNumber(p.noiseMultiplier) +
                                   " must be a finite number > 0 (noise std / L2 sensitivity)");
  }
  if (p.stepsPerEpoch < 1) {
    return Status::invalidArgument(where + ": steps per epoch t = " + std::to_string(p.stepsPerEpoch) + " must be ≥ 1");
  }
  if (p.selections < 1 || p.selections > p.stepsPerEpoch) {
    return Status::invalidArgument(where + ": selections k = " + std::to_string(p.selections) +
                                   " must be in [1, t = " + std::to_string(p.stepsPerEpoch) +
                                   "] (the steps of an epoch each record takes part in)");
  }
  if (p.epochs < 1) return Status::invalidArgument(where + ": epochs = " + std::to_string(p.epochs) + " must be ≥ 1");
  return Status::ok();
}

// Adds b's count to a when both are the same step.
bool absorb(Phase& a, const Phase& b) {
  if (const auto* ga = std::get_if<GaussianPhase>(&a)) {
    const auto* gb = std::get_if<GaussianPhase>(&b);
    if (!gb || gb->samplingProbability != ga->samplingProbability || gb->noiseMultiplier != ga->noiseMultiplier) {
      return false;
    }
    std::get<GaussianPhase>(a).steps += gb->steps;
    return true;
  }
  const auto& ra = std::get<RandomAllocationPhase>(a);
  const auto* rb = std::get_if<RandomAllocationPhase>(&b);
  if (!rb || rb->noiseMultiplier != ra.noiseMultiplier || rb->stepsPerEpoch != ra.stepsPerEpoch ||
      rb->selections != ra.selections) {
    return false;
  }
  std::get<RandomAllocationPhase>(a).epochs += rb->epochs;
  return true;
}

// The first random-allocation phase, refused for `what` with `code`.
Status refuseAllocation(std::span<const Phase> phases, StatusCode code, const std::string& what) {
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (std::holds_alternative<RandomAllocationPhase>(phases[i])) {
      return {code, phaseName(i) + " (random allocation: " + phaseDescription(phases[i]) + ") " + what};
    }
  }
  return Status::ok();
}

}  // namespace

std::string phaseKindName(const Phase& phase) {
  return std::visit(Visitor{[](const GaussianPhase&) { return std::string("Poisson-subsampled Gaussian"); },
                            [](const RandomAllocationPhase&) { return std::string("random allocation"); }},
                    phase);
}

std::string phaseDescription(const Phase& phase) {
  return std::visit(
      Visitor{[](const GaussianPhase& p) {
                return "q = " + formatNumber(p.samplingProbability) + ", σ = " + formatNumber(p.noiseMultiplier) +
                       ", " + plural(p.steps, "step");
              },
              [](const RandomAllocationPhase& p) {
                return "σ = " + formatNumber(p.noiseMultiplier) + ", k = " + std::to_string(p.selections) +
                       " of t = " + std::to_string(p.stepsPerEpoch) + " steps, " + plural(p.epochs, "epoch");
              }},
      phase);
}

std::int64_t phaseSteps(const Phase& phase) {
  return std::visit(Visitor{[](const GaussianPhase& p) { return p.steps; },
                            [](const RandomAllocationPhase& p) { return p.stepsPerEpoch * p.epochs; }},
                    phase);
}

Status validatePhase(const Phase& phase, std::size_t index) {
  const std::string where = phaseName(index);
  return std::visit(Visitor{[&](const GaussianPhase& p) { return validateGaussian(p, where); },
                            [&](const RandomAllocationPhase& p) { return validateAllocation(p, where); }},
                    phase);
}

Status validatePhases(std::span<const Phase> phases) {
  if (phases.empty()) return Status::invalidArgument("the run has no phase: at least one is needed");
  for (std::size_t i = 0; i < phases.size(); ++i) DPX_RETURN_IF_ERROR(validatePhase(phases[i], i));
  return Status::ok();
}

std::vector<Phase> mergedPhases(std::span<const Phase> phases) {
  std::vector<Phase> out;
  for (const Phase& p : phases) {
    if (out.empty() || !absorb(out.back(), p)) out.push_back(p);
  }
  return out;
}

namespace {

// The Gaussian phases' segments, equal (q, σ) merged wherever they are (composition commutes);
// random-allocation phases are left out.
Result<std::vector<pld::GaussianSegment>> segmentsOfGaussianPhases(std::span<const Phase> phases) {
  std::vector<pld::GaussianSegment> segments;
  for (const Phase& phase : phases) {
    const auto* g = std::get_if<GaussianPhase>(&phase);
    if (!g) continue;
    bool merged = false;
    for (pld::GaussianSegment& s : segments) {
      if (s.q == g->samplingProbability && s.sigma == g->noiseMultiplier) {
        // Steps beyond 2^62 are more than any run and would overflow the composition's counts.
        if (s.count > std::numeric_limits<std::int64_t>::max() / 2 - g->steps) {
          return Status::invalidArgument("the run has more than 2^62 steps of q = " + formatNumber(s.q) +
                                         ", σ = " + formatNumber(s.sigma));
        }
        s.count += g->steps;
        merged = true;
        break;
      }
    }
    if (!merged) segments.push_back({g->samplingProbability, g->noiseMultiplier, g->steps});
  }
  return segments;
}

// The random-allocation phases as runs, equal (σ, t, k) merged wherever they are.
Result<std::vector<RandomAllocationRunSpec>> allocationSpecsOf(std::span<const Phase> phases) {
  std::vector<RandomAllocationRunSpec> specs;
  for (const Phase& phase : phases) {
    const auto* a = std::get_if<RandomAllocationPhase>(&phase);
    if (!a) continue;
    bool merged = false;
    for (RandomAllocationRunSpec& s : specs) {
      if (s.sigma == a->noiseMultiplier && s.stepsPerEpoch == a->stepsPerEpoch && s.selections == a->selections) {
        if (s.epochs > std::numeric_limits<std::int64_t>::max() / 4 / a->stepsPerEpoch - a->epochs) {
          return Status::invalidArgument("the run has more than 2^61 random-allocation steps of σ = " +
                                         formatNumber(s.sigma));
        }
        s.epochs += a->epochs;
        merged = true;
        break;
      }
    }
    if (!merged) specs.push_back({a->noiseMultiplier, a->selections, a->stepsPerEpoch, a->epochs});
  }
  return specs;
}

}  // namespace

Result<std::vector<pld::GaussianSegment>> gaussianSegments(std::span<const Phase> phases) {
  DPX_RETURN_IF_ERROR(validatePhases(phases));
  DPX_RETURN_IF_ERROR(refuseAllocation(phases, StatusCode::kUnimplemented,
                                       "is not a Poisson-subsampled Gaussian phase: phasedPldRun composes it "
                                       "with the others"));
  return segmentsOfGaussianPhases(phases);
}

namespace {

// The random-allocation accountant's run as the phased run's result (its work limit included).
PldRunResult pldRunOf(const RandomAllocationRunResult& r) {
  PldRunResult out;
  out.run = r.run;
  out.achievedWidth = r.achievedWidth;
  out.refinements = r.refinements;
  out.workLimited = r.limited;
  return out;
}

// A run of random-allocation epochs alone (equal σ, t and k once merged) is the random-allocation
// accountant's run: the knobs that describe it (t steps per epoch, k selections, E epochs as
// K = t·E steps over n = t·m records) go through its validation, grid choice and cache.
Result<PldRunResult> allocationRun(const RandomAllocationPhase& phase, double delta, const ExactOptions& options) {
  Params p;
  p.sigma = phase.noiseMultiplier;
  p.m = (10 + phase.stepsPerEpoch - 1) / phase.stepsPerEpoch;  // n = t·m ≥ the 10 records n needs
  p.n = phase.stepsPerEpoch * p.m;
  p.K = phase.stepsPerEpoch * phase.epochs;
  p.delta = delta;
  p.stepsPerEpoch = phase.stepsPerEpoch;
  p.selections = phase.selections;
  if (Status s = p.validate(); !s.isOk()) {
    return Status::invalidArgument("phase 1 (random allocation: " + phaseDescription(Phase(phase)) +
                                   "): " + s.message());
  }
  DPX_ASSIGN_OR_RETURN(const RandomAllocationRunResult r, RandomAllocationAccountant::run(p, options));
  return pldRunOf(r);
}

}  // namespace

Result<PldRunResult> phasedPldRun(std::span<const Phase> phases, double delta, const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(validatePhases(phases));
  const std::vector<Phase> merged = mergedPhases(phases);
  if (merged.size() == 1) {
    if (const auto* allocation = std::get_if<RandomAllocationPhase>(&merged.front())) {
      return allocationRun(*allocation, delta, options);
    }
  }
  DPX_ASSIGN_OR_RETURN(const std::vector<pld::GaussianSegment> segments, segmentsOfGaussianPhases(merged));
  DPX_ASSIGN_OR_RETURN(const std::vector<RandomAllocationRunSpec> allocations, allocationSpecsOf(merged));
  if (allocations.empty()) return pldRunSegments(segments, delta, options);
  // Random allocation beside other phases: every step on one grid, chosen as the
  // random-allocation accountant chooses it (its work limit included).
  DPX_ASSIGN_OR_RETURN(const RandomAllocationRunResult r, randomAllocationRun(allocations, segments, delta, options));
  return pldRunOf(r);
}

Result<EpsilonResult> phasedPldEpsilon(std::span<const Phase> phases, double delta, const ExactOptions& options) {
  DPX_ASSIGN_OR_RETURN(const PldRunResult run, phasedPldRun(phases, delta, options));
  return pldEpsilonOf(run, delta, options);
}

Result<std::pair<double, double>> phasedPldDelta(std::span<const Phase> phases, double epsilon, double runDelta,
                                                 const ExactOptions& options) {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  // The grid is chosen for the δ bracket at this ε, as the knob run's δ(ε) is.
  ExactOptions forDelta = options;
  if (!forDelta.discretisation) forDelta.deltaAtEpsilon = epsilon;
  DPX_ASSIGN_OR_RETURN(const PldRunResult run, phasedPldRun(phases, runDelta, forDelta));
  const double upper = deltaUpperWithFloor(*run.run, epsilon);
  return std::pair{upper, upper <= PldAccountant::kDeltaRoundOff ? 0.0 : std::min(upper, run.run->deltaLower(epsilon))};
}

namespace {

// Per-step RDP of each segment at α, times its steps, summed; segments as for the PLD (equal
// (q, σ) merged), so a run written in pieces sums exactly as the run written whole.
Result<double> totalRdpOf(std::span<const pld::GaussianSegment> segments, double alpha) {
  double total = 0.0;
  for (const pld::GaussianSegment& s : segments) {
    DPX_ASSIGN_OR_RETURN(const double perStep, subsampledGaussianRdpCached(s.q, s.sigma, alpha));
    total += perStep * static_cast<double>(s.count);
  }
  return total;
}

Result<std::vector<pld::GaussianSegment>> rdpSegments(std::span<const Phase> phases) {
  DPX_RETURN_IF_ERROR(validatePhases(phases));
  DPX_RETURN_IF_ERROR(refuseAllocation(phases, StatusCode::kNotApplicable,
                                       "has no Rényi DP bound in the moments accountant: account the run with the "
                                       "exact (PLD) accountant"));
  return segmentsOfGaussianPhases(phases);
}

}  // namespace

Result<double> phasedRdp(std::span<const Phase> phases, double alpha) {
  DPX_ASSIGN_OR_RETURN(const std::vector<pld::GaussianSegment> segments, rdpSegments(phases));
  DPX_RETURN_IF_ERROR(normalizeOrders({alpha}));
  DPX_ASSIGN_OR_RETURN(const double value, totalRdpOf(segments, alpha));
  return finiteOrStatus(value, "ε_α at α = " + formatNumber(alpha));
}

Result<EpsilonResult> phasedRdpEpsilon(std::span<const Phase> phases, double delta, const EpsilonOptions& options) {
  DPX_ASSIGN_OR_RETURN(const std::vector<pld::GaussianSegment> segments, rdpSegments(phases));
  if (!(delta > 0.0 && delta < 1.0)) {
    return Status::invalidArgument("delta = " + formatNumber(delta) + " is out of range: δ must be in (0, 1)");
  }
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  const std::span<const double> orders = grid.orders();
  auto rdpAt = [&](std::size_t i) -> Result<double> {
    Result<double> value = totalRdpOf(segments, orders[i]);
    if (!value || isReportable(*value)) return value;
    return finiteOrStatus(*value, "ε_α at α = " + formatNumber(orders[i]));
  };
  // ε_α of any run is non-decreasing in α, which lets the search prune orders (as the rdp
  // accountant's does); the grid minimum is exact either way.
  DPX_ASSIGN_OR_RETURN(const OrderOptimum best,
                       minimizeOverOrders(orders, rdpAt, delta, options.conversion, true, options.alphaHint));
  DPX_ASSIGN_OR_RETURN(const double eps, finiteOrStatus(best.epsilon, "ε"));
  EpsilonResult result;
  result.epsilon = eps;
  result.delta = delta;
  result.bound = BoundKind::kUpper;
  result.alpha = best.alpha;
  result.conversion = options.conversion;
  return result;
}

Result<double> phasedRdpDelta(std::span<const Phase> phases, double epsilon, const EpsilonOptions& options) {
  if (!std::isfinite(epsilon) || epsilon < 0.0) {
    return Status::invalidArgument("epsilon = " + formatNumber(epsilon) + " is out of range: ε must be ≥ 0");
  }
  DPX_ASSIGN_OR_RETURN(const std::vector<pld::GaussianSegment> segments, rdpSegments(phases));
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  std::vector<double> profile;
  profile.reserve(grid.size());
  for (double alpha : grid.orders()) {
    DPX_ASSIGN_OR_RETURN(const double value, totalRdpOf(segments, alpha));
    DPX_ASSIGN_OR_RETURN(const double reportable, finiteOrStatus(value, "ε_α at α = " + formatNumber(alpha)));
    profile.push_back(reportable);
  }
  return deltaOverOrders(grid.orders(), profile, epsilon, options.conversion);
}

}  // namespace dpx::core::accounting
