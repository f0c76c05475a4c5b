// `random-allocation` — an UPPER bound for balls-in-bins batching (k-of-t random allocation):
// Feldman & Shenfeld 2025, "Privacy amplification by random allocation" (arXiv 2502.08202), and
// Feldman & Shenfeld 2026, "The privacy loss distribution of random allocation" (ICML 2026,
// arXiv 2602.17284).
// Assumptions: every epoch places each record in exactly k of its t steps, uniformly at random
// and independently of the other records (batch sizes vary); each step adds Gaussian noise
// N(0, σ²L²) to the sum of clipped gradients; add/remove neighbours; every iterate released.
// Defaults k = 1, t = ⌈n/m⌉; E = the run's epochs, a fractional last epoch counted as a whole one
// (a record allocated among t steps of which only some run is no worse off than in a whole epoch).
//
// 1-of-t (the dominating pair of Feldman & Shenfeld 2025, with the sensitivity scaled to 1):
//   remove: L = log((1/t)(U + V₂ + … + V_t)),  add: L = −log((1/t)(W₁ + … + W_t)),
// independent lognormals U = e^Y, Y ~ N(1/(2σ²), 1/σ²) and V, W = e^Z, Z ~ N(−1/(2σ²), 1/σ²), L
// the loss under P (the dataset with the record for remove, without it for add).
// k-of-t is bounded by (k − r)·E copies of 1-of-⌊t/k⌋ and r·E copies of 1-of-(⌊t/k⌋ + 1),
// r = t − k⌊t/k⌋, composed (Feldman & Shenfeld 2025); the epochs compose as independent runs.
//
// Numerics. A pair (P', Q') whose loss under P' stochastically dominates the true loss has a larger
// δ(ε) = E[(1 − e^{ε−L})₊] at every ε, and so does any composition of such (the sum of dominating
// independent losses dominates): the pessimistic side only needs an upper stochastic bound on L
// (mass it cannot place goes to +∞), the optimistic side a lower one (mass it cannot place is
// dropped). Here L is monotone in the sum S of t positive terms, so both come from bounds on S:
//  * each term's log lives on the uniform grid u_j = log t + j·h (a geometric grid in value); its
//    Gaussian masses between grid points are put on the upper (or lower) end point, its tails
//    beyond quantiles from the accurate upper-tail Φ⁻¹ (never 1 − q) go to +∞ (or to 0);
//  * a sum of two grid variables, log(e^a + e^b) = max(a, b) + log1p(e^{−|a−b|}), is put back on
//    the grid by rounding that increment up (or down) to a multiple of h: every rounding keeps the
//    direction, so sums of rounded terms bound S. V^{*(t−1)} by binary powers: about 2·log₂ t
//    sums, each shifting log S by < h. The pairs (i, j) whose increments round alike are summed
//    as windows of prefix sums, so a sum costs O(N · log 2/h) for N grid points, not O(N²);
//  * then loss = u_j − log t = j·h with h = Δ/M lands on the loss grid iΔ by one more rounding
//    up (pessimistic) or down (optimistic).
// The chain that rounds S up gives remove-pessimistic and add-optimistic, the one that rounds S
// down remove-optimistic and add-pessimistic. Steps are composed by pld::composeNonNegative; the
// mechanism's δ is the larger of the two directions'. The optimistic end brackets the ε of this
// analysis (the composed dominating pairs, tight for 1-of-t), not the ε of every k-of-t run.
// Not always below the Poisson bound at q = k/t (e.g. σ = 2, t = 1000, 10 epochs): both are shown.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "accounting/accountant.h"
#include "accounting/privacy_loss_distribution.h"

namespace dpx::core::accounting {

namespace random_allocation {

enum class Rounding { kUp, kDown };

// A positive random variable on the log grid u_j = origin + j·spacing (masses for j = first …
// first + size − 1), plus atoms at 0 and at +∞.
struct LogGridDistribution {
  double origin = 0.0;
  double spacing = 1.0;
  std::int64_t first = 0;
  std::vector<double> masses;
  double zeroMass = 0.0;
  double infinityMass = 0.0;
  std::int64_t last() const { return first + static_cast<std::int64_t>(masses.size()) - 1; }
};

// e^X, X ~ N(mean, sd²), on the grid: masses between grid points on the upper (kUp) or lower
// end point; the tails beyond the tailMass quantiles to +∞ and the first point (kUp), or to the
// last point and 0 (kDown). A Status when the grid would exceed maxPoints.
Result<LogGridDistribution> lognormalOnGrid(double mean, double sd, double origin, double spacing, Rounding rounding,
                                            double tailMass, std::int64_t maxPoints);

// The distribution of A + B (independent), rounded up or down onto the common grid; tails of
// mass ≤ trimMass are moved as the rounding allows (kUp: below to the new first point, above to
// +∞; kDown: below to 0, above to the new last point).
LogGridDistribution sumOf(const LogGridDistribution& a, const LogGridDistribution& b, Rounding rounding,
                          double trimMass);

// The sum of `count` ≥ 0 independent copies (binary powers); count 0 is the atom at 0.
Result<LogGridDistribution> sumOfCopies(const LogGridDistribution& term, std::int64_t count, Rounding rounding,
                                        double trimMass, const pld::ComputeControl& control = {});

}  // namespace random_allocation

// The four step PLDs of 1-of-t at loss grid Δ, [pessimistic, optimistic] per direction.
struct RandomAllocationStepPlds {
  pld::DiscretePld remove[2];
  pld::DiscretePld add[2];
};

// One step (one epoch of 1-of-t allocation) at noise multiplier σ (> 0), t ≥ 1 steps, loss grid
// Δ ∈ (0, 1]; `tau` is the probability mass the step may move to +∞ (pessimistic) or drop
// (optimistic). The last few are cached.
Result<std::shared_ptr<const RandomAllocationStepPlds>> randomAllocationSteps(double sigma, std::int64_t stepsPerEpoch,
                                                                              double interval, double tau,
                                                                              const pld::ComputeControl& control = {});
Result<pld::DiscretePld> randomAllocationStep(double sigma, std::int64_t stepsPerEpoch, pld::Direction direction,
                                              pld::Estimate estimate, double interval, double tau,
                                              const pld::ComputeControl& control = {});

// The whole run: k-of-t allocation for E epochs, both directions and both estimates composed at
// grid Δ, total truncated mass ≤ tau per direction and estimate.
struct RandomAllocationRunSpec {
  double sigma = 1.0;
  std::int64_t selections = 1;     // k
  std::int64_t stepsPerEpoch = 1;  // t
  std::int64_t epochs = 1;         // E
};
Result<pld::ComposedRun> randomAllocationRun(const RandomAllocationRunSpec& spec, double interval, double tau,
                                             const pld::ComputeControl& control = {});
// A run in phases with random-allocation epochs: the epochs of every allocation and the steps of
// every Poisson-subsampled Gaussian segment composed on one loss grid Δ (heterogeneous
// composition: each kind of step discretised with the same estimate, then convolved together).
Result<pld::ComposedRun> randomAllocationRun(std::span<const RandomAllocationRunSpec> allocations,
                                             std::span<const pld::GaussianSegment> gaussian, double interval,
                                             double tau, const pld::ComputeControl& control = {});

struct RandomAllocationRunResult {
  std::shared_ptr<const pld::ComposedRun> run;
  double achievedWidth = 0.0;  // the bracket's relative width (bracketWidth)
  int refinements = 0;
  bool limited = false;  // a finer grid would have exceeded the work limit
};

// The same run with Δ chosen for options (the ε bracket at delta, or the δ bracket at
// options.deltaAtEpsilon, narrower than options.accuracy) unless fixed; the grid is refined down
// to where the allocations' sums would exceed the work limit (then `limited`). Not cached.
Result<RandomAllocationRunResult> randomAllocationRun(std::span<const RandomAllocationRunSpec> allocations,
                                                      std::span<const pld::GaussianSegment> gaussian, double delta,
                                                      const ExactOptions& options);

class RandomAllocationAccountant final : public Accountant {
 public:
  RandomAllocationAccountant();
  Result<std::vector<NativeValue>> native(const Params& params) const override;
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  // The envelope of f_{ε,δ(ε)} over ε of the pessimistic profile: on or below the true curve.
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;

  // The run for params with Δ chosen for options.accuracy unless fixed (cached).
  static Result<RandomAllocationRunResult> run(const Params& params, const ExactOptions& options);
  static RandomAllocationRunSpec specOf(const Params& params);

  static constexpr double kTruncation = 1e-20;  // total tail mass moved to ∞ / dropped
};

}  // namespace dpx::core::accounting
