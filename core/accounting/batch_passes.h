// How a run's K steps fall into passes over the data when its batches partition the records —
// a fixed order (cyclic) or one fresh permutation per epoch (shuffled): T = ⌈n/m⌉ batches per
// pass (the last one smaller when m does not divide n), so each record is in exactly one batch
// of every pass. Read by the sampler-aware accountants (`deterministic`, `shuffle`; Chua et al.
// 2024) that charge a run by its passes rather than by a sampling rate.
#pragma once

#include <cstdint>

#include "common/params.h"

namespace dpx::core::accounting {

struct BatchPasses {
  std::int64_t stepsPerEpoch = 1;  // T = ⌈n/m⌉
  std::int64_t fullEpochs = 0;     // passes that run all T batches
  std::int64_t partialSteps = 0;   // batches of a last, unfinished pass (0 … T−1)

  double epochs() const {
    return static_cast<double>(fullEpochs) + static_cast<double>(partialSteps) / static_cast<double>(stepsPerEpoch);
  }
  // The most batches one record can be in: a record early in the order also joins the unfinished pass.
  std::int64_t participations() const { return fullEpochs + (partialSteps > 0 ? 1 : 0); }
};

// K steps of params as passes. A K that came from whole epochs (K = ⌈E·n/m⌉, see nominalEpochs)
// is E whole passes — the trainer runs whole passes for partitioning samplers; any other K is
// ⌊K/T⌋ passes and K mod T batches of another. Params must be valid.
BatchPasses batchPasses(const Params& params);

}  // namespace dpx::core::accounting
