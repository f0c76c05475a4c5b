// `pld` — exact numerical composition of DP-SGD's Poisson-subsampled Gaussian steps by privacy
// loss distributions (Koskela et al. 2020; Meiser & Mohammadi 2018; Google dp_accounting's PLD
// accountant; connect-the-dots discretisation of Doroshenko et al. 2022).
// Assumptions as `rdp`: Poisson sampling at q = m/n, clipped gradients with noise N(0, σ²L²),
// every iterate released, add/remove neighbours (both directions composed).
// Every answer is a bracket: ε_upper from the pessimistic discretisation is a guaranteed upper
// bound (the headline value, bound kind `upper`); ε_lower from the optimistic one is a lower
// bound on the true ε of this mechanism. Without a fixed discretisation, Δ is chosen so the
// bracket is narrower than `accuracy`·ε at the run's δ (default 1 %). Heavy: run it off the GUI
// thread (ExactOptions carries progress and cancellation).
#pragma once

#include <memory>
#include <utility>

#include "accounting/accountant.h"
#include "accounting/privacy_loss_distribution.h"

namespace dpx::core::accounting {

struct PldRunResult {
  std::shared_ptr<const pld::ComposedRun> run;
  double achievedWidth = 0.0;  // (ε_upper − ε_lower)/ε_upper at the run's δ
  int refinements = 0;
  bool workLimited = false;  // a finer grid would have exceeded a work limit (random allocation's)
};

// Δ in (0, 1] when fixed and the requested bracket width in (0, 0.5]: the message names the value.
Status validateExactOptions(const ExactOptions& options);

// The relative width of a composed run's bracket, the measure the automatic grid refines against:
// (ε_upper − ε_lower)/ε_upper at δ, or (δ_upper − δ_lower)/δ_upper at options.deltaAtEpsilon.
double bracketWidth(const pld::ComposedRun& run, double delta, const ExactOptions& options);

// The composed run for params (cached: the last few runs are kept, keyed by q, σ, K and the
// accuracy request), choosing Δ automatically unless options fix it.
Result<PldRunResult> pldRun(const Params& params, const ExactOptions& options);

// The same for a heterogeneous composition of subsampled-Gaussian segments (a run in phases),
// Δ chosen for the bracket at `delta` as pldRun chooses it; one segment {q, σ, K} is pldRun's run
// to the last bit (and shares its cache).
Result<PldRunResult> pldRunSegments(std::span<const pld::GaussianSegment> segments, double delta,
                                    const ExactOptions& options);

// ε at δ of a composed run as PldAccountant::epsilon reports it: the pessimistic end as the
// headline (an upper bound), the bracket, Δ and the composition's sizes as native values, and a
// caveat when the bracket is wider than asked.
Result<EpsilonResult> pldEpsilonOf(const PldRunResult& run, double delta, const ExactOptions& options);

// δ_upper(ε) of a composed run as an answer to "what δ at ε": the pessimistic profile, never below
// the mass the composition may have truncated (τ, moved to +∞ or lost to round-off), so an upper
// bound is never reported as 0 where the true δ is positive (at q = 1, σ = 100, K = 10⁴, ε = 10
// the true δ is 9.8e−23; the profile's FFT can round to 0 there).
double deltaUpperWithFloor(const pld::ComposedRun& run, double epsilon);

// The pessimistic trade-off envelope of any composed run (PldAccountant::tradeoff's, for a run
// in phases or of random allocation): on or below the true curve.
Result<TradeoffCurve> pessimisticTradeoffOf(const pld::ComposedRun& run, std::span<const double> typeOne);

// ε bracket of a heterogeneous composition of subsampled-Gaussian segments at grid Δ.
Result<pld::ComposedRun> pldComposeSegments(std::span<const pld::GaussianSegment> segments, double interval,
                                            const ExactOptions& options = {});

// The exact trade-off of each neighbouring direction of the run, from the composed PLDs of both
// directions (pld::tradeoffOf). Orientation (x = type I error, y = type II error):
//  * add:    T(M(D), M(D ∪ {z})). H0 is "z is OUT" (the output came from M(D)), so x is the FPR of
//            the membership test "is z in?" and y its FNR: every membership attack's (FPR, FNR)
//            lies on or above the add curve.
//  * remove: T(M(D ∪ {z}), M(D)), the reverse test (H0 "z is IN"); the inverse function of add.
// For the Poisson-subsampled Gaussian, the composed pair of one direction is the swapped pair
// of the other, so each curve reads the profile of its own direction for thresholds above 0 and
// that of the other below 0. Pessimistic ≤ true ≤ optimistic pointwise (connect-the-dots
// dominates, quantisation is dominated); at q = 1 both directions are G_μ, μ = √K/σ. The
// symmetric tradeoff() below (the profile maximised over directions) is ≤ both pessimistic
// curves.
struct DirectionalTradeoffs {
  TradeoffCurve addPessimistic, addOptimistic;        // T(M(D), M(D ∪ {z})): x = FPR of "is z in?"
  TradeoffCurve removePessimistic, removeOptimistic;  // T(M(D ∪ {z}), M(D))
  double discretisation = 0.0;                        // the finest loss grid Δ used
  double bracketWidth = 0.0;                          // max over x and directions of optimistic − pessimistic
};

class PldAccountant final : public Accountant {
 public:
  PldAccountant();
  Result<std::vector<NativeValue>> native(const Params& params) const override;
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  // δ(ε) as a bracket: {pessimistic (an upper bound), optimistic (a lower estimate)}.
  Result<std::pair<double, double>> deltaBracket(const Params& params, double epsilon,
                                                 const EpsilonOptions& options = {}) const;
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;
  // The same envelope from the optimistic profile δ_lower(ε): on or above the true curve up to
  // the envelope's ε grid (2001 points), so with tradeoff() it brackets the exact curve.
  Result<TradeoffCurve> tradeoffOptimistic(const Params& params, std::span<const double> typeOne,
                                           const EpsilonOptions& options = {}) const;

  // Both directions' exact trade-offs with their brackets (see DirectionalTradeoffs), from
  // pldRun's run (cached); options.exact's cancel is honoured. Δ is chosen for the ε bracket at
  // the run's δ, and the optimistic quantisation of the add direction (losses ≤ −log(1 − q), a
  // few grid steps at small q) can leave the y-bracket wide where ε is small (0.18 at σ = 0.8,
  // q = 0.01, K = 1000). Then finer grids (Δ/2, 0.3Δ) are composed too and the brackets
  // intersected — the largest pessimistic and smallest optimistic value at each x are both still
  // bounds — until it is narrower than kTradeoffBracket.
  Result<DirectionalTradeoffs> directionalTradeoffs(const Params& params, std::span<const double> typeOne,
                                                    const EpsilonOptions& options = {}) const;

  static constexpr double kTradeoffBracket = 0.01;  // wanted max y-width of the directional brackets
  // Below this δ a composed profile is at the FFT's round-off (~1e−12 after 10⁴ steps): the
  // pessimistic end (the truncated tails' mass at +∞ included) is still an upper bound, but the
  // optimistic end can come out above the true δ, so a δ bracket there reports 0 as its lower end.
  static constexpr double kDeltaRoundOff = 1e-12;
  static constexpr double kTruncation = 1e-20;  // total tail mass moved to ∞ / dropped
};

}  // namespace dpx::core::accounting
