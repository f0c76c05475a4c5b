// Conservative calibration: the noise (or step size) that meets a target ε. Every answer x
// satisfies ε(x) ≤ target, checked by evaluating ε at the returned value; x is found by
// bracketed root finding (TOMS 748 on log x), never by a fixed number of halvings.
#pragma once

#include <functional>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

struct Calibration {
  double sigma;           // noise multiplier with ε(σ) ≤ target
  EpsilonResult epsilon;  // ε at that σ
  bool atLowerLimit;      // the target is met even at the smallest σ allowed
};

// Smallest σ in [lo, hi] with epsilonOf(σ) ≤ target, for ε decreasing in σ: found to 1e−10,
// then rounded up to the 10 significant digits every output prints (a printed σ typed back in
// meets the target too).
// Fails, naming the target and ε(hi), when even σ = hi is not private enough.
Result<Calibration> calibrateDecreasing(const std::function<Result<EpsilonResult>(double)>& epsilonOf, double target,
                                        double lo, double hi);

// σ for a target ε of `accountant` at params (σ in the knob's range [0.05, 100]).
Result<Calibration> calibrateSigma(const Accountant& accountant, const Params& params, double targetEpsilon,
                                   const EpsilonOptions& options = {});

}  // namespace dpx::core::accounting
