#include "utility/sgmcmc_utility.h"

#include <cmath>
#include <string>

#include "common/format.h"
#include "utility/series.h"

namespace dpx::core::utility {
namespace {

Status outOfRange(const char* name, double value, const std::string& requirement) {
  return Status::invalidArgument(std::string(name) + " = " + formatNumber(value) + " is out of range: " + requirement);
}

bool isWhole(double value) { return std::isfinite(value) && value == std::floor(value); }

Status checkProblem(const MseProblem& p) {
  if (p.records < 2) return outOfRange("n", static_cast<double>(p.records), "the number of records N must be ≥ 2");
  if (p.batchSize < 1 || p.batchSize > p.records) {
    return Status::invalidArgument(
        "m = " + std::to_string(p.batchSize) +
        " is out of range: the batch size τ must be in [1, N = " + std::to_string(p.records) + "]");
  }
  if (!(std::isfinite(p.gammaM) && p.gammaM >= 0.0)) {
    return outOfRange("gamma-m", p.gammaM, "Γ_M must be a finite number ≥ 0");
  }
  if (!(std::isfinite(p.constant) && p.constant > 0.0)) {
    return outOfRange("mse-constant", p.constant, "the constant C must be a finite number > 0");
  }
  return Status::ok();
}

Status checkSteps(double steps, const char* name = "K") {
  if (!(isWhole(steps) && steps >= 1.0)) {
    return outOfRange(name, steps, "the number of steps T must be a whole number ≥ 1");
  }
  return Status::ok();
}

Status checkDp(double epsilon, double delta, double lipschitz) {
  if (!(std::isfinite(epsilon) && epsilon > 0.0)) {
    return outOfRange("epsilon", epsilon, "the target ε must be a finite number > 0");
  }
  if (!(delta > 0.0 && delta < 1.0)) return outOfRange("delta", delta, "δ must be in (0, 1)");
  if (!(std::isfinite(lipschitz) && lipschitz > 0.0)) {
    return outOfRange("L", lipschitz, "the clip norm L must be a finite number > 0");
  }
  return Status::ok();
}

// (N/τ − 1)·N²·Γ_M, written (N − τ)/τ·N·N·Γ_M so N/τ is never rounded before the subtraction.
double gradientNoiseScale(const MseProblem& p) {
  const double N = static_cast<double>(p.records);
  const double tau = static_cast<double>(p.batchSize);
  return (N - tau) / tau * N * N * p.gammaM;
}

Result<MseTerms> finish(const MseProblem& p, double gradientNoise, double bias, double discretisation,
                        const char* what) {
  MseTerms t{p.constant * gradientNoise, p.constant * bias, p.constant * discretisation, 0.0};
  t.total = t.gradientNoise + t.bias + t.discretisation;
  for (double v : {t.gradientNoise, t.bias, t.discretisation, t.total}) {
    if (!(std::isfinite(v) && v <= 1e300)) {
      return Status::numericalIssue(std::string(what) + " exceeds 1e300 (or is not a number) for these inputs");
    }
  }
  return t;
}

}  // namespace

Result<WeightedMse> sgldMseWeighted(const MseProblem& p, const PosteriorRun& run) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(run.steps));
  if (!(std::isfinite(run.h1) && run.h1 > 0.0)) {
    return outOfRange("h1", run.h1, "the first step of the diffusion h₁ must be a finite number > 0");
  }
  if (!(isWhole(run.burnIn) && run.burnIn >= 0.0 && run.burnIn < run.steps)) {
    return outOfRange(
        "burn-in", run.burnIn,
        "the burn-in B must be a whole number in [0, T − 1] = [0, " + formatNumber(run.steps - 1.0) + "]");
  }
  WeightedMse out;
  out.samples = run.steps - run.burnIn;
  const double first = run.burnIn + 1.0;
  if (run.schedule == PosteriorSchedule::kConstant) {
    out.sumH = out.samples * run.h1;
    out.sumH2 = out.samples * run.h1 * run.h1;
  } else {
    out.sumH = run.h1 * shiftedPowerSum(1.0 / 3.0, 0.0, first, run.steps);
    out.sumH2 = run.h1 * run.h1 * shiftedPowerSum(2.0 / 3.0, 0.0, first, run.steps);
  }
  // S₂/S₁² and S₂²/S₁² = (S₂/S₁)²: formed as ratios so tiny steps do not underflow S₂².
  const double spread = out.sumH2 / out.sumH / out.sumH;
  const double ratio = out.sumH2 / out.sumH;
  DPX_ASSIGN_OR_RETURN(out.terms, finish(p, spread * gradientNoiseScale(p), 1.0 / out.sumH, ratio * ratio,
                                         "the MSE bound of Li, Chen, Liu & Carin 2019 (weighted sums)"));
  return out;
}

Result<double> liEtaTilde0(double epsilon, double delta, double lipschitz, double c2) {
  DPX_RETURN_IF_ERROR(checkDp(epsilon, delta, lipschitz));
  if (!(std::isfinite(c2) && c2 > 0.0)) return outOfRange("c2", c2, "the constant c₂ of Thm 3 must be > 0");
  const double value = epsilon * epsilon / (c2 * c2 * lipschitz * lipschitz * -std::log(delta));
  if (!(std::isfinite(value) && value > 0.0 && value <= 1e300)) {
    return Status::numericalIssue("η̃₀ = ε²/(c₂²L²log(1/δ)) is not a finite positive number for these inputs");
  }
  return value;
}

Result<MseTerms> liProposition5(const MseProblem& p, double steps, double etaTilde0) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(steps));
  if (!(std::isfinite(etaTilde0) && etaTilde0 > 0.0)) {
    return outOfRange("eta_tilde0", etaTilde0, "η̃₀ must be a finite number > 0");
  }
  return finish(p, (2.0 / 3.0) * gradientNoiseScale(p) / steps, 1.0 / (3.0 * etaTilde0),
                2.0 * etaTilde0 * etaTilde0 * std::pow(steps, -2.0 / 3.0), "Prop. 5 of Li, Chen, Liu & Carin 2019");
}

Result<MseTerms> liLemma6(const MseProblem& p, double samples, double eta) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(samples));
  if (!(std::isfinite(eta) && eta > 0.0)) return outOfRange("eta", eta, "the step size η must be a finite number > 0");
  return finish(p, gradientNoiseScale(p) / samples, 1.0 / (samples * eta), eta * eta,
                "Lemma 6 of Li, Chen, Liu & Carin 2019");
}

Result<MseTerms> liLemma6AtTheorem4(const MseProblem& p, double steps, double epsilon, double delta, double lipschitz,
                                    double c) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(steps));
  DPX_RETURN_IF_ERROR(checkDp(epsilon, delta, lipschitz));
  if (!(std::isfinite(c) && c > 0.0)) return outOfRange("c", c, "the constant c of Thm 4 must be > 0");
  // Thm 4's step η = ε²N/(c²L²T log(1/δ)); the two step terms are 1/(Tη) and η².
  const double N = static_cast<double>(p.records);
  const double logInv = -std::log(delta);
  const double eta = epsilon * epsilon * N / (c * c * lipschitz * lipschitz * steps * logInv);
  return finish(p, gradientNoiseScale(p) / steps, c * c * lipschitz * lipschitz * logInv / (epsilon * epsilon * N),
                eta * eta, "Lemma 6 at the step of Thm 4 (Li, Chen, Liu & Carin 2019)");
}

Result<Lemma6Optimum> liLemma6Optimum(const MseProblem& p, double steps) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(steps));
  Lemma6Optimum out;
  DPX_ASSIGN_OR_RETURN(out.printed, finish(p, gradientNoiseScale(p) / steps, std::pow(steps, -2.0 / 3.0), 0.0,
                                           "the optimal MSE of Lemma 6"));
  out.eta = std::pow(2.0 * steps, -1.0 / 3.0);
  DPX_ASSIGN_OR_RETURN(out.exact, liLemma6(p, steps, out.eta));
  return out;
}

Result<double> gammaMBound(double lipschitz, std::int64_t records) {
  if (!(std::isfinite(lipschitz) && lipschitz > 0.0)) {
    return outOfRange("L", lipschitz, "the clip norm L must be a finite number > 0");
  }
  if (records < 2) return outOfRange("n", static_cast<double>(records), "the number of records N must be ≥ 2");
  return lipschitz * lipschitz / static_cast<double>(records - 1);
}

}  // namespace dpx::core::utility
