// A training run in phases: several stretches of steps, each with its own sampling rate and noise
// (a warm-up at a larger batch, a fine-tuning stage at more noise, a run resumed with other
// settings), accounted as one composition. The privacy of a sequence of adaptively chosen
// mechanisms is that of their composition (Dwork, Rothblum & Vadhan 2010), so
//  * pld: the privacy loss distributions of all phases' steps are convolved together
//    (heterogeneous composition; Koskela, Jälkö & Honkela 2020; Google dp_accounting's PLD
//    accountant), both directions of add/remove, pessimistic and optimistic discretisations, so
//    every answer is a bracket [ε_lower, ε_upper] whose upper end is a guaranteed bound;
//  * rdp: Rényi DP adds over the steps (Mironov 2017, Prop. 1): ε_α = Σ_phases K_i·ε_α(q_i, σ_i),
//    converted to (ε, δ) over the order grid as the moments accountant converts its own.
// A phase is one kind of step repeated: Poisson-subsampled Gaussian steps {q, σ, K} (the
// mechanism of DP-SGD; Abadi et al. 2016), or epochs of random allocation {σ, t, k, E} (each
// record in k of the t steps of an epoch; Feldman & Shenfeld 2025). Epochs of random allocation
// alone are composed exactly by the random-allocation accountant (its PLD bracket); a run that
// mixes them with Gaussian phases, and their RDP, are refused with a Status naming the phase.
// Phases are what a dp_accounting DpEvent flattens to (io/dp_event.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "accounting/accountant.h"
#include "accounting/pld_accountant.h"

namespace dpx::core::accounting {

// `steps` steps of the Poisson-subsampled Gaussian: every record joins each batch independently
// with probability q ∈ (0, 1] (q = 1: every record, every step), noise multiplier σ > 0 (noise
// std / L2 sensitivity), steps ≥ 1.
struct GaussianPhase {
  double samplingProbability = 1.0;
  double noiseMultiplier = 1.0;
  std::int64_t steps = 1;
  bool operator==(const GaussianPhase&) const = default;
};

// `epochs` epochs of k-of-t random allocation: each record takes part in `selections` (k) of the
// `stepsPerEpoch` (t) steps of an epoch, chosen uniformly; noise multiplier σ > 0; 1 ≤ k ≤ t.
struct RandomAllocationPhase {
  double noiseMultiplier = 1.0;
  std::int64_t stepsPerEpoch = 1;
  std::int64_t selections = 1;
  std::int64_t epochs = 1;
  bool operator==(const RandomAllocationPhase&) const = default;
};

using Phase = std::variant<GaussianPhase, RandomAllocationPhase>;

// "Poisson-subsampled Gaussian" | "random allocation".
std::string phaseKindName(const Phase& phase);
// "q = 0.004267, σ = 1.1, 14063 steps" | "σ = 2, k = 10 of t = 100 steps, 1 epoch".
std::string phaseDescription(const Phase& phase);
// Steps the phase takes (random allocation: t·E).
std::int64_t phaseSteps(const Phase& phase);

// The phase's fields against their bounds; the message names the phase (1-based, as people
// count), the field and the bound: "phase 2: noise_multiplier = 0 must be > 0".
Status validatePhase(const Phase& phase, std::size_t index);
// At least one phase, each valid.
Status validatePhases(std::span<const Phase> phases);

// Consecutive phases that are the same step (equal q and σ; equal σ, t and k) as one phase with
// their counts added: composition is the same, and a run written in pieces is accounted as the
// run written whole (to the last bit).
std::vector<Phase> mergedPhases(std::span<const Phase> phases);

// The subsampled-Gaussian segments of the run for the PLD composition, equal (q, σ) merged
// wherever they are (composition commutes). A random-allocation phase is refused: the Status
// (kUnimplemented) names it.
Result<std::vector<pld::GaussianSegment>> gaussianSegments(std::span<const Phase> phases);

// The PLD composition of the run, Δ chosen so the bracket is narrower than options.accuracy·ε at
// δ (as pldRun chooses it), or options.discretisation when fixed. Cached like pldRun. Random
// allocation alone: RandomAllocationAccountant::run of the phase (its work cap included).
Result<PldRunResult> phasedPldRun(std::span<const Phase> phases, double delta, const ExactOptions& options);
// ε at δ: the pessimistic end (an upper bound) with the bracket, as PldAccountant::epsilon
// reports a knob run; a one-phase run gives exactly the knob run's numbers.
Result<EpsilonResult> phasedPldEpsilon(std::span<const Phase> phases, double delta, const ExactOptions& options);
// δ at ε ≥ 0: {pessimistic (an upper bound), optimistic (a lower estimate)}; the composition is
// the one that meets the accuracy at `runDelta` (the run's δ, as for a knob run).
Result<std::pair<double, double>> phasedPldDelta(std::span<const Phase> phases, double epsilon, double runDelta,
                                                 const ExactOptions& options);

// Total RDP of the run at order α ∈ [1.01, 1024]: Σ steps_i · ε_α(q_i, σ_i) (Mironov, Talwar &
// Zhang 2019 per step). A random-allocation phase is refused by name (kNotApplicable).
Result<double> phasedRdp(std::span<const Phase> phases, double alpha);
// ε at δ over the orders of `options` (default grid, --alphas, a fixed α) with its conversion;
// the optimal order in `alpha`. A one-phase run gives exactly the rdp accountant's numbers.
Result<EpsilonResult> phasedRdpEpsilon(std::span<const Phase> phases, double delta, const EpsilonOptions& options);
// The smallest δ the RDP of the run certifies at ε ≥ 0 over the same orders.
Result<double> phasedRdpDelta(std::span<const Phase> phases, double epsilon, const EpsilonOptions& options);

}  // namespace dpx::core::accounting
