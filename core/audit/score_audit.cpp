// The audit of imported scores against a claimed guarantee (score_audit.h): the claim from a
// configuration, the statistics on runAudit's code path, and the one-line verdict.
#include "audit/score_audit.h"

#include <chrono>
#include <cmath>

#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "audit/membership_inference_detail.h"
#include "common/format.h"

namespace dpx::core::audit {
namespace {

// The three tests whose union is the verdict: one-run ε bound, ROC band, one-run f-DP audit.
constexpr int kVerdictTests = 3;
// The split halves of the Clopper–Pearson estimate: fixed, so an audit of a file is repeatable.
constexpr std::uint64_t kSplitSeed = 0;

std::string percent(double confidence) { return formatNumber(100.0 * confidence, 6) + " %"; }

// |members − m/2| beyond 3.29 standard deviations of Binomial(m, 1/2): a two-sided p below 1e−3.
bool implausibleForFairCoins(std::int64_t members, std::int64_t m) {
  const double z =
      std::abs(2.0 * static_cast<double>(members) - static_cast<double>(m)) / std::sqrt(static_cast<double>(m));
  return z > 3.29;
}

void addScoreNotes(AuditReport& report, const ImportedScores& scores) {
  std::vector<std::string>& notes = report.notes;
  const std::int64_t m = scores.audited();
  const std::int64_t members = report.auditedMembers;
  notes.push_back(std::to_string(scores.records) + " records read (" + scores.format + "); " +
                  (scores.canaries > 0
                       ? "the " + std::to_string(m) + " marked canary = 1 are audited"
                       : "all " + std::to_string(m) + " are audited (no canary column marks a subset)") +
                  ", " + std::to_string(members) + " of them members");
  notes.push_back("verdict: the union of " + std::to_string(kVerdictTests) +
                  " tests (one-run ε lower bound, ROC band, one-run f-DP audit), each at confidence " +
                  formatNumber(report.testConfidence(), 6) + " (Bonferroni), so it holds at " +
                  formatNumber(report.confidence));
  notes.push_back(
      "the one-run tests (Steinke, Nasr & Jagielski 2023; Mahloujifar, Melis & Chaudhuri 2025) are valid when "
      "each audited record was included in training independently with probability 1/2 and scored without "
      "knowledge of those coins");
  if (implausibleForFairCoins(members, m)) {
    notes.push_back("the audited records are " + std::to_string(members) + " members of " + std::to_string(m) +
                    ": not plausible for fair coins (two-sided p < 0.001), so membership was not decided by "
                    "independent coins of probability 1/2 and the one-run tests' guarantees do not apply as "
                    "stated; mark coin-flipped records with the canary column");
  }
  notes.push_back(
      "epsilon_lower_bound_cp: Clopper-Pearson on a held-out half with the threshold chosen on the other half; "
      "an estimate, not part of the verdict");
}

// The band's first flagged point: where the conservative corner crosses the claimed ROC.
std::string bandFinding(const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  const std::vector<int>& flagged = report.bandCheck.flagged;
  if (flagged.empty()) return "the ROC band lies above the claimed trade-off curve";
  const RocBandPoint& p = best.band.points.at(static_cast<std::size_t>(flagged.front()));
  return "the ROC band's lower edge crosses the claimed trade-off curve at FPR " + formatNumber(p.fprUpper, 4) +
         " (TPR ≥ " + formatNumber(p.tprLower, 4) + " where the claim allows at most " +
         formatNumber(1.0 - tradeoffBelow(*report.provenCurve, p.fprUpper), 4) + "; " + std::to_string(flagged.size()) +
         " of " + std::to_string(best.band.points.size()) + " band points)";
}

std::string verdictOf(const AuditReport& report) {
  const double claimed = report.epsilonUpperBound.value_or(0.0);
  const std::string claim = "the claimed ε = " + formatNumber(claimed, 6) + " (δ = " + formatNumber(report.delta) + ")";
  std::vector<std::string> findings;
  if (report.bandContradiction) findings.push_back(bandFinding(report));
  if (report.epsilonLowerBound > claimed) {
    findings.push_back("the one-run lower bound ε ≥ " + formatNumber(report.epsilonLowerBound, 4) + " > " +
                       formatNumber(claimed, 6));
  }
  if (report.fdpAudit && report.fdpAudit->rejected) {
    findings.push_back(
        "the one-run f-DP audit rejects the claimed curve (p = " + formatNumber(report.fdpAudit->pValue, 4) + ")");
  }
  if (findings.empty()) {
    std::string text = "consistent with " + claim + ": no test rejects it at " + percent(report.confidence) +
                       " (one-run ε ≥ " + formatNumber(report.epsilonLowerBound, 4);
    if (report.fdpAudit) text += "; f-DP audit p = " + formatNumber(report.fdpAudit->pValue, 4);
    return text + "; ROC band below the claimed curve)";
  }
  std::string text = "contradicts " + claim + " at " + percent(report.confidence) + ": ";
  for (std::size_t i = 0; i < findings.size(); ++i) text += (i == 0 ? "" : "; ") + findings[i];
  return text;
}

}  // namespace

Result<ClaimedGuarantee> claimOfConfiguration(const Params& params, const accounting::EpsilonOptions& options,
                                              const std::string& origin) {
  const accounting::Accountant& pld = accounting::accountantOf<accounting::PldAccountant>();
  if (Status s = params.validate(); !s.isOk()) return s;
  const std::vector<accounting::Violation> violations = pld.check(params);
  if (!violations.empty()) {
    std::string reasons;
    for (const accounting::Violation& v : violations) reasons += (reasons.empty() ? "" : "; ") + v.text();
    return Status::invalidArgument("the claimed configuration is outside the assumptions of " + std::string(pld.id()) +
                                   " (the exact DP-SGD composition the claim is read with): " + reasons);
  }
  ClaimedGuarantee claim;
  DPX_ASSIGN_OR_RETURN(const accounting::EpsilonResult e, pld.epsilon(params, options));
  const std::vector<double> grid = accounting::defaultTypeOneGrid(kProvenCurvePoints);
  DPX_ASSIGN_OR_RETURN(claim.curve, pld.tradeoff(params, grid, options));
  if (claim.curve.typeTwo.size() != grid.size()) {
    return Status::numericalIssue("the claimed trade-off curve has " + std::to_string(claim.curve.typeTwo.size()) +
                                  " points for a grid of " + std::to_string(grid.size()) + " (internal error)");
  }
  claim.epsilon = e.epsilon;
  claim.delta = params.delta;
  claim.accountant = std::string(pld.id());
  claim.source = std::string(pld.id()) +
                 " (pessimistic exact composition, add and remove neighbours) of n = " + std::to_string(params.n) +
                 ", m = " + std::to_string(params.m) + " (q = " + formatNumber(params.q()) +
                 "), σ = " + formatNumber(params.sigma) + ", K = " + std::to_string(params.K) + ", from " + origin;
  return claim;
}

Result<ClaimedGuarantee> claimOfPhases(std::span<const accounting::Phase> phases, double delta,
                                       const accounting::EpsilonOptions& options, const std::string& origin) {
  DPX_ASSIGN_OR_RETURN(const accounting::PldRunResult run, accounting::phasedPldRun(phases, delta, options.exact));
  DPX_ASSIGN_OR_RETURN(const accounting::EpsilonResult e, accounting::pldEpsilonOf(run, delta, options.exact));
  ClaimedGuarantee claim;
  const std::vector<double> grid = accounting::defaultTypeOneGrid(kProvenCurvePoints);
  DPX_ASSIGN_OR_RETURN(claim.curve, accounting::pessimisticTradeoffOf(*run.run, grid));
  claim.epsilon = e.epsilon;
  claim.delta = delta;
  claim.accountant = std::string(accounting::accountantOf<accounting::PldAccountant>().id());
  std::string described;
  for (const accounting::Phase& phase : phases) {
    described += (described.empty() ? "" : "; ") + accounting::phaseDescription(phase);
  }
  claim.source = claim.accountant + " (pessimistic exact composition, add and remove neighbours) of the phases " +
                 described + ", from " + origin;
  return claim;
}

Result<AuditReport> auditScores(const ImportedScores& scores, const ClaimedGuarantee& claim, double confidence) {
  try {
    const auto start = std::chrono::steady_clock::now();
    if (!(confidence >= 0.5 && confidence < 1.0)) {
      return Status::invalidArgument("confidence = " + formatNumber(confidence) +
                                     " is out of range: --confidence must be in [0.5, 1)");
    }
    if (scores.scores.size() != scores.members.size()) {
      return Status::invalidArgument("scores: " + std::to_string(scores.scores.size()) + " scores for " +
                                     std::to_string(scores.members.size()) + " membership flags");
    }
    if (!(claim.epsilon >= 0.0) || !std::isfinite(claim.epsilon) || !(claim.delta >= 0.0 && claim.delta < 1.0) ||
        claim.curve.typeOne.empty() || claim.curve.typeOne.size() != claim.curve.typeTwo.size()) {
      return Status::invalidArgument("the claimed guarantee needs a finite ε ≥ 0, δ in [0, 1) and a trade-off curve");
    }
    AuditReport report;
    report.source = AuditSource::kScores;
    report.confidence = confidence;
    report.verdictTests = kVerdictTests;
    report.delta = claim.delta;
    report.epsilonUpperBound = claim.epsilon;
    report.accountant = claim.accountant;
    report.accountantEpsilons = {{claim.accountant, claim.epsilon, accounting::BoundKind::kUpper, true}};
    report.poolSize = scores.records;
    report.canaries = scores.canaries;
    report.auditedRecords = scores.audited();
    report.auditedMembers = scores.auditedMembers();
    report.targetRecords = report.auditedMembers;
    report.shadowModels = 0;
    report.rmia.population = 0;

    detail::AttackScores scored;
    scored.members = scores.members;
    scored.scores = {scores.scores};
    const std::vector<detail::AttackIdentity> identities = {
        {"scores", "imported scores", "the attack that computed the file's scores"}};
    DPX_RETURN_IF_ERROR(detail::addAttacks(report, identities, std::move(scored), kSplitSeed));
    addScoreNotes(report, scores);
    report.provenCurve = claim.curve;
    report.provenCurveSource = claim.source;
    report.notes.push_back("claimed trade-off curve: " + claim.source);
    checkAgainstCurve(report, scores.members);
    flagContradiction(report);
    report.verdict = verdictOf(report);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("audit of the scores failed: ") + e.what());
  }
}

}  // namespace dpx::core::audit
