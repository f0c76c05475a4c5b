// Empirical ε lower bounds: Steinke, Nasr & Jagielski 2023 (one run, Theorem 3.1) and the split
// Clopper–Pearson estimate of Jagielski et al. 2020 / Nasr et al. 2021. See the header.
#include "audit/epsilon_lower_bound.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/format.h"
#include "numerics/root_finding.h"

namespace dpx::core::audit {
namespace {

// q = e^ε/(1 + e^ε) → 1 in double well before ε = 64, where P[Binomial(r, q) ≥ v] = 1.
constexpr double kLargestEpsilonSearched = 512.0;

Status validateConfidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    return Status::invalidArgument("confidence = " + formatNumber(confidence) + " is out of range: must be in (0, 1)");
  }
  return Status::ok();
}

Status validateScores(std::span<const std::vector<double>> scoresPerAttack, std::span<const std::uint8_t> members) {
  if (scoresPerAttack.empty()) return Status::invalidArgument("no attack scores to audit");
  for (const std::vector<double>& scores : scoresPerAttack) {
    if (scores.size() != members.size()) {
      return Status::invalidArgument("an attack scored " + std::to_string(scores.size()) + " records, but " +
                                     std::to_string(members.size()) + " are audited");
    }
    for (double s : scores) {
      if (!std::isfinite(s)) return Status::numericalIssue("an attack score is not finite");
    }
  }
  return Status::ok();
}

// Record indices by decreasing score; ties by increasing index, which does not depend on who
// is a member.
std::vector<std::size_t> rankByScore(std::span<const double> scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace

Result<double> oneRunPValue(std::int64_t m, std::int64_t r, std::int64_t v, double epsilon, double delta) {
  if (!(0 <= v && v <= r && r <= m)) {
    return Status::invalidArgument("one-run audit counts must satisfy 0 ≤ correct (" + std::to_string(v) +
                                   ") ≤ guesses (" + std::to_string(r) + ") ≤ examples (" + std::to_string(m) + ")");
  }
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
    return Status::invalidArgument("ε = " + formatNumber(epsilon) + " must be finite and ≥ 0");
  }
  if (!(delta >= 0.0 && delta <= 1.0)) {
    return Status::invalidArgument("δ = " + formatNumber(delta) + " must be in [0, 1]");
  }
  if (v == 0) return 1.0;  // P[W ≥ 0] = 1
  try {
    // log q and log(1 − q) without forming 1 − q, which rounds to 0 for large ε.
    const double softplus = std::log1p(std::exp(-epsilon));
    const double logQ = -softplus;
    const double log1mQ = -epsilon - softplus;
    const double q = std::exp(logQ);
    const boost::math::binomial_distribution<double> binomial(static_cast<double>(r), q);
    const double beta = boost::math::cdf(boost::math::complement(binomial, static_cast<double>(v - 1)));
    double alpha = 0.0;
    if (delta > 0.0) {
      // α = max_i P[v − i ≤ B < v]/i. Every window sum is at most P[B < v], so once that over i
      // is below the running maximum no later i can raise it.
      const double below = boost::math::cdf(binomial, static_cast<double>(v - 1));
      const auto rd = static_cast<double>(r);
      double j = static_cast<double>(v - 1);
      // log P[B = j], then stepped down: P[B = j − 1] = P[B = j]·j/(r − j + 1)·(1 − q)/q.
      double logPmf = boost::math::lgamma(rd + 1.0) - boost::math::lgamma(j + 1.0) - boost::math::lgamma(rd - j + 1.0) +
                      j * logQ + (rd - j) * log1mQ;
      double window = 0.0;
      for (std::int64_t i = 1; i <= v; ++i) {
        if (below / static_cast<double>(i) <= alpha) break;
        window += std::exp(logPmf);
        alpha = std::max(alpha, window / static_cast<double>(i));
        if (j > 0.0) logPmf += std::log(j) - std::log(rd - j + 1.0) + log1mQ - logQ;
        j -= 1.0;
      }
    }
    const double p = beta + alpha * delta * 2.0 * static_cast<double>(m);
    if (std::isnan(p)) return Status::numericalIssue("the one-run p-value is not a number");
    return std::min(1.0, p);
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("one-run p-value: ") + e.what());
  }
}

Result<double> oneRunEpsilonLowerBound(std::int64_t m, std::int64_t r, std::int64_t v, double delta,
                                       double confidence) {
  DPX_RETURN_IF_ERROR(validateConfidence(confidence));
  DPX_ASSIGN_OR_RETURN(const double atZero, oneRunPValue(m, r, v, 0.0, delta));
  const double significance = 1.0 - confidence;
  if (atZero > significance) return 0.0;  // not even ε = 0 is rejected
  Status failure;
  auto excess = [&](double epsilon) {
    Result<double> p = oneRunPValue(m, r, v, epsilon, delta);
    if (!p) {
      failure = p.status();
      return std::numeric_limits<double>::quiet_NaN();
    }
    return *p - significance;
  };
  double lo = 0.0;
  double hi = 1.0;
  while (excess(hi) <= 0.0) {
    if (!failure.isOk()) return failure;
    lo = hi;
    hi *= 2.0;
    if (hi > kLargestEpsilonSearched) return lo;
  }
  if (!failure.isOk()) return failure;
  numerics::RootOptions options;
  options.relativeTolerance = 1e-10;
  options.absoluteTolerance = 1e-12;
  Result<numerics::Bracket> bracket = numerics::findRootBracket(excess, lo, hi, options);
  if (!failure.isOk()) return failure;
  if (!bracket) return bracket.status();
  // The answer must be an ε that is rejected (p ≤ 1 − confidence): take the bracket end that is.
  if (excess(bracket->upper) <= 0.0) return bracket->upper;
  if (excess(bracket->lower) <= 0.0) return bracket->lower;
  return lo;
}

std::vector<GuessRule> guessGrid(std::int64_t m) {
  std::vector<GuessRule> grid;
  if (m <= 0) return grid;
  auto add = [&](std::int64_t kPlus, std::int64_t kMinus) {
    if (kPlus + kMinus < 1 || kPlus + kMinus > m) return;
    for (const GuessRule& g : grid) {
      if (g.kPlus == kPlus && g.kMinus == kMinus) return;
    }
    grid.push_back({kPlus, kMinus});
  };
  const auto md = static_cast<double>(m);
  for (double f : {0.02, 0.05, 0.1, 0.2, 0.5, 1.0}) {
    const std::int64_t r = std::clamp<std::int64_t>(std::llround(f * md), 1, m);
    const std::int64_t kPlus = (r + 1) / 2;
    add(kPlus, r - kPlus);
  }
  for (double f : {0.01, 0.02, 0.05, 0.1, 0.2}) add(std::clamp<std::int64_t>(std::llround(f * md), 1, m), 0);
  return grid;
}

std::int64_t correctGuesses(std::span<const double> scores, std::span<const std::uint8_t> members,
                            const GuessRule& rule) {
  const std::vector<std::size_t> order = rankByScore(scores);
  const auto m = static_cast<std::int64_t>(order.size());
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < std::min(rule.kPlus, m); ++i)
    correct += members[order[static_cast<std::size_t>(i)]] ? 1 : 0;
  for (std::int64_t i = std::max<std::int64_t>(0, m - rule.kMinus); i < m; ++i) {
    correct += members[order[static_cast<std::size_t>(i)]] ? 0 : 1;
  }
  return correct;
}

Result<std::vector<OneRunBound>> oneRunAudit(std::span<const std::vector<double>> scoresPerAttack,
                                             std::span<const std::uint8_t> members, double delta, double confidence) {
  DPX_RETURN_IF_ERROR(validateConfidence(confidence));
  DPX_RETURN_IF_ERROR(validateScores(scoresPerAttack, members));
  const auto m = static_cast<std::int64_t>(members.size());
  const std::vector<GuessRule> grid = guessGrid(m);
  std::vector<OneRunBound> bounds;
  if (grid.empty()) return Status::invalidArgument("no audited records: the one-run bound needs at least one");
  const int tests = static_cast<int>(grid.size() * scoresPerAttack.size());
  const double testConfidence = 1.0 - (1.0 - confidence) / static_cast<double>(tests);
  for (const std::vector<double>& scores : scoresPerAttack) {
    const std::vector<std::size_t> order = rankByScore(scores);
    // membersAbove[k]: members among the k highest scores.
    std::vector<std::int64_t> membersAbove(order.size() + 1, 0);
    for (std::size_t k = 0; k < order.size(); ++k) membersAbove[k + 1] = membersAbove[k] + (members[order[k]] ? 1 : 0);
    const std::int64_t totalMembers = membersAbove.back();
    OneRunBound best;
    bool first = true;
    for (const GuessRule& rule : grid) {
      const std::int64_t inCorrect = membersAbove[static_cast<std::size_t>(rule.kPlus)];
      const std::int64_t outCorrect =
          rule.kMinus - (totalMembers - membersAbove[static_cast<std::size_t>(m - rule.kMinus)]);
      const std::int64_t r = rule.kPlus + rule.kMinus;
      const std::int64_t v = inCorrect + outCorrect;
      DPX_ASSIGN_OR_RETURN(const double epsilon, oneRunEpsilonLowerBound(m, r, v, delta, testConfidence));
      // Ties in ε (typically all 0) go to the rule with the larger excess of correct guesses.
      const double excess = static_cast<double>(v) - 0.5 * static_cast<double>(r);
      const double bestExcess = static_cast<double>(best.correct) - 0.5 * static_cast<double>(best.guesses);
      if (first || epsilon > best.epsilon || (epsilon == best.epsilon && excess > bestExcess)) {
        best.epsilon = epsilon;
        best.rule = rule;
        best.guesses = r;
        best.correct = v;
        first = false;
      }
    }
    best.examples = m;
    best.tests = tests;
    best.testConfidence = testConfidence;
    bounds.push_back(best);
  }
  return bounds;
}

double epsilonFromErrorRates(double fpr, double fnr, double delta) {
  constexpr double kTiny = 1e-300;
  double epsilon = 0.0;
  const double roomAfterMiss = 1.0 - delta - fnr;
  if (roomAfterMiss > 0.0) epsilon = std::max(epsilon, std::log(roomAfterMiss / std::max(fpr, kTiny)));
  const double roomAfterFalseAlarm = 1.0 - delta - fpr;
  if (roomAfterFalseAlarm > 0.0) epsilon = std::max(epsilon, std::log(roomAfterFalseAlarm / std::max(fnr, kTiny)));
  return epsilon;
}

Result<double> clopperPearsonUpper(std::int64_t successes, std::int64_t trials, double confidence) {
  DPX_RETURN_IF_ERROR(validateConfidence(confidence));
  if (successes < 0 || successes > trials) {
    return Status::invalidArgument("Clopper–Pearson: " + std::to_string(successes) + " successes of " +
                                   std::to_string(trials) + " trials");
  }
  if (trials == 0 || successes == trials) return 1.0;
  try {
    // The upper end p solves P[Binomial(n, p) ≤ k] = 1 − confidence: the confidence-quantile of
    // Beta(k + 1, n − k).
    return boost::math::ibeta_inv(static_cast<double>(successes + 1), static_cast<double>(trials - successes),
                                  confidence);
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("Clopper–Pearson bound: ") + e.what());
  }
}

namespace {

struct Counts {
  std::int64_t falsePositives = 0;
  std::int64_t falseNegatives = 0;
  std::int64_t positives = 0;
  std::int64_t negatives = 0;
};

Result<double> certifiedEpsilon(const Counts& c, double delta, double rateConfidence) {
  DPX_ASSIGN_OR_RETURN(const double fpr, clopperPearsonUpper(c.falsePositives, c.negatives, rateConfidence));
  DPX_ASSIGN_OR_RETURN(const double fnr, clopperPearsonUpper(c.falseNegatives, c.positives, rateConfidence));
  return epsilonFromErrorRates(fpr, fnr, delta);
}

// Ranks (number of records guessed IN) worth trying on n sorted records: every one of the
// extremes, where the low-FPR and low-FNR bounds live, and a geometric plus linear spread in
// between, so the cost stays O(1000) Beta quantiles whatever n.
std::vector<std::int64_t> candidateRanks(std::int64_t n) {
  std::vector<std::int64_t> ranks;
  for (std::int64_t k = 1; k <= std::min<std::int64_t>(n, 64); ++k) ranks.push_back(k);
  for (std::int64_t k = std::max<std::int64_t>(1, n - 64); k <= n; ++k) ranks.push_back(k);
  for (double k = 64.0; k < static_cast<double>(n); k *= 1.05) ranks.push_back(static_cast<std::int64_t>(k));
  for (int j = 1; j < 512; ++j) ranks.push_back(n * j / 512);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  ranks.erase(std::remove_if(ranks.begin(), ranks.end(), [n](std::int64_t k) { return k < 1 || k > n; }), ranks.end());
  return ranks;
}

// The threshold that maximises the certified ε on the selection half (+∞ when that half is
// empty): guess IN for every score ≥ the k-th highest, ties included, over the candidate ranks k.
Result<double> selectThreshold(const std::vector<double>& scores, std::span<const std::uint8_t> members,
                               std::span<const std::uint8_t> selectionHalf, double delta, double rateConfidence) {
  // Selection half, by decreasing score.
  std::vector<std::size_t> selection;
  for (std::size_t i : rankByScore(scores)) {
    if (selectionHalf[i]) selection.push_back(i);
  }
  const auto n = static_cast<std::int64_t>(selection.size());
  std::vector<std::int64_t> membersAbove(selection.size() + 1, 0);
  for (std::size_t k = 0; k < selection.size(); ++k) {
    membersAbove[k + 1] = membersAbove[k] + (members[selection[k]] ? 1 : 0);
  }
  double threshold = std::numeric_limits<double>::infinity();
  double bestSelected = -1.0;
  for (std::int64_t k : candidateRanks(n)) {
    const double t = scores[selection[static_cast<std::size_t>(k - 1)]];
    std::int64_t in = k;
    while (in < n && scores[selection[static_cast<std::size_t>(in)]] >= t) ++in;
    Counts c;
    c.positives = membersAbove.back();
    c.negatives = n - c.positives;
    c.falsePositives = in - membersAbove[static_cast<std::size_t>(in)];
    c.falseNegatives = c.positives - membersAbove[static_cast<std::size_t>(in)];
    DPX_ASSIGN_OR_RETURN(const double e, certifiedEpsilon(c, delta, rateConfidence));
    if (e > bestSelected) {
      bestSelected = e;
      threshold = t;
    }
  }
  return threshold;
}

// The guesses at `threshold` on the evaluation half.
Counts evaluationCounts(const std::vector<double>& scores, std::span<const std::uint8_t> members,
                        std::span<const std::uint8_t> selectionHalf, double threshold) {
  Counts c;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (selectionHalf[i]) continue;
    const bool guessIn = scores[i] >= threshold;
    if (members[i]) {
      ++c.positives;
      if (!guessIn) ++c.falseNegatives;
    } else {
      ++c.negatives;
      if (guessIn) ++c.falsePositives;
    }
  }
  return c;
}

// The rates on the evaluation half, their Clopper–Pearson upper bounds and the ε they certify.
Result<SplitBound> evaluatedBound(const Counts& c, double threshold, double delta, double rateConfidence) {
  SplitBound bound;
  bound.threshold = std::isfinite(threshold) ? threshold : 0.0;  // empty selection half: nothing chosen
  bound.positives = c.positives;
  bound.negatives = c.negatives;
  bound.fpr = c.negatives > 0 ? static_cast<double>(c.falsePositives) / static_cast<double>(c.negatives) : 0.0;
  bound.fnr = c.positives > 0 ? static_cast<double>(c.falseNegatives) / static_cast<double>(c.positives) : 0.0;
  DPX_ASSIGN_OR_RETURN(bound.fprUpper, clopperPearsonUpper(c.falsePositives, c.negatives, rateConfidence));
  DPX_ASSIGN_OR_RETURN(bound.fnrUpper, clopperPearsonUpper(c.falseNegatives, c.positives, rateConfidence));
  bound.epsilon = epsilonFromErrorRates(bound.fprUpper, bound.fnrUpper, delta);
  return bound;
}

}  // namespace

Result<std::vector<SplitBound>> splitClopperPearsonAudit(std::span<const std::vector<double>> scoresPerAttack,
                                                         std::span<const std::uint8_t> members,
                                                         std::span<const std::uint8_t> selectionHalf, double delta,
                                                         double confidence) {
  DPX_RETURN_IF_ERROR(validateConfidence(confidence));
  DPX_RETURN_IF_ERROR(validateScores(scoresPerAttack, members));
  if (selectionHalf.size() != members.size()) {
    return Status::invalidArgument("the selection/evaluation split does not cover the audited records");
  }
  const double attackConfidence = 1.0 - (1.0 - confidence) / static_cast<double>(scoresPerAttack.size());
  const double rateConfidence = 1.0 - (1.0 - attackConfidence) / 2.0;
  std::vector<SplitBound> bounds;
  for (const std::vector<double>& scores : scoresPerAttack) {
    DPX_ASSIGN_OR_RETURN(const double threshold,
                         selectThreshold(scores, members, selectionHalf, delta, rateConfidence));
    const Counts c = evaluationCounts(scores, members, selectionHalf, threshold);
    DPX_ASSIGN_OR_RETURN(SplitBound bound, evaluatedBound(c, threshold, delta, rateConfidence));
    bounds.push_back(bound);
  }
  return bounds;
}

}  // namespace dpx::core::audit
