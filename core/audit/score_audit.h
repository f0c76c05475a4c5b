// Audit of a model trained elsewhere: membership scores from a file (score_import.h) against the
// guarantee claimed for the run that produced them. The statistics are runAudit's, on one code
// path (membership_inference_detail.h): the ROC with its simultaneous confidence band, checked
// against the claimed trade-off curve; the Gaussian-DP μ read from the band (Nasr, Hayes, Steinke,
// Balle, Tramèr, Jagielski, Carlini & Terzis 2023); the one-run ε lower bound (Steinke, Nasr &
// Jagielski 2023, Thm 3.1) compared with the claimed ε; and the one-run f-DP audit of the claimed
// curve (Mahloujifar, Melis & Chaudhuri 2025).
//
// The verdict is the union of the three tests: the claim is contradicted when the band's
// conservative corner lies above the claimed ROC, or the one-run bound exceeds the claimed ε, or
// the f-DP audit rejects the claimed curve. Each test runs at 1 − (1 − c)/3 (Bonferroni), so the
// verdict "contradicts it at c" holds with probability at least c under the claim.
//
// What the tests assume of the scores. The one-run tests need each audited record to have been
// included in training independently with probability 1/2 (fair coins), the score computed by a
// guesser that does not know the coins; the canary column of a scores file marks such records. The
// band is exact when the audited records are independent trials (one training run each); scored
// on one shared model they are not, and the band is then a diagnostic. Members and non-members
// drawn differently (a training set against a held-out set from another distribution) break both:
// the report's notes say so when the share of members is implausible for fair coins.
#pragma once

#include <string>

#include "accounting/accountant.h"
#include "accounting/phased_run.h"
#include "audit/membership_inference.h"
#include "audit/score_import.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::core::audit {

// What the run that produced the scores claims: a trade-off curve proven for it, and its ε at δ.
// Built from a configuration by claimOfConfiguration; another source of claims (a dp_accounting
// event list, say) fills the same struct with the curve and ε of its own accountant.
struct ClaimedGuarantee {
  accounting::TradeoffCurve curve;  // on defaultTypeOneGrid(kProvenCurvePoints); pessimistic
  double epsilon = 0.0;             // ε at `delta`, an upper bound
  double delta = 0.0;
  std::string accountant;  // id of the accountant that proves both
  std::string source;      // for people: "pld (…) of n = …, q = …, σ = …, K = …, from knobs"
};

// The configuration read as DP-SGD (Poisson sampling, add/remove, every iterate released): the
// exact composition's pessimistic trade-off curve and its ε upper bound at params.delta, with
// options.exact's discretisation, accuracy, progress and cancellation. `origin` says where the
// configuration came from ("knobs", "statement FILE") and ends the source text. Refused when the
// configuration is invalid or breaks the exact accountant's assumptions (the violations named).
Result<ClaimedGuarantee> claimOfConfiguration(const Params& params, const accounting::EpsilonOptions& options,
                                              const std::string& origin);

// A run in phases (a dp_accounting DpEvent's, io/dp_event.h) read with the exact composition:
// its pessimistic trade-off envelope and ε upper bound at `delta`. Refused as phasedPldRun
// refuses the phases (a random-allocation phase mixed with others, by name).
Result<ClaimedGuarantee> claimOfPhases(std::span<const accounting::Phase> phases, double delta,
                                       const accounting::EpsilonOptions& options, const std::string& origin);

// The audit of `scores` against `claim`; confidence in [0.5, 1) is the verdict's (family-wise).
// The report has source kScores, one attack ("scores"), no training run, provenCurve = the claimed
// curve, epsilonUpperBound = the claimed ε, and `verdict`. Deterministic (the split halves of the
// Clopper–Pearson estimate come from a fixed seed).
Result<AuditReport> auditScores(const ImportedScores& scores, const ClaimedGuarantee& claim, double confidence);

}  // namespace dpx::core::audit
