// The verdicts of the membership-inference audit: the ε lower bounds of the attacks, what every
// accountant proves of the run, the bands against the proven trade-off curve and the
// contradiction flag. Apart from the attacks and the game: the statistics that turn scores into a
// claim about the accountant, each rule testable on a report without training a model.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "audit/membership_inference.h"
#include "audit/membership_inference_detail.h"
#include "common/format.h"
#include "training/mechanism.h"
#include "training/rng.h"

namespace dpx::core::audit {

std::vector<AccountantEpsilon> accountantEpsilons(const training::TrainingResult& run) {
  std::vector<AccountantEpsilon> out;
  if (run.epsilon && !run.run.accountant.empty()) {
    const accounting::Accountant* own = accounting::findAccountant(run.run.accountant);
    out.push_back({run.run.accountant, *run.epsilon, own ? own->boundKind() : accounting::BoundKind::kUpper,
                   run.run.violations.empty()});
  }
  if (run.stepsDone <= 0) return out;
  Params p = run.run.accountantParams;
  p.K = run.stepsDone;
  for (std::string_view id : training::accountantsFor(run.run.mechanism)) {
    if (id == run.run.accountant) continue;
    const accounting::Accountant* a = accounting::findAccountant(id);
    if (!a) continue;
    // A composition that takes seconds (random allocation) is worth it only where it applies.
    if (!a->isAnalytic() && a->assumptions().sampling != p.sampling.value_or(a->assumptions().sampling)) continue;
    Result<accounting::EpsilonResult> e = a->epsilon(p);
    if (!e) continue;  // an analysis that cannot answer for this run proves nothing here
    out.push_back({std::string(id), e->epsilon, e->bound, a->check(p).empty()});
  }
  return out;
}

namespace {

using namespace training;

// The tightest proven trade-off of the run (see AuditReport::provenCurve); `source` says whose.
std::optional<accounting::TradeoffCurve> provenCurveOf(const AuditReport& report, std::string& source) {
  const TrainingResult& run = report.training;
  source = "none: " + std::string(mechanismId(run.run.mechanism)) + " is not private";
  if (run.run.mechanism == Mechanism::kSgd || run.stepsDone <= 0) return std::nullopt;
  Params p = run.run.accountantParams;
  p.K = run.stepsDone;
  const std::vector<double> grid = accounting::defaultTypeOneGrid(kProvenCurvePoints);
  const bool dpSgd = run.run.mechanism == Mechanism::kDpSgd;
  std::optional<accounting::TradeoffCurve> curve;
  std::string provers;
  for (const AccountantEpsilon& a : report.accountantEpsilons) {
    // DP-SGD's tightest curves are its compositions' (Poisson's PLD, or random allocation's for
    // balls-in-bins batches); whichever applies.
    if (a.kind != accounting::BoundKind::kUpper || !a.applicable ||
        (dpSgd && a.accountant != accounting::accountantOf<accounting::PldAccountant>().id() &&
         a.accountant != accounting::accountantOf<accounting::RandomAllocationAccountant>().id()))
      continue;
    const accounting::Accountant* accountant = accounting::findAccountant(a.accountant);
    if (!accountant) continue;
    Result<accounting::TradeoffCurve> c = accountant->tradeoff(p, grid);
    if (!c || c->typeTwo.size() != grid.size()) continue;  // no curve from it: it proves none here
    if (!curve) {
      curve = std::move(*c);
    } else {
      for (std::size_t k = 0; k < grid.size(); ++k) curve->typeTwo[k] = std::max(curve->typeTwo[k], c->typeTwo[k]);
    }
    provers += (provers.empty() ? "" : ", ") + a.accountant;
  }
  if (!curve) {
    source = dpSgd ? "none: neither the pld nor the random-allocation accountant gave a curve applicable to this run"
                   : "none: no applicable upper-bound accountant gives a trade-off curve for this run";
  } else if (dpSgd && provers == accounting::accountantOf<accounting::PldAccountant>().id()) {
    source = "pld (pessimistic exact composition, add and remove neighbours)";
  } else if (dpSgd && provers == accounting::accountantOf<accounting::RandomAllocationAccountant>().id()) {
    source = "random-allocation (pessimistic composition of balls-in-bins epochs, add and remove neighbours)";
  } else {
    source = "pointwise maximum of the curves of " + provers;
  }
  return curve;
}

// What a contradiction means: for a run trained here, a bug; for imported scores, that the run
// which produced them does not have the claimed guarantee (or the scores break the game's rules).
std::string contradictionCause(const AuditReport& report) {
  return report.source == AuditSource::kScores
             ? ": the run that produced these scores does not have the claimed guarantee"
             : ": the trainer or the accountant has a bug";
}

// Adds the band and f-DP contradictions to `contradiction` and the loud message.
void flagCurveContradiction(AuditReport& report) {
  const bool fdpRejected = report.fdpAudit && report.fdpAudit->rejected;
  if (!report.bandContradiction && !fdpRejected) return;
  std::string text = "CONTRADICTION: ";
  const bool scores = report.source == AuditSource::kScores;
  const std::string curve =
      scores ? "the trade-off curve claimed for the run" : "the trade-off curve proven for this run";
  if (report.bandContradiction && report.provenCurve) {
    std::string attacks;
    double gap = 0.0;
    for (const AttackReport& a : report.attacks) {
      const BandCheck check = checkBand(a.band, *report.provenCurve);
      if (check.flagged.empty()) continue;
      attacks += (attacks.empty() ? "" : ", ") + a.id;
      gap = std::max(gap, check.worstGap);
    }
    text += "the ROC band of " + attacks + " lies above " + curve + " (" + report.provenCurveSource + ") by up to " +
            formatNumber(gap, 6) + " in TPR";
  } else if (report.bandContradiction) {
    text += "an attack's ROC band lies above " + curve;
  }
  if (fdpRejected) {
    text += std::string(report.bandContradiction ? "; " : "") + "the one-run f-DP audit rejects " +
            (scores ? "the claimed curve" : "the proven curve") + " (p = " + formatNumber(report.fdpAudit->pValue, 6) +
            ", confidence " + formatNumber(report.fdpAudit->confidence) + ")";
  }
  text += contradictionCause(report);
  report.contradiction = true;
  report.message = report.message.empty() ? text : report.message + "; " + text;
}

}  // namespace

void flagContradiction(AuditReport& report) {
  // The tightest proven bound: the run's own ε and every applicable upper bound of the mechanism.
  std::optional<double> tightest = report.epsilonUpperBound;
  std::string prover = report.accountant.empty() ? std::string("the accountant") : report.accountant;
  for (const AccountantEpsilon& a : report.accountantEpsilons) {
    if (a.kind != accounting::BoundKind::kUpper || !a.applicable) continue;
    if (!tightest || a.epsilon < *tightest) {
      tightest = a.epsilon;
      prover = a.accountant;
    }
  }
  report.contradiction = tightest && report.epsilonLowerBound > *tightest;
  report.message.clear();
  if (report.contradiction) {
    report.message =
        "CONTRADICTION: the audit proves ε ≥ " + formatNumber(report.epsilonLowerBound, 6) + " (confidence " +
        formatNumber(report.confidence) + ", δ = " + formatNumber(report.delta) +
        "), above the ε = " + formatNumber(*tightest, 6) + " that " + prover +
        (report.source == AuditSource::kScores ? " proves for the claimed configuration" : " proved for this run") +
        contradictionCause(report);
  }
  flagCurveContradiction(report);
}

void addBandsAndFits(AuditReport& report, const std::vector<std::uint8_t>& members) {
  // Split over the attacks, so "some attack's band crosses the proven curve" keeps the confidence.
  const double bandConfidence =
      1.0 - (1.0 - report.testConfidence()) / static_cast<double>(std::max<std::size_t>(1, report.attacks.size()));
  for (AttackReport& attack : report.attacks) {
    attack.gaussianFit.reset();
    Result<RocBand> band = rocBand(attack.scores, members, bandConfidence);
    if (!band) {
      attack.band = RocBand{};
      attack.band.confidence = bandConfidence;
      attack.band.method = "no band: " + band.status().message();
      continue;
    }
    attack.band = std::move(*band);
    Result<GaussianDpFit> fit = fitGaussianDp(attack.band);
    if (fit) attack.gaussianFit = std::move(*fit);
  }
}

void checkAgainstProvenCurve(AuditReport& report, const std::vector<std::uint8_t>& members) {
  report.provenCurve = provenCurveOf(report, report.provenCurveSource);
  report.notes.push_back("proven trade-off curve: " + report.provenCurveSource);
  checkAgainstCurve(report, members);
}

void checkAgainstCurve(AuditReport& report, const std::vector<std::uint8_t>& members) {
  report.bandCheck = BandCheck{};
  report.bandContradiction = false;
  report.fdpAudit.reset();
  if (report.attacks.empty()) return;
  const AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  report.notes.push_back(
      "ROC band: " + (best.band.method.empty() ? std::string("none") : best.band.method) +
      " (each attack's band at confidence " + formatNumber(best.band.confidence, 6) +
      ", so the flag over all attacks holds at " + formatNumber(report.testConfidence(), 6) +
      (report.source == AuditSource::kScores
           ? "); the band is exact when every audited record is an independent trial (one training run each); "
             "records scored on one shared model are not, and then the band is a diagnostic and the one-run "
             "audits are the rigorous tests"
           : "); the audited records share one training run, so they are not independent trials: the band is a "
             "diagnostic, and the one-run f-DP audit is the rigorous test"));
  if (!report.provenCurve) return;
  for (std::size_t a = 0; a < report.attacks.size(); ++a) {
    BandCheck check = checkBand(report.attacks[a].band, *report.provenCurve);
    report.bandContradiction = report.bandContradiction || !check.flagged.empty();
    if (static_cast<int>(a) == report.bestAttack) report.bandCheck = std::move(check);
  }
  Result<FdpAuditResult> fdp = fdpAudit(best.scores, members, *report.provenCurve, report.testConfidence(),
                                        std::string(report.source == AuditSource::kScores ? "claimed" : "proven") +
                                            " curve (" + report.provenCurveSource + ")");
  if (fdp) {
    report.fdpAudit = std::move(*fdp);
  } else {
    report.notes.push_back("the one-run f-DP audit did not run: " + fdp.status().message());
  }
}

namespace detail {
namespace {

AttackReport attackReport(const AttackIdentity& identity, std::vector<double> scores,
                          const std::vector<std::uint8_t>& members) {
  AttackReport attack;
  attack.id = identity.id;
  attack.name = identity.name;
  attack.citation = identity.citation;
  attack.roc = rocCurve(scores, members);
  attack.auc = areaUnderCurve(attack.roc);
  attack.tprAtFpr1e3 = tprAtFpr(attack.roc, 1e-3);
  attack.tprAtFpr1e2 = tprAtFpr(attack.roc, 1e-2);
  attack.tradeoff = tradeoffPoints(attack.roc);
  attack.scores = std::move(scores);
  return attack;
}

}  // namespace

Status addAttacks(AuditReport& report, AttackScores scored, std::uint64_t seed) {
  static const AttackIdentity kAttacks[] = {
      {"loss-threshold", "loss threshold", "Yeom, Giacomelli, Fredrikson & Jha 2018"},
      {"lira", "likelihood ratio (LiRA, online)", "Carlini, Chien, Nasr, Song, Terzis & Tramèr 2022"},
      {"rmia", "RMIA (Zarifzadeh et al. 2024)", "Zarifzadeh, Liu & Shokri 2024"}};
  const std::vector<AttackIdentity> identities(std::begin(kAttacks),
                                               std::begin(kAttacks) + std::min<std::size_t>(3, scored.scores.size()));
  return addAttacks(report, identities, std::move(scored), seed);
}

Status addAttacks(AuditReport& report, const std::vector<AttackIdentity>& identities, AttackScores scored,
                  std::uint64_t seed) {
  if (identities.size() != scored.scores.size()) {
    return Status::invalidArgument("audit: " + std::to_string(scored.scores.size()) + " score lists for " +
                                   std::to_string(identities.size()) + " attacks (internal error)");
  }
  const std::vector<std::uint8_t>& members = scored.members;
  std::vector<std::uint8_t> selectionHalf(members.size());
  Xoshiro256 engine = streamFor(seed, Stream::kAudit, kSplitHalves);
  for (std::uint8_t& b : selectionHalf) b = coin(engine) ? 1 : 0;
  Result<std::vector<OneRunBound>> oneRun = oneRunAudit(scored.scores, members, report.delta, report.testConfidence());
  if (!oneRun) return oneRun.status().withContext("one-run ε lower bound");
  Result<std::vector<SplitBound>> split =
      splitClopperPearsonAudit(scored.scores, members, selectionHalf, report.delta, report.testConfidence());
  if (!split) return split.status().withContext("Clopper–Pearson ε estimate");
  for (std::size_t a = 0; a < scored.scores.size(); ++a) {
    AttackReport attack = attackReport(identities[a], std::move(scored.scores[a]), members);
    attack.oneRun = (*oneRun)[a];
    attack.split = (*split)[a];
    report.epsilonLowerBound = std::max(report.epsilonLowerBound, attack.oneRun.epsilon);
    report.epsilonLowerBoundCp = std::max(report.epsilonLowerBoundCp, attack.split.epsilon);
    report.attacks.push_back(std::move(attack));
  }
  report.bestAttack = 0;
  for (std::size_t a = 1; a < report.attacks.size(); ++a) {
    if (report.attacks[a].auc > report.attacks[static_cast<std::size_t>(report.bestAttack)].auc) {
      report.bestAttack = static_cast<int>(a);
    }
  }
  report.boundMethod = "one-run (Steinke, Nasr & Jagielski 2023, Thm 3.1), " +
                       std::to_string(report.attacks[0].oneRun.tests) + " tests (guess rules x attacks), Bonferroni";
  addBandsAndFits(report, members);
  return Status::ok();
}

namespace {

// How RMIA ran, or why it did not.
std::string rmiaNote(const AuditReport& report) {
  const RmiaRun& rmia = report.rmia;
  if (rmia.population == 0) {
    return "RMIA did not run: the test split is empty, and it needs a population of records no model trained on";
  }
  return "RMIA (Zarifzadeh, Liu & Shokri 2024), " + rmiaVariant(rmia.gamma, rmia.offlineA, rmia.offlineAFitted) +
         "; population: the " + std::to_string(rmia.population) + " test records, members of no model";
}

}  // namespace

void addNotes(AuditReport& report) {
  const OneRunBound& any = report.attacks[0].oneRun;
  const std::int64_t audited = report.auditedRecords;
  std::vector<std::string>& notes = report.notes;
  notes.push_back("each of the " + std::to_string(report.poolSize) +
                  " pooled records was included with probability 1/2: "
                  "the target trained on " +
                  std::to_string(report.targetRecords) + "; " + std::to_string(audited) + " audited (" +
                  (report.canaries > 0 ? "the canaries" : "the whole pool") + "), " +
                  std::to_string(report.auditedMembers) + " of them members");
  notes.push_back(rmiaNote(report));
  notes.push_back("one-run bound: m = " + std::to_string(audited) + " audited records, significance " +
                  formatNumber(1.0 - report.confidence) + " split over " + std::to_string(any.tests) +
                  " tests (each at confidence " + formatNumber(any.testConfidence, 6) + ")");
  notes.push_back(
      "epsilon_lower_bound_cp: Clopper-Pearson on a held-out half with the threshold chosen on the "
      "other half; the records share one training run, so they are not independent trials and this "
      "is an estimate, not a bound");
  if (audited == 0 || report.auditedMembers == 0 || report.auditedMembers == audited) {
    notes.push_back("all audited records fell on one side (IN or OUT): the ROC is degenerate; use more records");
  }
  if (!report.epsilonUpperBound) {
    notes.push_back(std::string(mechanismId(report.training.run.mechanism)) +
                    " is not private: there is no proven upper bound to compare with");
  }
  if (const accounting::Accountant* acc = accounting::findAccountant(report.accountant);
      acc && acc->assumptions().neighbouring == Neighbouring::kReplaceOne) {
    notes.push_back(report.accountant +
                    " proves ε for replace-one neighbours, while the audit's IN/OUT game adds "
                    "or removes records: the comparison is indicative, not a theorem");
  }
  if (!report.training.run.violations.empty()) {
    notes.push_back(
        "the target run violates assumptions of its accountant, so its ε may not be a valid upper "
        "bound (see violations)");
  }
}

}  // namespace detail
}  // namespace dpx::core::audit
