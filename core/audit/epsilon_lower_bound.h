// Empirical ε lower bounds from a membership-inference attack (the statistics of the audit).
//
// One-run bound (the rigorous one): Steinke, Nasr & Jagielski 2023, "Privacy Auditing with One
// (1) Training Run", Theorem 3.1. m audited examples are each included independently with
// probability 1/2; the auditor guesses IN for the k₊ highest scores, OUT for the k₋ lowest and
// abstains on the rest (r = k₊ + k₋ guesses). If the training run is (ε, δ)-DP (add/remove), the
// number W of correct guesses satisfies
//   P[W ≥ v] ≤ β + 2mδ·α,  β = P[Binomial(r, q) ≥ v],  q = e^ε/(1 + e^ε),
//   α = max_{1≤i≤v} P[v − i ≤ Binomial(r, q) < v] / i,
// the p-value their published routine (p_value_DP_audit) computes. The bound reported is the
// largest ε whose p-value is ≤ 1 − confidence. It needs no monotonicity of p in ε: a run that is
// (ε*, δ)-DP is (ε, δ)-DP for every ε ≥ ε*, so P[W ≥ v] ≤ P̂(v) := inf_{ε ≥ ε*} p(ε; v) for all
// v, and reporting some ε > ε* with p(ε; W) ≤ 1 − confidence implies P̂(W) ≤ 1 − confidence,
// an event of probability at most 1 − confidence (take the smallest such v).
// Several guess rules (k₊, k₋) and several attacks are tried; the significance is split evenly
// over all of them (Bonferroni), so the maximum over them keeps the stated confidence.
//
// Split Clopper–Pearson estimate (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021; the "Split"
// threshold strategy of jax_privacy's auditing module): the audited records are split at random
// into a selection half, where the threshold is chosen, and an evaluation half, where exact
// Clopper–Pearson upper bounds on FPR and FNR turn the (ε, δ)-DP constraints
// FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ into a lower bound on ε. Those papers train one
// model per trial; here all trials share one training run, so the trials are not independent
// and the number is an estimate, reported next to (never instead of) the one-run bound.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace dpx::core::audit {

// p-value of v correct guesses out of r on m examples under the null "(ε, δ)-DP" (Steinke et
// al. 2023, Thm 3.1), clamped to 1. Requires 0 ≤ v ≤ r ≤ m, ε ≥ 0 finite, δ ∈ [0, 1].
Result<double> oneRunPValue(std::int64_t m, std::int64_t r, std::int64_t v, double epsilon, double delta);

// The largest ε with oneRunPValue(m, r, v, ε, δ) ≤ 1 − confidence; 0 when even ε = 0 is not
// rejected. confidence ∈ (0, 1) is the level of this single test (no multiple-testing
// correction). Found by TOMS 748 on a bracket, then taken on the rejected side.
Result<double> oneRunEpsilonLowerBound(std::int64_t m, std::int64_t r, std::int64_t v, double delta, double confidence);

// A guess rule: IN for the kPlus highest scores, OUT for the kMinus lowest.
struct GuessRule {
  std::int64_t kPlus = 0;
  std::int64_t kMinus = 0;
};

// The fixed grid of rules tried on m audited examples: symmetric rules guessing r = f·m records
// (half IN, half OUT) for f ∈ {0.02, 0.05, 0.1, 0.2, 0.5, 1} and IN-only rules with
// k₊ = f·m for f ∈ {0.01, 0.02, 0.05, 0.1, 0.2}, rounded, at least 1, without duplicates. Fixed
// before the scores are seen, so the Bonferroni factor is its size.
std::vector<GuessRule> guessGrid(std::int64_t m);

// Correct guesses of a rule. Ties in the score are broken by the record index (independent of
// membership, as the theorem requires of the guesser).
std::int64_t correctGuesses(std::span<const double> scores, std::span<const std::uint8_t> members,
                            const GuessRule& rule);

struct OneRunBound {
  double epsilon = 0.0;         // the bound at the family-wise confidence
  GuessRule rule;               // the rule that gave it
  std::int64_t examples = 0;    // m
  std::int64_t guesses = 0;     // r
  std::int64_t correct = 0;     // v
  int tests = 0;                // rules × attacks the significance was split over
  double testConfidence = 0.0;  // 1 − (1 − confidence)/tests, the level of each test
};

// The one-run bound of each attack (scoresPerAttack[a][i]: higher = more likely a member) over
// guessGrid(m), the significance 1 − confidence split over all rules of all attacks, so the
// largest of the returned bounds holds at `confidence`.
Result<std::vector<OneRunBound>> oneRunAudit(std::span<const std::vector<double>> scoresPerAttack,
                                             std::span<const std::uint8_t> members, double delta, double confidence);

// The ε that (FPR, FNR) upper bounds certify: max{0, log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR)}
// (terms with a non-positive numerator are skipped; FPR = 0 or FNR = 0 gives +∞ only when
// the other side leaves room, and callers pass Clopper–Pearson upper bounds, which are > 0).
double epsilonFromErrorRates(double fpr, double fnr, double delta);

// Exact (Clopper–Pearson) one-sided upper confidence bound on a binomial proportion after
// `successes` of `trials`, at level `confidence`; 1 when trials == 0.
Result<double> clopperPearsonUpper(std::int64_t successes, std::int64_t trials, double confidence);

struct SplitBound {
  double epsilon = 0.0;    // lower bound estimate at the family-wise confidence
  double threshold = 0.0;  // guess IN when score ≥ threshold (chosen on the selection half)
  double fpr = 0.0;        // empirical rates on the evaluation half
  double fnr = 0.0;
  double fprUpper = 1.0;  // their Clopper–Pearson upper bounds
  double fnrUpper = 1.0;
  std::int64_t positives = 0;  // evaluation half: members
  std::int64_t negatives = 0;  // evaluation half: non-members
};

// Per attack: threshold chosen on the records with selectionHalf[i] = 1 (maximising the same
// Clopper–Pearson ε there), evaluated on the others; FPR and FNR bounds at (1 − c')/2 each,
// c' = 1 − (1 − confidence)/attacks (union bound over the two rates and Bonferroni over the
// attacks).
Result<std::vector<SplitBound>> splitClopperPearsonAudit(std::span<const std::vector<double>> scoresPerAttack,
                                                         std::span<const std::uint8_t> members,
                                                         std::span<const std::uint8_t> selectionHalf, double delta,
                                                         double confidence);

}  // namespace dpx::core::audit
