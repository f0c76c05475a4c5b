// The composition's stages a run schedules itself (pld_composed_run.cpp): it plans every job before
// it picks one transform size for all, then composes each on it. Internal: the API is compose and
// composeRun (privacy_loss_distribution.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "accounting/privacy_loss_distribution.h"
#include "numerics/real_fft.h"

namespace dpx::core::accounting::pld::detail {

class BufferPool;

// The range of the composed losses in grid steps, and log Π(1 − ω_∞)^{c}: the log of the
// probability that no step's loss is infinite.
struct CompositionRange {
  double interval = 0.0;
  std::int64_t minIndex = 0;
  std::int64_t maxIndex = 0;
  double logFinite = 0.0;
};

// Grid indices [lo, hi] of the composed losses that are kept.
struct LossWindow {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::int64_t points() const { return hi - lo + 1; }
};

// A composition up to its transform: the range, the window kept and the fewest points a
// transform needs (the window, and every step's grid).
struct CompositionPlan {
  CompositionRange range;
  LossWindow window;
  std::size_t points = 0;
};

// The plan of composing `segments` with `tau` of mass outside the window; a Status when a segment
// cannot be composed or the window would pass the memory guard.
Result<CompositionPlan> planComposition(std::span<const Segment> segments, double tau);

// Which composed losses a composition keeps.
enum class KeptLosses {
  kAll,
  // Losses ≥ 0 only: δ(ε) at ε ≥ 0 reads nothing below (the hockey stick counts losses above ε),
  // and every query of a run is at ε ≥ 0. About half of a long run's window lies below 0;
  // leaving it out spares its masses and both prefix tables, in time as well as memory (a fresh
  // page costs as much to fault in as several FFT passes over it). The PLD keeps the spectrum
  // (DiscretePld::spectral) where few frequencies survive the K-th power, and no inverse is
  // made; elsewhere its tables only (DiscretePld::profileOnly), the suffix table written over the
  // FFT buffer.
  kNonNegative,
};

// A run's composition (losses ≥ 0) kept as its spectrum on a transform of size n ≥ plan.points,
// from the band that survives the powers (bandSpectrum); nothing when the full transform is the
// faster way.
std::optional<DiscretePld> composeBand(std::span<const Segment> segments, Estimate estimate, double tau,
                                       const CompositionPlan& plan, std::size_t n, int threads, CompositionInfo* info);

// Composition of all segments on a transform of size transform.size() ≥ plan.points.
Result<DiscretePld> composeWith(std::span<const Segment> segments, Estimate estimate, double tau,
                                const CompositionPlan& plan, const numerics::RealTransform& transform, KeptLosses kept,
                                const ComputeControl& control, CompositionInfo* info, BufferPool* pool = nullptr);

}  // namespace dpx::core::accounting::pld::detail
