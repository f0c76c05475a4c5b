#include "utility/langevin_utility.h"

#include <algorithm>
#include <cmath>

#include "common/format.h"
#include "utility/series.h"

namespace dpx::core::utility {
namespace {

constexpr const char* kCitation = "Ryffel, Bach & Pointcheval 2022";

// "beta = -1 is out of range: the smoothness β must be a finite number > 0"
Status outOfRange(const char* name, double value, const std::string& requirement) {
  return Status::invalidArgument(std::string(name) + " = " + formatNumber(value) + " is out of range: " + requirement);
}

bool isWhole(double value) { return std::isfinite(value) && value == std::floor(value); }

Status checkProblem(const LangevinProblem& p) {
  if (!(std::isfinite(p.beta) && p.beta > 0.0)) {
    return outOfRange("beta", p.beta, "the smoothness β must be a finite number > 0");
  }
  if (!(std::isfinite(p.lambda) && p.lambda >= 0.0)) {
    return outOfRange("lambda", p.lambda, "the strong convexity λ must be in (0, β]");
  }
  if (p.lambda == 0.0) {
    return Status::notApplicable(std::string("λ = 0: the utility bounds of ") + kCitation +
                                 " need a λ-strongly convex loss (λ > 0); set λ > 0");
  }
  if (p.lambda > p.beta) {
    return Status::invalidArgument("lambda = " + formatNumber(p.lambda) + " exceeds beta = " + formatNumber(p.beta) +
                                   ": a λ-strongly convex, β-smooth loss has λ in (0, β]");
  }
  if (!(std::isfinite(p.lipschitz) && p.lipschitz > 0.0)) {
    return outOfRange("L", p.lipschitz, "the Lipschitz constant L must be a finite number > 0");
  }
  if (p.records < 1) return outOfRange("n", static_cast<double>(p.records), "the number of records n must be ≥ 1");
  if (!(isWhole(p.dimension) && p.dimension >= 1.0)) {
    return outOfRange("d", p.dimension, "the parameter dimension d must be a whole number ≥ 1");
  }
  if (!(std::isfinite(p.xi2) && p.xi2 >= 0.0)) {
    return outOfRange("xi2", p.xi2, "ξ² = E‖∇L_B(θ*)‖² must be a finite number ≥ 0");
  }
  if (p.initialDistanceSquared && !(std::isfinite(*p.initialDistanceSquared) && *p.initialDistanceSquared >= 0.0)) {
    return outOfRange("init-distance2", *p.initialDistanceSquared, "E‖θ₀ − θ*‖² must be a finite number ≥ 0");
  }
  if (p.optimumNorm && !(std::isfinite(*p.optimumNorm) && *p.optimumNorm >= 0.0)) {
    return outOfRange("optimum-norm", *p.optimumNorm, "the bound on ‖θ*‖ must be a finite number ≥ 0");
  }
  return Status::ok();
}

Status checkSteps(double steps) {
  if (!(isWhole(steps) && steps >= 1.0))
    return outOfRange("K", steps, "the number of steps K must be a whole number ≥ 1");
  return Status::ok();
}

Status checkSigmaL2(double sigmaL2) {
  if (!(std::isfinite(sigmaL2) && sigmaL2 >= 0.0)) {
    return outOfRange("sigma_L2", sigmaL2, "the Langevin noise variance σ_L² must be a finite number ≥ 0");
  }
  return Status::ok();
}

Status checkBatch(const LangevinProblem& p, std::int64_t m) {
  if (m < 1 || m > p.records) {
    return Status::invalidArgument(
        "m = " + std::to_string(m) +
        " is out of range: the batch size m must be in [1, n = " + std::to_string(p.records) + "]");
  }
  return Status::ok();
}

Status checkRdp(RdpPair t) {
  if (!(std::isfinite(t.alpha) && t.alpha > 1.0)) return outOfRange("alpha", t.alpha, "the Rényi order α must be > 1");
  if (!(std::isfinite(t.epsilon) && t.epsilon > 0.0)) {
    return outOfRange("epsilon", t.epsilon, "the Rényi ε_α must be a finite number > 0");
  }
  return Status::ok();
}

Status checkDp(double epsilon, double delta) {
  if (!(std::isfinite(epsilon) && epsilon > 0.0)) {
    return outOfRange("epsilon", epsilon, "the target ε must be a finite number > 0");
  }
  if (!(delta > 0.0 && delta < 1.0)) return outOfRange("delta", delta, "δ must be in (0, 1)");
  return Status::ok();
}

// Thm 4.2 and 4.4 convert through α = 1 + 2log(1/δ)/ε, whose bound simplification needs ε ≤ 2log(1/δ).
Status checkDpTheoremApplies(double epsilon, double delta, const char* theorem) {
  const double limit = -2.0 * std::log(delta);
  if (epsilon > limit) {
    return Status::notApplicable("ε = " + formatNumber(epsilon) + " exceeds 2·log(1/δ) = " + formatNumber(limit) +
                                 " at δ = " + formatNumber(delta) + ": " + kCitation + ", " + theorem +
                                 " needs ε ≤ 2·log(1/δ)");
  }
  return Status::ok();
}

Status checkTerms(const RiskTerms& t, const char* what) {
  for (double v : {t.initial, t.gradientNoise, t.langevinNoise, t.total}) {
    if (!(std::isfinite(v) && v <= 1e300)) {
      return Status::numericalIssue(std::string(what) + " exceeds 1e300 (or is not a number) for these inputs");
    }
  }
  return Status::ok();
}

Status checkFinite(double value, const char* what) {
  if (!(std::isfinite(value) && std::fabs(value) <= 1e300)) {
    return Status::numericalIssue(std::string(what) + " exceeds 1e300 (or is not a number) for these inputs");
  }
  return Status::ok();
}

RiskTerms makeTerms(double initial, double gradientNoise, double langevinNoise) {
  return {initial, gradientNoise, langevinNoise, initial + gradientNoise + langevinNoise};
}

// η_k = 1/(2β + λk/2) = (2/λ)/(x + k) with x = 4β/λ: Σ_{k<K} 1/(x + k).
double shiftedHarmonic(double x, double steps) { return shiftedPowerSum(1.0, x, 0.0, steps - 1.0); }

}  // namespace

Result<double> initialDistanceSquared(const LangevinProblem& p, double sigmaL2) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSigmaL2(sigmaL2));
  if (p.initialDistanceSquared) return *p.initialDistanceSquared;
  const double radius = p.lipschitz / p.lambda;
  double d0 = 4.0 * radius * radius;
  if (p.optimumNorm) {
    const double spread = std::min(2.0 * p.dimension * sigmaL2 / p.lambda, radius * radius);
    const double norm = std::min(*p.optimumNorm, radius);
    d0 = spread + norm * norm;
  }
  DPX_RETURN_IF_ERROR(checkFinite(d0, "E‖θ₀ − θ*‖²"));
  return d0;
}

Result<Lemma41Bound> lemma41(const LangevinProblem& p, const LangevinRun& run) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(run.steps));
  DPX_RETURN_IF_ERROR(checkSigmaL2(run.sigmaL2));
  DPX_ASSIGN_OR_RETURN(const double d0, initialDistanceSquared(p, run.sigmaL2));
  const double K = run.steps;
  const double beta = p.beta;
  const double lambda = p.lambda;
  const double d = p.dimension;
  const double s2 = run.sigmaL2;
  Lemma41Bound out;
  out.initialDistanceSquared = d0;
  if (run.schedule == LangevinSchedule::kConstant) {
    const double eta = run.eta;
    if (!(std::isfinite(eta) && eta > 0.0))
      return outOfRange("eta", eta, "the step size η must be a finite number > 0");
    // 1/(2β) is the boundary Thm 4.1 itself uses; allow its rounding.
    if (eta > (1.0 + 1e-12) / (2.0 * beta)) {
      return Status::notApplicable("η = " + formatNumber(eta) +
                                   " exceeds 1/(2β) = " + formatNumber(1.0 / (2.0 * beta)) + ": " + kCitation +
                                   ", Lemma 4.1 needs η ≤ 1/(2β) (β = " + formatNumber(beta) + ")");
    }
    // (1 − ηλ)^K and Σ_{k<K}(1 − ηλ)^k = (1 − (1 − ηλ)^K)/(ηλ), in log space so K = 10²⁰ is fine.
    const double logRho = std::log1p(-eta * lambda);
    const double rhoK = std::exp(K * logRho);
    const double geometric = -std::expm1(K * logRho) / (eta * lambda);
    out.contraction = rhoK;
    out.recursion =
        makeTerms(0.5 * beta * rhoK * d0, beta * eta * eta * p.xi2 * geometric, beta * eta * d * s2 * geometric);
    const double decay = std::exp(-lambda * eta * K);
    out.closedForm = makeTerms(0.5 * beta * d0 * decay, beta * eta * p.xi2 / lambda, beta * d * s2 / lambda);
    out.printed = makeTerms(0.5 * beta * d0 * decay, beta * eta * p.xi2 / (2.0 * lambda), beta * d * s2 / lambda);
    DPX_RETURN_IF_ERROR(checkTerms(*out.closedForm, "the closed form of Lemma 4.1"));
    DPX_RETURN_IF_ERROR(checkTerms(*out.printed, "Lemma 4.1 as printed"));
  } else {
    // 1 − η_kλ = (x + k − 2)/(x + k): the products telescope (x = 4β/λ ≥ 4 since λ ≤ β). With
    // b = λ/2 the 1/b² and 1/b factors are folded into b(x + K − j) = 2β + λ(K − j)/2, so nothing
    // overflows for a small λ.
    const double x = 4.0 * beta / lambda;
    const double H = shiftedHarmonic(x, K);
    const double den1 = x + K - 2.0;
    const double den2 = x + K - 1.0;
    const double scaled1 = 2.0 * beta + lambda * (K - 2.0) / 2.0;  // b·den1
    const double scaled2 = 2.0 * beta + lambda * (K - 1.0) / 2.0;  // b·den2
    out.contraction = ((x - 2.0) / den1) * ((x - 1.0) / den2);
    const double dInitial = d0 * out.contraction;
    const double dGradient = 2.0 * p.xi2 * ((K - H) / scaled1) / scaled2;
    const double dLangevin = 2.0 * d * s2 * (K / scaled1) * ((x - 1.0 + (K - 1.0) / 2.0) / den2);
    out.recursion = makeTerms(0.5 * beta * dInitial, 0.5 * beta * dGradient, 0.5 * beta * dLangevin);
  }
  DPX_RETURN_IF_ERROR(checkTerms(out.recursion, "the recursion of Lemma 4.1"));
  return out;
}

Result<Lemma42Bound> lemma42(const LangevinProblem& p, double steps, double sigmaL2) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkSteps(steps));
  DPX_RETURN_IF_ERROR(checkSigmaL2(sigmaL2));
  DPX_ASSIGN_OR_RETURN(const double d0, initialDistanceSquared(p, sigmaL2));
  const double K = steps;
  const double beta = p.beta;
  const double lambda = p.lambda;
  Lemma42Bound out;
  out.initialDistanceSquared = d0;
  out.sumEta = (2.0 / lambda) * shiftedHarmonic(4.0 * beta / lambda, K);
  const double langevin = 2.0 * p.dimension * sigmaL2;
  out.exactSum = makeTerms((2.0 * beta - lambda / 2.0) * d0 / K, 2.0 * p.xi2 * out.sumEta / K, langevin);
  out.closedForm =
      makeTerms(2.0 * beta * d0 / K, 4.0 * p.xi2 / (K * lambda) * std::log1p(lambda * K / (4.0 * beta)), langevin);
  DPX_RETURN_IF_ERROR(checkTerms(out.exactSum, "Lemma 4.2"));
  DPX_RETURN_IF_ERROR(checkTerms(out.closedForm, "Lemma 4.2 as printed"));
  return out;
}

Result<RdpPair> rdpPairForDp(double epsilon, double delta) {
  DPX_RETURN_IF_ERROR(checkDp(epsilon, delta));
  RdpPair pair{1.0 + 2.0 * -std::log(delta) / epsilon, epsilon / 2.0};
  DPX_RETURN_IF_ERROR(checkFinite(pair.alpha, "the Rényi order α = 1 + 2log(1/δ)/ε"));
  return pair;
}

Result<double> noiseMultiplierForLangevin(double sigmaL, double lipschitz, std::int64_t batchSize, double eta0) {
  if (!(std::isfinite(sigmaL) && sigmaL >= 0.0))
    return outOfRange("sigma_L", sigmaL, "σ_L must be a finite number ≥ 0");
  if (!(std::isfinite(lipschitz) && lipschitz > 0.0)) {
    return outOfRange("L", lipschitz, "the Lipschitz constant L must be a finite number > 0");
  }
  if (batchSize < 1) return outOfRange("m", static_cast<double>(batchSize), "the batch size m must be ≥ 1");
  if (!(std::isfinite(eta0) && eta0 > 0.0))
    return outOfRange("eta", eta0, "the step size η₀ must be a finite number > 0");
  const double sigma = sigmaL * static_cast<double>(batchSize) * std::sqrt(2.0) / (lipschitz * std::sqrt(eta0));
  DPX_RETURN_IF_ERROR(checkFinite(sigma, "the noise multiplier σ"));
  return sigma;
}

namespace {

// σ_L², K, the bounds and the lemma: the part every theorem shares.
enum class TheoremKind { k41, k42, k43, k44 };

Result<TheoremPrescription> prescribe(const LangevinProblem& p, TheoremKind kind, RdpPair rdp, double sigmaL2,
                                      double privacyRatio, double statedSignal, double statedXi, double correctedXi,
                                      std::int64_t batchSize, const char* theorem) {
  const bool decreasing = kind == TheoremKind::k43 || kind == TheoremKind::k44;
  TheoremPrescription t;
  t.rdp = rdp;
  t.sigmaL2 = sigmaL2;
  t.sigmaL = std::sqrt(sigmaL2);
  t.eta0 = 1.0 / (2.0 * p.beta);
  const double kappa = p.beta / p.lambda;
  if (decreasing) {
    t.stepsFormula = std::max(kappa * privacyRatio, privacyRatio * privacyRatio / kappa);
  } else {
    if (!(privacyRatio > 1.0)) {
      return Status::notApplicable(std::string(kCitation) + ", " + theorem + ": its K = (2β/λ)·log(" +
                                   formatNumber(privacyRatio) + ") is not positive (the ratio " +
                                   (kind == TheoremKind::k41 ? "εn²/(αd)" : "ε²n²/(4log(1/δ)d)") +
                                   " must exceed 1: too few records n for the dimension d at this target)");
    }
    t.stepsFormula = 2.0 * kappa * std::log(privacyRatio);
  }
  DPX_RETURN_IF_ERROR(checkFinite(t.stepsFormula, "the prescribed number of steps K"));
  t.steps = std::max(1.0, std::ceil(t.stepsFormula));
  t.statedBound = statedSignal + statedXi;
  t.correctedBound = statedSignal + correctedXi;
  // An overflowing σ_L² is a numerical issue of the prescription, not an input out of range (the
  // noise multiplier below would call it one).
  DPX_RETURN_IF_ERROR(checkFinite(sigmaL2, (std::string("σ_L² of ") + theorem).c_str()));
  DPX_ASSIGN_OR_RETURN(const double sigma, noiseMultiplierForLangevin(t.sigmaL, p.lipschitz, batchSize, t.eta0));
  t.noiseMultiplier = sigma;
  if (decreasing) {
    DPX_ASSIGN_OR_RETURN(const Lemma42Bound lemma, lemma42(p, t.steps, sigmaL2));
    t.lemma = lemma.exactSum;
  } else {
    DPX_ASSIGN_OR_RETURN(const Lemma41Bound lemma, lemma41(p, {LangevinSchedule::kConstant, t.eta0, t.steps, sigmaL2}));
    t.lemma = lemma.recursion;
  }
  for (double v : {t.sigmaL2, t.statedBound, t.correctedBound}) DPX_RETURN_IF_ERROR(checkFinite(v, theorem));
  return t;
}

}  // namespace

namespace {

// What the theorems for one privacy target share: the Rényi pair, the Langevin noise σ_L² they
// prescribe and x, the signal-to-dimension ratio their K and bounds are written in.
struct TheoremScale {
  RdpPair rdp;
  double sigmaL2 = 0.0;
  double x = 0.0;
  double lipschitz2 = 0.0;  // L²
};

// Thm 4.1/4.3, (α, ε)-RDP: σ_L² = 4αL²/(ελn²), x = εn²/(αd).
Result<TheoremScale> rdpScale(const LangevinProblem& p, RdpPair target, std::int64_t batchSize) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkRdp(target));
  DPX_RETURN_IF_ERROR(checkBatch(p, batchSize));
  const double n = static_cast<double>(p.records);
  const double L2 = p.lipschitz * p.lipschitz;
  return TheoremScale{target, 4.0 * target.alpha * L2 / (target.epsilon * p.lambda * n * n),
                      target.epsilon * n * n / (target.alpha * p.dimension), L2};
}

// Thm 4.2/4.4, (ε, δ)-DP for ε ≤ 2log(1/δ): σ_L² = 8L²(ε + 2log(1/δ))/(ε²λn²),
// x = ε²n²/(4log(1/δ)d), the pair α = 1 + 2log(1/δ)/ε, ε_α = ε/2.
Result<TheoremScale> dpScale(const LangevinProblem& p, double epsilon, double delta, std::int64_t batchSize,
                             const char* theorem) {
  DPX_RETURN_IF_ERROR(checkProblem(p));
  DPX_RETURN_IF_ERROR(checkDp(epsilon, delta));
  DPX_RETURN_IF_ERROR(checkDpTheoremApplies(epsilon, delta, theorem));
  DPX_RETURN_IF_ERROR(checkBatch(p, batchSize));
  DPX_ASSIGN_OR_RETURN(const RdpPair rdp, rdpPairForDp(epsilon, delta));
  const double n = static_cast<double>(p.records);
  const double L2 = p.lipschitz * p.lipschitz;
  const double logInv = -std::log(delta);
  return TheoremScale{rdp, 8.0 * L2 * (epsilon + 2.0 * logInv) / (epsilon * epsilon * p.lambda * n * n),
                      epsilon * epsilon * n * n / (4.0 * logInv * p.dimension), L2};
}

}  // namespace

Result<TheoremPrescription> theorem41(const LangevinProblem& p, RdpPair target, std::int64_t batchSize) {
  // Bound 6αβdL²/(ελ²n²) + ξ²/(4λ) = 6(βL²/λ²)/x + ξ²/(4λ).
  DPX_ASSIGN_OR_RETURN(const TheoremScale s, rdpScale(p, target, batchSize));
  const double signal = 6.0 * (p.beta * s.lipschitz2 / (p.lambda * p.lambda)) / s.x;
  return prescribe(p, TheoremKind::k41, s.rdp, s.sigmaL2, s.x, signal, p.xi2 / (4.0 * p.lambda),
                   p.xi2 / (2.0 * p.lambda), batchSize, "Thm 4.1");
}

Result<TheoremPrescription> theorem42(const LangevinProblem& p, double epsilon, double delta, std::int64_t batchSize) {
  // Bound 48βdL²log(1/δ)/(ε²λ²n²) + ξ²/(4λ) = 12(βL²/λ²)/x + ξ²/(4λ).
  DPX_ASSIGN_OR_RETURN(const TheoremScale s, dpScale(p, epsilon, delta, batchSize, "Thm 4.2"));
  const double signal = 12.0 * (p.beta * s.lipschitz2 / (p.lambda * p.lambda)) / s.x;
  return prescribe(p, TheoremKind::k42, s.rdp, s.sigmaL2, s.x, signal, p.xi2 / (4.0 * p.lambda),
                   p.xi2 / (2.0 * p.lambda), batchSize, "Thm 4.2");
}

Result<TheoremPrescription> theorem43(const LangevinProblem& p, RdpPair target, std::int64_t batchSize) {
  // σ_L² as Thm 4.1; bound 18αdL²/(ελn²) = 18(L²/λ)/x.
  DPX_ASSIGN_OR_RETURN(const TheoremScale s, rdpScale(p, target, batchSize));
  return prescribe(p, TheoremKind::k43, s.rdp, s.sigmaL2, s.x, 18.0 * (s.lipschitz2 / p.lambda) / s.x, 0.0, 0.0,
                   batchSize, "Thm 4.3");
}

Result<TheoremPrescription> theorem44(const LangevinProblem& p, double epsilon, double delta, std::int64_t batchSize) {
  // σ_L² as Thm 4.2; bound 144dL²log(1/δ)/(ε²λn²) = 36(L²/λ)/x.
  DPX_ASSIGN_OR_RETURN(const TheoremScale s, dpScale(p, epsilon, delta, batchSize, "Thm 4.4"));
  return prescribe(p, TheoremKind::k44, s.rdp, s.sigmaL2, s.x, 36.0 * (s.lipschitz2 / p.lambda) / s.x, 0.0, 0.0,
                   batchSize, "Thm 4.4");
}

namespace {

Status checkRatioInputs(double beta, double lambda, std::int64_t records, double dimension) {
  if (!(std::isfinite(beta) && beta > 0.0))
    return outOfRange("beta", beta, "the smoothness β must be a finite number > 0");
  if (!(std::isfinite(lambda) && lambda >= 0.0)) return outOfRange("lambda", lambda, "λ must be in (0, β]");
  if (lambda == 0.0) {
    return Status::notApplicable(std::string("λ = 0: Table 4's ratio of ") + kCitation +
                                 " divides by (β/λ)², "
                                 "which needs λ > 0");
  }
  if (records < 1) return outOfRange("n", static_cast<double>(records), "the number of records n must be ≥ 1");
  if (!(isWhole(dimension) && dimension >= 1.0)) {
    return outOfRange("d", dimension, "the parameter dimension d must be a whole number ≥ 1");
  }
  return Status::ok();
}

Result<IterationRegime> regime(double beta, double lambda, double privacyRatio) {
  IterationRegime r;
  r.privacyRatio = privacyRatio;
  r.conditionNumber = beta / lambda;
  r.ratio = privacyRatio / (r.conditionNumber * r.conditionNumber);
  r.quartic = r.ratio > 1.0;
  r.verdict = r.quartic ? "K grows like n⁴" : "K grows like n²";
  for (double v : {r.privacyRatio, r.conditionNumber, r.ratio}) DPX_RETURN_IF_ERROR(checkFinite(v, "Table 4's ratio"));
  return r;
}

}  // namespace

Result<IterationRegime> table4Ratio(double beta, double lambda, std::int64_t records, double dimension,
                                    RdpPair target) {
  DPX_RETURN_IF_ERROR(checkRatioInputs(beta, lambda, records, dimension));
  DPX_RETURN_IF_ERROR(checkRdp(target));
  const double n = static_cast<double>(records);
  return regime(beta, lambda, target.epsilon * n * n / (target.alpha * dimension));
}

Result<IterationRegime> table4RatioDp(double beta, double lambda, std::int64_t records, double dimension,
                                      double epsilon, double delta) {
  DPX_RETURN_IF_ERROR(checkRatioInputs(beta, lambda, records, dimension));
  DPX_RETURN_IF_ERROR(checkDp(epsilon, delta));
  const double n = static_cast<double>(records);
  return regime(beta, lambda, epsilon * epsilon * n * n / (4.0 * -std::log(delta) * dimension));
}

}  // namespace dpx::core::utility
