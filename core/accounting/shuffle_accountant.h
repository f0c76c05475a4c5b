// `shuffle` — a LOWER bound on the privacy of shuffled batches (one fresh permutation per pass):
// Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang 2024, "How Private are DP-SGD
// Implementations?" (ICML 2024) — the lower bound for shuffled batches by the max-of-coordinates
// test — and "Scalable DP-SGD: Shuffling vs. Poisson Subsampling" (NeurIPS 2024) — its
// multi-epoch composition.
// Adaptive batch linear queries with T = ⌈n/m⌉ batches per pass, noise multiplier σ, zero-out
// neighbours (sensitivity 1). The dataset where every other record adds −1 and the differing
// record +1 (or 0) makes one pass's outputs the mixtures
//   P = (1/T) Σ_t N(2e_t, σ²I_T),   Q = (1/T) Σ_t N(e_t, σ²I_T),
// and any test on them bounds the mechanism's privacy from below. The test "max_t x_t > C" has
//   P(max_t x_t ≤ C) = Φ((C − 2)/σ) Φ(C/σ)^{T−1}   (Q: C − 1),
// so one pass gives δ_lb(ε) = max_C [P(max > C) − e^ε Q(max > C)] exactly (in log space). E
// passes use fresh permutations and are independent: the statistic max_t x_t of each pass is cut
// into slices and the sliced pair composed E times (the privacy loss of each slice rounded DOWN
// to the grid, and mass outside the composition window dropped) — every step a post-processing
// or an under-count, so the result stays a valid lower bound; the headline is the larger of the
// composed and the one-pass value. A last, unfinished pass of r batches is the mixture that runs
// r of the T batches (the record sits in an unrun batch with probability 1 − r/T).
// Bound kind `lower`: when it exceeds the Poisson PLD upper bound at q = 1/T, "Poisson ε" does
// not bound the pipeline (Chua et al. report this for small σ and many batches).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "accounting/accountant.h"
#include "accounting/privacy_loss_distribution.h"

namespace dpx::core::accounting {

// One pass seen through the statistic max_t x_t: T batches of which `visibleSteps` are run.
class ShuffleMaxStatistic {
 public:
  ShuffleMaxStatistic(double sigma, std::int64_t stepsPerEpoch, std::int64_t visibleSteps);
  // log P(max ≤ c) under P (the record adds 2 to its batch) or Q (adds 1).
  double logCdf(double c, bool underP) const;
  // logCdf under P and under Q at a finite c, sharing what they have in common.
  void logCdfBoth(double c, double& underP, double& underQ) const;
  double logSf(double c, bool underP) const;
  // log of the mass of [a, b), computed on the side of the distribution that keeps its digits.
  double logMass(double a, double b, bool underP) const;
  // c below which Q, and above which P, has mass ≤ e^{−70}: the statistic's working range.
  double lowerEnd() const { return m_lowerEnd; }
  double upperEnd() const { return m_upperEnd; }
  double sigma() const { return m_sigma; }
  double visibleSteps() const { return m_visible; }
  std::int64_t stepsPerEpoch() const { return m_stepsPerEpoch; }

 private:
  // Φ at one point as log Φ(x), with Φ(−x) from the same erfc where x ≥ 0 (found on demand below).
  struct NormalAt {
    double x;
    double logCdf;
    double complement;  // Φ(−x); NaN until asked for when x < 0
    double upper();
  };
  static NormalAt normalAt(double x);
  double logCdfAt(double c, NormalAt& base, bool underP) const;
  double m_sigma;
  double m_visible;
  std::int64_t m_stepsPerEpoch;
  double m_logVisibleShare;  // log(r/T)
  double m_logHiddenShare;   // log(1 − r/T), −∞ for a whole pass
  double m_visibleShare;     // e^{m_logVisibleShare}
  double m_hiddenShare;      // e^{m_logHiddenShare}, 0 for a whole pass
  double m_lowerEnd = 0.0, m_upperEnd = 0.0;
};

struct ShuffleThreshold {
  double value;      // ε (or δ) of the best threshold test
  double threshold;  // its C
};

// One pass, the best threshold test: ε_lb(δ) = max_C log((P(max > C) − δ)/Q(max > C)) (0 when no
// test reaches δ), and δ_lb(ε) = max_C [P(max > C) − e^ε Q(max > C)].
ShuffleThreshold shuffleThresholdEpsilon(const ShuffleMaxStatistic& statistic, double delta);
ShuffleThreshold shuffleThresholdDelta(const ShuffleMaxStatistic& statistic, double epsilon);

// Cuts of the statistic: `count` equal slices of [lo, hi] plus the two tails.
struct ShuffleSlicing {
  double lo;
  double hi;
  std::int64_t count;
};

// One pass's sliced pair as a discrete loss distribution under P on the grid Δ, losses rounded
// down; slices with P-mass below 1e−30 are dropped. Default slicing: 50 000 slices of
// [lowerEnd, upperEnd]. A set `cancel` stops the slicing (Status kCancelled).
Result<pld::DiscretePld> slicedPassPld(const ShuffleMaxStatistic& statistic, double interval,
                                       const std::optional<ShuffleSlicing>& slicing = std::nullopt,
                                       const std::atomic<bool>* cancel = nullptr);

struct ShuffleRunOptions {
  std::optional<double> interval;         // loss grid Δ; default max(1e−5, min(1e−3, 0.01/E)), coarsened to fit
  std::optional<ShuffleSlicing> slicing;  // default as slicedPassPld
  const std::atomic<bool>* cancel = nullptr;
};

// The lower bound of a run of E whole passes plus `partialSteps` batches of another.
struct ShuffleLowerBound {
  double sigma = 0.0;
  std::int64_t stepsPerEpoch = 1;
  std::int64_t fullEpochs = 0;
  std::int64_t partialSteps = 0;
  std::int64_t epochsComposed = 0;  // whole passes composed (fewer than fullEpochs when the grid would not fit)
  double interval = 0.0;
  std::shared_ptr<const pld::DiscretePld> composed;  // the sliced passes composed
  std::optional<ShuffleMaxStatistic> onePass;        // a whole pass, or the partial one when there is none

  double delta(double epsilon) const;          // max(composed δ, one-pass threshold δ)
  Result<double> epsilon(double delta) const;  // max(composed ε, one-pass threshold ε)
};

Result<ShuffleLowerBound> shuffleLowerBound(double sigma, std::int64_t stepsPerEpoch, std::int64_t fullEpochs,
                                            std::int64_t partialSteps, const ShuffleRunOptions& options = {});

class ShuffleAccountant final : public Accountant {
 public:
  ShuffleAccountant();
  Result<std::vector<NativeValue>> native(const Params& params) const override;
  Result<EpsilonResult> epsilon(const Params& params, const EpsilonOptions& options = {}) const override;
  Result<double> delta(const Params& params, double epsilon, const EpsilonOptions& options = {}) const override;
  // The Neyman–Pearson curve of the composed sliced pair: on or above the true trade-off curve
  // (tests at least this powerful exist).
  Result<TradeoffCurve> tradeoff(const Params& params, std::span<const double> typeOne,
                                 const EpsilonOptions& options = {}) const override;

 private:
  Result<std::shared_ptr<const ShuffleLowerBound>> bound(const Params& params, const ExactOptions& options) const;
};

}  // namespace dpx::core::accounting
