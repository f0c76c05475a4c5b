#include "accounting/batch_passes.h"

#include <cmath>

namespace dpx::core::accounting {

BatchPasses batchPasses(const Params& params) {
  BatchPasses passes;
  passes.stepsPerEpoch = (params.n + params.m - 1) / params.m;
  const double nominal = nominalEpochs(params);
  if (nominal >= 1.0 && nominal == std::floor(nominal)) {
    passes.fullEpochs = static_cast<std::int64_t>(nominal);
    return passes;
  }
  passes.fullEpochs = params.K / passes.stepsPerEpoch;
  passes.partialSteps = params.K % passes.stepsPerEpoch;
  return passes;
}

}  // namespace dpx::core::accounting
