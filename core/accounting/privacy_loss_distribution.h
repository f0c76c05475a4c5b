// Privacy loss distributions (PLDs) of the Poisson-subsampled Gaussian and their exact
// composition by FFT (Koskela, Jälkö, Honkela 2020; Meiser & Mohammadi 2018; Google
// dp_accounting's PLD accountant; Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022 for the
// connect-the-dots discretisation).
//
// A pair (P, Q) of output distributions with privacy loss L = log(dP/dQ) has the privacy profile
//   δ(ε) = P(L > ε) − e^ε Q(L > ε) = E_P[(1 − e^{ε − L})₊]   (+ P(L = ∞)).
// K-fold composition adds independent losses, so the composed profile is that of the K-fold
// convolution of the loss distribution under P. We discretise losses on a grid ε_i = iΔ:
//  * pessimistic — connect the dots: the hockey-stick curve h(x) = δ(log x) is convex in x, and
//    the piecewise-linear interpolation of h at the grid points x_i = e^{iΔ} is the profile of a
//    pair that dominates (P, Q), supported on the grid. Its composition is an upper bound.
//  * optimistic — quantisation: the real line is cut into bins whose aggregated loss
//    log(P(bin)/Q(bin)) lands exactly on a grid point; a quantised pair is dominated by (P, Q)
//    (post-processing), so its composition is a lower bound, without the Δ/2-per-step bias of
//    rounding losses down.
// Truncation: losses outside a window whose mass is below τ (Chernoff bounds) are moved to +∞
// (pessimistic) or dropped (optimistic), and the bound on what FFT wrap-around can add is
// charged to the side it favours.
// Neighbouring relation: add/remove; both directions (remove: P = (1−q)N(0,σ²) + qN(1,σ²),
// Q = N(0,σ²); add: the reverse pair) are composed separately; the mechanism's δ is their max.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"

namespace dpx::core::accounting::pld {

enum class Direction { kRemove, kAdd };
enum class Estimate { kPessimistic, kOptimistic };

// One step's pair (P, Q) for a direction, in a coordinate where the loss increases with x.
class SubsampledGaussianPair {
 public:
  SubsampledGaussianPair(double q, double sigma, Direction direction);
  double loss(double x) const;                  // log P(x)/Q(x)
  double inverseLoss(double l) const;           // x with loss(x) = l, for l in (lossMin, lossMax)
  double lossMin() const { return m_lossMin; }  // −∞ when q = 1
  double lossMax() const { return m_lossMax; }  // +∞ for remove
  double cdfP(double x) const;
  double sfP(double x) const;
  double cdfQ(double x) const;
  double sfQ(double x) const;
  double pdfP(double x) const;
  double pdfQ(double x) const;
  // sfP and sfQ (cdfP and cdfQ, pdfP and pdfQ) together: the two share the N(0, σ²) component,
  // so one erfc (one exp) fewer, and the two left are one call of a two-lane vector function
  // (the optimistic sweep's evaluation): within a few ulp of the separate calls.
  void survival(double x, double& p, double& q) const;
  void distribution(double x, double& p, double& q) const;
  void density(double x, double& p, double& q) const;
  // The densities and their derivatives in x, from the same exponentials.
  void density(double x, double& p, double& q, double& pSlope, double& qSlope) const;
  // P-mass and Q-mass of [a, b), computed on the side of the median that keeps their digits.
  double massP(double a, double b) const;
  double massQ(double a, double b) const;
  double hockeyStick(double epsilon) const;  // δ_{P‖Q}(ε)
  // hockeyStick at each of `epsilons`, and distribution(inverseLoss(ℓ)) at each of `losses` (0 and
  // 0 at ℓ ≤ lossMin, 1 and 1 at ℓ ≥ lossMax): the same values within a few ulp, computed on
  // arrays by the vector math library for the tens of thousands of grid points of a step.
  void hockeySticks(std::span<const double> epsilons, std::span<double> deltas) const;
  void headsAtLosses(std::span<const double> losses, std::span<double> p, std::span<double> q) const;
  // inverseLoss of losses strictly inside (lossMin, lossMax), on arrays.
  void inverseLosses(std::span<const double> losses, std::span<double> xs) const;
  // x beyond which P has mass ≤ tau, and below which it has mass ≤ tau.
  double upperTail(double tau) const;
  double lowerTail(double tau) const;

 private:
  double mixtureCdf(double x, double weight, double shift) const;
  double mixtureSf(double x, double weight, double shift) const;
  double mixturePdf(double x, double weight, double shift) const;
  // P's and Q's survival (upper) or distribution (lower) functions at each of xs.
  void mixtureTails(std::span<const double> xs, bool upper, std::span<double> p, std::span<double> q) const;
  double m_q, m_sigma;
  Direction m_direction;
  double m_logQ, m_log1mQ;
  double m_lossMin, m_lossMax;
  // P = (1−pWeight)N(0,σ²) + pWeight·N(pShift,σ²), likewise Q.
  double m_pWeight, m_pShift, m_qWeight, m_qShift;
};

// A discrete loss distribution under P: masses at iΔ for i = firstIndex … firstIndex+n−1, plus
// mass at +∞. Answers δ(ε) and ε(δ) in O(1)/O(log n) after an O(n) preparation.
class DiscretePld {
 public:
  DiscretePld() = default;
  DiscretePld(double interval, std::int64_t firstIndex, std::vector<double> masses, double infinityMass,
              double deltaSlack = 0.0);
  // The same on the shifted grid ε_i = lossOffset + iΔ, |lossOffset| < Δ: an optimistic
  // step whose grid must start just above its smallest loss (see discretise). Composition rounds
  // the composed offset down onto the grid ε_i = iΔ (losses lowered: still optimistic).
  DiscretePld(double interval, std::int64_t firstIndex, std::vector<double> masses, double infinityMass,
              double deltaSlack, double lossOffset);
  // A PLD that keeps δ's tables only, not its masses: a composed run's, whose δ(ε) and ε(δ) read
  // nothing else. `buffer` holds the `points` masses ω_0 … ω_{points−1} and room for one value
  // more; the suffix table is written over them (the composition's FFT buffer, whose pages are
  // already touched: fresh ones cost about as much as an FFT pass).
  static DiscretePld profileOnly(double interval, std::int64_t firstIndex, std::shared_ptr<double[]> buffer,
                                 std::size_t points, double infinityMass, double deltaSlack);
  // A composed run's PLD kept as the spectrum of its composition (see composeRun): the
  // frequencies whose K-th power a double still holds, a few hundred of the transform's n/2 + 1
  // at K ≥ 10³ and fine grids. δ(ε) reads the tail sums Σ_{i≥j} ω_i and Σ_{i≥j} ω_i e^{ℓ_j − ℓ_i}
  // as closed-form geometric sums over those frequencies, O(frequencies) each, with no inverse
  // transform; δ and ε always come from the spectrum, whatever was asked of the PLD before.
  struct Spectrum;
  static DiscretePld spectral(double interval, std::int64_t firstIndex, std::shared_ptr<Spectrum> spectrum,
                              double infinityMass, double deltaSlack);
  bool keepsSpectrum() const { return m_spectrum != nullptr; }
  // The same PLD with δ's tables, for callers that read δ at thousands of losses: the inverse
  // transform the composition skipped, made once (thread-safe) and shared by copies; the PLD
  // itself for the others. The tables clamp the inverse's negative round-off to 0, which biases
  // δ up by up to ~1e−11 at K = 10⁶ against the spectrum's (whose sums carry ~1e−15).
  const DiscretePld& tables() const;

  double interval() const { return m_interval; }
  std::int64_t firstIndex() const { return m_firstIndex; }
  // Grid points ℓ_0 … ℓ_{size−1}.
  std::size_t size() const { return m_points; }
  // Whether masses() holds the size() masses (false for profileOnly PLDs: masses() is empty).
  bool hasMasses() const { return m_masses.size() == m_points; }
  const std::vector<double>& masses() const { return m_masses; }
  double infinityMass() const { return m_infinityMass; }
  // Subtracted from every δ: mass an optimistic construction could not place below its loss.
  double deltaSlack() const { return m_deltaSlack; }
  double lossOffset() const { return m_lossOffset; }
  double loss(std::size_t i) const {
    return m_lossOffset + static_cast<double>(m_firstIndex + static_cast<std::int64_t>(i)) * m_interval;
  }

  // δ(ε) = ω_∞ + Σ_{ℓ_i > ε} ω_i(1 − e^{ε−ℓ_i}) − slack, in [0, 1].
  double delta(double epsilon) const;
  // Smallest ε ≥ 0 with δ(ε) ≤ delta; a Status if even ε at the top of the grid is not enough
  // (δ below the mass at +∞).
  Result<double> epsilon(double delta) const;

 private:
  // Fills suffix[0 … n] and tilted[0 … n] from masses[0 … n−1]; suffix may be masses itself.
  static void fillTables(const double* masses, std::size_t n, double interval, double* suffix, double* tilted);
  // suffix[j] and tilted[j] (0 ≤ j < size()), from the tables or the spectrum.
  struct Tails {
    double suffix;
    double tilted;
  };
  Tails tailsAt(std::size_t j) const;
  double m_interval = 1.0;
  std::int64_t m_firstIndex = 0;
  std::size_t m_points = 0;
  std::vector<double> m_masses;
  double m_infinityMass = 0.0;
  double m_deltaSlack = 0.0;
  double m_lossOffset = 0.0;
  // suffix[j] = Σ_{i≥j} ω_i;  tilted[j] = Σ_{i≥j} ω_i e^{ℓ_j − ℓ_i}  (j = n: 0). Never written
  // once made, so copies share them. A PLD with masses makes them at its first δ or ε (most
  // are steps, only ever composed: two tables of a step's size were twenty fresh pages each).
  std::shared_ptr<const double[]> m_suffixStorage;
  std::shared_ptr<const double[]> m_tiltedStorage;
  const double* m_suffix = nullptr;
  const double* m_tilted = nullptr;
  struct LazyTables;
  std::shared_ptr<LazyTables> m_lazyTables;
  std::shared_ptr<Spectrum> m_spectrum;  // spectral PLDs; shared by copies, tables made once
};

// The trade-off function T(P, Q) of the pair a PLD represents, on a type I error grid:
// x = E_P[φ], T(x) = the smallest 1 − E_Q[φ] (Dong, Roth & Su 2019, Def. 2.1). With δ_{P‖Q} the
// profile of `pld` and δ_{Q‖P} that of `reverse` (the PLD of the swapped pair (Q, P)),
//   T(x) = max{0, sup_{ε≥0} e^{−ε}(1 − δ_{P‖Q}(ε) − x), sup_{ε≥0} [1 − δ_{Q‖P}(ε) − e^ε x]}
// (Dong, Roth & Su 2019, Prop. 2.12, taken per ordered pair): the first family is the
// Neyman–Pearson tests that threshold the loss at ε ≥ 0, the second those at −ε ≤ 0. Between
// grid losses each δ is A − B·e^ε, so every line is monotone in ε there and the suprema are taken
// at grid losses ℓ_i ≥ 0 (and ε = 0, and ε → ∞ at x = 0): the result is the exact
// piecewise-linear trade-off of the discretised pair, computed in O(n + grid) as the upper
// envelope of the lines (convex-hull trick) read by one pointer over the sorted grid. Only δ(ε ≥ 0) is read, whose
// weights (1 − e^{ε−ℓ}) are in [0, 1]: the lower tail of a composed PLD, where FFT round-off amplified by e^{−ℓ} makes
// the Q-masses ω_i e^{−ℓ_i} meaningless, is never used.
// Bounds: a pessimistic pair of PLDs (δ ≥ the true profiles, +∞ mass included) gives a curve
// ≤ the true one; an optimistic pair (δ ≤ the true profiles after its deltaSlack, truncated
// tails dropped) a curve ≥ it. Values in [0, 1 − x]; typeOne in [0, 1], any order.
Result<std::vector<double>> tradeoffOf(const DiscretePld& pld, const DiscretePld& reverse,
                                       std::span<const double> typeOne);
// The swapped pair (Q, P) of a PLD: Q's masses ω_i e^{−ℓ_i} (in log space) at −ℓ_i, and Q's mass
// where P has none (1 − Σ ω_i e^{−ℓ_i}) at +∞. Exact for a PLD whose masses are exact (one
// discretised step, a hand-built pair); NOT for a composed one (see above): use the composed
// PLD of the other direction there. A Status for a PLD without masses (profileOnly).
Result<DiscretePld> reversed(const DiscretePld& pld);
// T(P, Q) of one PLD, = tradeoffOf(pld, reversed(pld), typeOne): for exact PLDs only.
Result<std::vector<double>> tradeoffOf(const DiscretePld& pld, std::span<const double> typeOne);

// Progress (fraction in [0, 1]) and cancellation for long computations; both optional.
struct ComputeControl {
  std::function<void(double)> progress;
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
  void report(double fraction) const {
    if (progress) progress(fraction);
  }
};

// One step's PLD on the grid Δ (pessimistic or optimistic), truncated at P-mass tau.
Result<DiscretePld> discretise(const SubsampledGaussianPair& pair, double interval, Estimate estimate, double tau,
                               const ComputeControl& control = {});

// `count` steps of a base PLD; segments are composed together (heterogeneous composition).
struct Segment {
  const DiscretePld* pld;
  std::int64_t count;
};

struct CompositionInfo {
  std::size_t fftSize = 0;
  std::size_t windowPoints = 0;
  double truncatedMass = 0.0;  // Chernoff bound on the mass outside the window (both tails)
  bool fftFromWisdom = false;  // FFTW planned the transform from the shipped measured wisdom
  // Frequencies computed by chirp-z from the band that survives the K-th power, with no
  // transform of size fftSize (0: the full transform was made).
  std::size_t bandFrequencies = 0;
};

// Composition of all segments (all on the same grid Δ and of the same estimate kind).
Result<DiscretePld> compose(std::span<const Segment> segments, Estimate estimate, double tau,
                            const ComputeControl& control = {}, CompositionInfo* info = nullptr);

// The composition of a run, as composeRun makes each of its PLDs: losses ≥ 0 only (all that
// δ(ε ≥ 0) reads), kept as a spectrum where few frequencies survive the K-th power — computed
// from the surviving band alone when the window's transform is long against the steps' (see
// CompositionInfo::bandFrequencies) — and as δ's tables otherwise.
Result<DiscretePld> composeNonNegative(std::span<const Segment> segments, Estimate estimate, double tau,
                                       const ComputeControl& control = {}, CompositionInfo* info = nullptr);

// A step of the Poisson-subsampled Gaussian: rate q, noise multiplier σ, repeated `count` times.
struct GaussianSegment {
  double q;
  double sigma;
  std::int64_t count;
};

// The composed PLDs of a run, one per direction and estimate. Each keeps its losses ≥ 0 only:
// δ(ε) and ε(δ) at ε ≥ 0 and the trade-off curves read nothing below; a long run's keep their
// spectra (DiscretePld::spectral).
struct ComposedRun {
  double interval = 0.0;
  double tau = 0.0;
  DiscretePld remove[2];  // [pessimistic, optimistic]
  DiscretePld add[2];
  CompositionInfo info;
  double deltaUpper(double epsilon) const;
  double deltaLower(double epsilon) const;
  Result<double> epsilonUpper(double delta) const;
  Result<double> epsilonLower(double delta) const;
  // The run with the tables of its spectral PLDs (DiscretePld::tables, made side by side), for
  // reading δ at many losses (trade-off curves, profiles, risk calibration); a few ε or δ
  // queries need not. With `only`, the PLDs of that estimate alone.
  ComposedRun tabulated() const;
  ComposedRun tabulated(Estimate only) const;
};

// The truncation mass of one step composed `count` times into a run truncated at `tau`: τ/(4K)
// would do; τ/(4·10^⌈log₁₀ K⌉), at most ten times less, lets the runs of a decade of K share
// their discretised steps (an ε-vs-K curve's points).
double stepTruncation(double tau, std::int64_t count);

// Both directions, both estimates, at grid Δ; `withOptimistic = false` skips the lower bound.
Result<ComposedRun> composeRun(std::span<const GaussianSegment> segments, double interval, double tau,
                               bool withOptimistic, const ComputeControl& control = {});

}  // namespace dpx::core::accounting::pld
