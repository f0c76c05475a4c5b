// The audit report as `dpx audit --json` keys and as text for people. Apart from the attacks and
// the verdicts: the JSON keys are a contract with scripts and the UI, and change for other reasons
// than the statistics behind them.
#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "audit/membership_inference.h"
#include "common/format.h"
#include "training/mechanism.h"

namespace dpx::core::audit {
namespace {

using namespace training;

void writePairs(JsonWriter& json, std::string_view key, const std::vector<RocPoint>& points, bool tradeoff) {
  json.key(key).beginArray();
  for (const RocPoint& p : points) {
    json.beginArray().value(p.fpr).value(tradeoff ? 1.0 - p.tpr : p.tpr).endArray();
  }
  json.endArray();
}

void writeTprAtFpr(JsonWriter& json, const AttackReport& a) {
  json.key("tpr_at_fpr").beginObject().field("0.001", a.tprAtFpr1e3).field("0.01", a.tprAtFpr1e2).endObject();
}

// One element of `attacks`: the attack, its thinned ROC and both ε estimates in detail.
void writeAttack(JsonWriter& json, const AttackReport& a) {
  json.beginObject().field("id", a.id).field("name", a.name).field("citation", a.citation);
  json.field("auc", a.auc);
  writeTprAtFpr(json, a);
  const std::vector<RocPoint> roc = thinRoc(a.roc);
  writePairs(json, "roc", roc, false);
  writePairs(json, "tradeoff", roc, true);
  json.key("one_run").beginObject().field("epsilon", a.oneRun.epsilon).field("k_plus", a.oneRun.rule.kPlus);
  json.field("k_minus", a.oneRun.rule.kMinus).field("guesses", a.oneRun.guesses).field("correct", a.oneRun.correct);
  json.field("examples", a.oneRun.examples).field("tests", a.oneRun.tests);
  json.field("test_confidence", a.oneRun.testConfidence).endObject();
  json.key("split_cp").beginObject().field("epsilon", a.split.epsilon).field("threshold", a.split.threshold);
  json.field("fpr", a.split.fpr).field("fnr", a.split.fnr).field("fpr_upper", a.split.fprUpper);
  json.field("fnr_upper", a.split.fnrUpper).field("positives", a.split.positives);
  json.field("negatives", a.split.negatives).endObject();
  json.endObject();
}

// `rmia`: its headline numbers and how it ran; null when it did not (no population).
void writeRmia(JsonWriter& json, const AuditReport& report) {
  json.key("rmia");
  const auto rmia =
      std::find_if(report.attacks.begin(), report.attacks.end(), [](const AttackReport& a) { return a.id == "rmia"; });
  if (rmia == report.attacks.end()) {
    json.null();
    return;
  }
  json.beginObject().field("auc", rmia->auc);
  writeTprAtFpr(json, *rmia);
  json.field("gamma", report.rmia.gamma).field("offline_a", report.rmia.offlineA);
  json.field("offline_a_fitted", report.rmia.offlineAFitted);
  json.field("population", report.rmia.population).field("population_source", std::string("test split"));
  json.field("variant", std::string("online")).endObject();
}

// roc_band, mu_hat, mu_interval of the best attack; fdp_audit; the band flags.
void writeBandJson(JsonWriter& json, const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  json.key("roc_band").beginObject().field("method", best.band.method).field("confidence", best.band.confidence);
  json.key("points").beginArray();
  for (const RocBandPoint& p : best.band.points) {
    json.beginObject().field("fpr", p.fpr).field("fpr_lower", p.fprLower).field("fpr_upper", p.fprUpper);
    json.field("tpr", p.tpr).field("tpr_lower", p.tprLower).field("tpr_upper", p.tprUpper).endObject();
  }
  json.endArray().endObject();
  json.key("mu_hat");
  if (best.gaussianFit) {
    json.value(best.gaussianFit->muHat);
    json.key("mu_interval").beginArray().value(best.gaussianFit->muLower).value(best.gaussianFit->muUpper).endArray();
  } else {
    json.null();
    json.key("mu_interval").null();
  }
  json.key("fdp_audit");
  if (report.fdpAudit) {
    const FdpAuditResult& f = *report.fdpAudit;
    json.beginObject().field("rejected", f.rejected).field("confidence", f.confidence).field("family", f.family);
    json.field("p_value", f.pValue).field("mu_lower_bound", f.muLowerBound).field("method", f.method);
    json.field("examples", f.examples).field("guesses", f.guesses).field("correct", f.correct).endObject();
  } else {
    json.null();
  }
  json.field("band_contradiction", report.bandContradiction);
  json.key("band_flagged").beginArray();
  for (int j : report.bandCheck.flagged) json.value(j);
  json.endArray();
  json.field("proven_curve_source", report.provenCurveSource);
}

}  // namespace

void writeAuditJson(JsonWriter& json, const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  const std::vector<RocPoint> bestRoc = thinRoc(best.roc);
  const bool scores = report.source == AuditSource::kScores;
  json.field("source", std::string(scores ? "scores" : "training"));
  if (scores) json.field("verdict", report.verdict);
  json.field("attack", best.id);
  writePairs(json, "roc", bestRoc, false);
  json.field("auc", best.auc);
  writeTprAtFpr(json, best);
  writePairs(json, "tradeoff", bestRoc, true);
  json.field("epsilon_lower_bound", report.epsilonLowerBound);
  json.field("confidence", report.confidence);
  json.field("bound_method", report.boundMethod);
  json.field("epsilon_lower_bound_cp", report.epsilonLowerBoundCp);
  json.key("epsilon_upper_bound");
  if (report.epsilonUpperBound) {
    json.value(*report.epsilonUpperBound);
  } else {
    json.null();
  }
  json.field("upper_bound_accountant", report.accountant);
  json.key("accountant_epsilons").beginArray();
  for (const AccountantEpsilon& a : report.accountantEpsilons) {
    json.beginObject().field("accountant", a.accountant).field("epsilon", a.epsilon);
    json.field("bound", std::string(accounting::boundKindName(a.kind))).field("applicable", a.applicable).endObject();
  }
  json.endArray();
  json.field("contradiction", report.contradiction);
  json.field("message", report.message);
  json.field("pool_size", report.poolSize).field("canaries", report.canaries);
  json.field("audited_records", report.auditedRecords).field("audited_members", report.auditedMembers);
  json.field("target_records", report.targetRecords).field("shadow_models", report.shadowModels);
  json.field("audit_seconds", report.seconds);
  json.key("audit_notes").beginArray();
  for (const std::string& n : report.notes) json.value(n);
  json.endArray();
  json.key("attacks").beginArray();
  for (const AttackReport& a : report.attacks) writeAttack(json, a);
  json.endArray();
  writeRmia(json, report);
  writeBandJson(json, report);
}

namespace {

// The band, μ and f-DP audit lines of describeAudit.
void describeBand(std::ostringstream& out, const AuditReport& report) {
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  if (best.gaussianFit) {
    out << "Gaussian DP of " << best.id << ": μ ≈ " << formatNumber(best.gaussianFit->muHat, 4) << ", interval ["
        << formatNumber(best.gaussianFit->muLower, 4) << ", " << formatNumber(best.gaussianFit->muUpper, 4)
        << "] at confidence " << formatNumber(best.gaussianFit->confidence, 6) << " (" << best.band.points.size()
        << "-point ROC band)\n";
  }
  if (!report.provenCurve) return;
  const std::string curve = report.source == AuditSource::kScores ? "claimed" : "proven";
  out << "ROC bands against the " << curve << " curve (" << report.provenCurveSource
      << "): " << (report.bandContradiction ? "CROSSED" : "below it") << "\n";
  if (report.fdpAudit) {
    const FdpAuditResult& f = *report.fdpAudit;
    out << "one-run f-DP audit of the " << curve << " curve: " << (f.rejected ? "REJECTED" : "not rejected")
        << " (p = " << formatNumber(f.pValue, 4) << ", " << f.correct << "/" << f.guesses
        << " correct); Gaussian DP μ ≥ " << formatNumber(f.muLowerBound, 4) << " at confidence "
        << formatNumber(f.confidence) << "\n";
  }
}

}  // namespace

namespace {

// describeAudit of imported scores: no training run, a claimed guarantee and the verdict.
std::string describeScoreAudit(const AuditReport& report) {
  std::ostringstream out;
  out << "verdict: " << report.verdict << "\n";
  const AttackReport& a = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  out << "audit of imported scores: " << report.auditedRecords << " audited records ("
      << (report.canaries > 0 ? std::to_string(report.canaries) + " canaries" : std::string("every record")) << ", "
      << report.auditedMembers << " members)\n";
  out << "  AUC " << formatNumber(a.auc, 4) << ", TPR " << formatNumber(a.tprAtFpr1e3, 4) << " at FPR 0.001, "
      << formatNumber(a.tprAtFpr1e2, 4) << " at FPR 0.01; split Clopper-Pearson ε ≈ "
      << formatNumber(a.split.epsilon, 4) << "\n";
  out << "empirical ε ≥ " << formatNumber(report.epsilonLowerBound, 6) << " at δ = " << formatNumber(report.delta)
      << " (" << a.oneRun.correct << "/" << a.oneRun.guesses << " correct guesses, " << report.boundMethod << ")\n";
  out << "claimed ε ≤ " << formatNumber(report.epsilonUpperBound.value_or(0.0), 6) << " (" << report.accountant
      << ")\n";
  describeBand(out, report);
  for (const std::string& n : report.notes) out << "note: " << n << "\n";
  return out.str();
}

}  // namespace

std::string describeAudit(const AuditReport& report) {
  if (report.source == AuditSource::kScores) return describeScoreAudit(report);
  std::ostringstream out;
  if (report.contradiction) out << "!!! " << report.message << " !!!\n";
  const TrainingResult& t = report.training;
  out << "membership-inference audit of " << mechanismId(t.run.mechanism) << ": " << report.shadowModels
      << " shadow models, " << report.auditedRecords << " audited records ("
      << (report.canaries > 0 ? std::to_string(report.canaries) + " canaries" : std::string("the whole pool")) << ", "
      << report.auditedMembers << " members), " << formatNumber(report.seconds, 4) << " s\n";
  out << "target run: " << report.targetRecords << " records, test accuracy "
      << formatNumber(100 * t.finalTestAccuracy, 4) << "%, train " << formatNumber(100 * t.finalTrainAccuracy, 4)
      << "%\n";
  for (const AttackReport& a : report.attacks) {
    out << "  " << a.name << ": AUC " << formatNumber(a.auc, 4) << ", TPR " << formatNumber(a.tprAtFpr1e3, 4)
        << " at FPR 0.001, " << formatNumber(a.tprAtFpr1e2, 4) << " at FPR 0.01; one-run ε ≥ "
        << formatNumber(a.oneRun.epsilon, 4) << " (" << a.oneRun.correct << "/" << a.oneRun.guesses
        << " correct guesses), split Clopper-Pearson ε ≈ " << formatNumber(a.split.epsilon, 4) << "\n";
  }
  out << "empirical ε ≥ " << formatNumber(report.epsilonLowerBound, 6) << " at δ = " << formatNumber(report.delta)
      << " with confidence " << formatNumber(report.confidence) << " (" << report.boundMethod << ")\n";
  if (report.epsilonUpperBound) {
    out << "proven ε ≤ " << formatNumber(*report.epsilonUpperBound, 6) << " (" << report.accountant
        << "): " << (report.contradiction ? "CONTRADICTED" : "consistent with the audit") << "\n";
    for (const AccountantEpsilon& a : report.accountantEpsilons) {
      if (a.accountant == report.accountant) continue;
      out << "  " << a.accountant << ": ε " << (a.kind == accounting::BoundKind::kUpper ? "≤ " : "≈ ")
          << formatNumber(a.epsilon, 6) << " (" << accounting::boundKindName(a.kind)
          << (a.applicable ? "" : ", assumptions violated") << ")\n";
    }
  } else {
    out << "no proven upper bound (not private)\n";
  }
  describeBand(out, report);
  for (const std::string& n : report.notes) out << "note: " << n << "\n";
  return out.str();
}

}  // namespace dpx::core::audit
