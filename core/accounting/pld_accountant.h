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
};

// Δ in (0, 1] when fixed and the requested bracket width in (0, 0.5]: the message names the value.
Status validateExactOptions(const ExactOptions& options);

// The composed run for params (cached: the last few runs are kept, keyed by q, σ, K and the
// accuracy request), choosing Δ automatically unless options fix it.
Result<PldRunResult> pldRun(const Params& params, const ExactOptions& options);

// ε bracket of a heterogeneous composition of subsampled-Gaussian segments at grid Δ.
Result<pld::ComposedRun> pldComposeSegments(std::span<const pld::GaussianSegment> segments, double interval,
                                            const ExactOptions& options = {});

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

  static constexpr double kTruncation = 1e-20;  // total tail mass moved to ∞ / dropped
};

}  // namespace dpx::core::accounting
