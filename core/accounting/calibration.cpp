#include "accounting/calibration.h"

#include <algorithm>
#include <cmath>

#include "common/format.h"
#include "numerics/root_finding.h"

namespace dpx::core::accounting {

Result<Calibration> calibrateDecreasing(const std::function<Result<EpsilonResult>(double)>& epsilonOf, double target,
                                        double lo, double hi) {
  if (!std::isfinite(target) || target <= 0.0) {
    return Status::invalidArgument("target-epsilon = " + formatNumber(target) +
                                   " is out of range: the target ε must be > 0");
  }
  Result<EpsilonResult> atHi = epsilonOf(hi);
  if (!atHi) return atHi.status().withContext("at σ = " + formatNumber(hi));
  if (atHi->epsilon > target) {
    return Status::invalidArgument("target ε = " + formatNumber(target) + " is unreachable: even σ = " +
                                   formatNumber(hi) + " gives ε = " + formatNumber(atHi->epsilon));
  }
  Result<EpsilonResult> atLo = epsilonOf(lo);
  if (atLo && atLo->epsilon <= target) return Calibration{lo, *atLo, true};

  // f(log σ) = ε(σ) − target, decreasing; a failed evaluation counts as "not private enough".
  auto f = [&](double logSigma) {
    // exp(log 100) is 100.00000000000001: keep σ inside the range it was asked for.
    Result<EpsilonResult> e = epsilonOf(std::clamp(std::exp(logSigma), lo, hi));
    return e ? e->epsilon - target : 1.0;
  };
  numerics::RootOptions options;
  options.relativeTolerance = 0.0;
  options.absoluteTolerance = 1e-10;
  DPX_ASSIGN_OR_RETURN(const numerics::Bracket bracket,
                       numerics::findRootBracket(f, std::log(lo), std::log(hi), options));
  // The upper end of the bracket is on the private side, rounded up to the digits every output
  // prints; confirm it and step up if rounding ever disagrees, so the contract ε(σ) ≤ target
  // holds for the value returned and for the value printed.
  double sigma = std::clamp(roundedUpToPrinted(std::exp(bracket.upper)), lo, hi);
  for (int attempt = 0; attempt < 60; ++attempt) {
    Result<EpsilonResult> e = epsilonOf(sigma);
    if (e && e->epsilon <= target) return Calibration{sigma, *e, false};
    sigma = std::min(hi, roundedUpToPrinted(sigma * (1.0 + 1e-9 * (1 << std::min(attempt, 30)))));
  }
  return Calibration{hi, *atHi, false};
}

Result<Calibration> calibrateSigma(const Accountant& accountant, const Params& params, double targetEpsilon,
                                   const EpsilonOptions& options) {
  DPX_RETURN_IF_ERROR(params.validate());
  if (!accountant.noiseSetBySigma()) {
    return Status::notApplicable(std::string(accountant.id()) +
                                 ": σ does not set this analysis' noise (the step size η does); calibrate η with "
                                 "the step-size analysis (dpx stepsize) instead");
  }
  if (accountant.boundKind() == BoundKind::kLower) {
    return Status::notApplicable(std::string(accountant.id()) +
                                 " is a lower bound: a σ that keeps it under a target guarantees nothing; calibrate "
                                 "with an upper bound that covers the run's sampler instead");
  }
  const KnobInfo& sigmaInfo = knobInfo(Knob::kSigma);
  EpsilonOptions hinted = options;
  auto epsilonOf = [&](double sigma) -> Result<EpsilonResult> {
    Params p = params;
    p.sigma = sigma;
    Result<EpsilonResult> e = accountant.epsilon(p, hinted);
    if (e && e->alpha) hinted.alphaHint = e->alpha;  // neighbouring σ have neighbouring optimal orders
    return e;
  };
  return calibrateDecreasing(epsilonOf, targetEpsilon, sigmaInfo.min, sigmaInfo.max);
}

}  // namespace dpx::core::accounting
