// Calibration to attack risk (Kulynych, Gomez, Kaissis, du Pin Calmon & Troncoso 2024,
// "Attack-aware noise calibration for differential privacy", NeurIPS): instead of a target
// ε, choose the noise so that no membership-inference attack on the run exceeds a target true
// positive rate at a chosen false positive rate, or a target advantage max (TPR − FPR).
//
// An attack that decides "member" with false positive rate x (type I error under the neighbour
// without the record) has TPR = 1 − y, where y is its type II error, so TPR ≤ 1 − f(x) for the
// run's trade-off function f (Dong, Roth & Su 2019). We read f from the exact PLD of the
// run (pld_accountant.h) as the envelope of the (ε, δ(ε)) trade-offs over ε ≥ 0
// (Dong, Roth & Su 2019, Prop. 2.12):
//   f(x) = max{0, sup_ε [1 − δ(ε) − e^ε x], sup_ε e^{−ε}[1 − δ(ε) − x]}.
// With the pessimistic profile δ (an upper bound on the true one) f is a lower bound on the true
// curve, so 1 − f(x) is an upper bound on every attack's TPR: the conservative side, as in
// ε-calibration. The advantage is max_x (1 − x − f(x)) = δ(0), the total variation between the
// neighbouring outputs (Kairouz, Oh & Viswanath 2015): the ε = 0 line of the envelope,
// 1 − δ(0) − x, touches f (checked numerically in the tests).
//
// f is evaluated exactly at x, not interpolated: between grid losses each direction's δ is
// affine in e^ε, so each term of the envelope is concave in e^ε (resp. e^{−ε}) and its supremum
// is found by a binary search over the loss grid plus the crossing of the two directions' δ in
// the final interval (risk_calibration.cpp).
#pragma once

#include <optional>

#include "accounting/accountant.h"
#include "accounting/privacy_loss_distribution.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::core::accounting {

// f(x) of the composed run, from its pessimistic profile (a lower bound on the true trade-off)
// or its optimistic one (an estimate on or above it). x in [0, 1]; the answer is in [0, 1 − x].
double pldTradeoffAt(const pld::ComposedRun& run, bool pessimistic, double typeOne);

// The attack risk of a run at a false positive rate.
struct AttackRisk {
  double fpr = 0.0;
  double tpr = 0.0;            // 1 − f_pess(fpr): no attack at this FPR has a higher TPR
  double tprOptimistic = 0.0;  // 1 − f_opt(fpr): the PLD bracket's other end (an estimate)
  double advantage = 0.0;      // max_x (1 − x − f_pess(x)) = δ_pess(0)
  double epsilon = 0.0;        // pessimistic PLD ε at params.delta
};

// Risk of params' run (DP-SGD, Poisson rate q = m/n, K steps, noise σ) at FPR fpr in (0, 1).
Result<AttackRisk> attackRisk(const Params& params, double fpr, const ExactOptions& options = {});

// The FPR at which the advantage of the pessimistic curve is attained, with its risk.
Result<AttackRisk> advantageRisk(const Params& params, const ExactOptions& options = {});

// What the attacker may achieve at most.
struct RiskTarget {
  enum class Kind { kTprAtFpr, kAdvantage };
  Kind kind = Kind::kTprAtFpr;
  double tpr = 0.0;        // kTprAtFpr: TPR in (0, 1], not below fpr
  double fpr = 0.0;        // kTprAtFpr: FPR in (0, 1)
  double advantage = 0.0;  // kAdvantage: in [0, 1)

  static RiskTarget tprAt(double tpr, double fpr) { return {Kind::kTprAtFpr, tpr, fpr, 0.0}; }
  static RiskTarget maxAdvantage(double advantage) { return {Kind::kAdvantage, 0.0, 0.0, advantage}; }
  // A target that no trade-off curve can meet, or that is not a probability, is refused here.
  Status validate() const;
  std::string describe() const;  // "TPR ≤ 0.1 at FPR 0.01", "advantage ≤ 0.05"
};

struct RiskCalibration {
  double sigma = 0.0;         // noise multiplier: the target holds on the pessimistic curve
  double tpr = 0.0;           // pessimistic TPR at fpr
  double fpr = 0.0;           // the target's FPR, or where the advantage is attained
  double advantage = 0.0;     // δ_pess(0) at sigma
  double epsilon = 0.0;       // pessimistic PLD ε at params.delta at sigma
  bool atLowerLimit = false;  // met even at the smallest σ of the knob's range: privacy does not limit σ
};

// The smallest σ in the knob's range [0.05, 100] whose pessimistic PLD curve meets the target: a
// bracket by halving/doubling from σ = 1 (σ = 0.05, the costliest PLD, is composed only when the
// answer may lie below 0.1), then TOMS 748 on log σ. The value returned is the private end of the
// final bracket, re-checked: the measure is never above the target and normally within 1e−4 (or
// 1 % of the distance to a perfectly private run) below it — further only where the automatic
// loss grid Δ changes between neighbouring σ and the pessimistic curve steps by up to the PLD
// bracket's width. atLowerLimit when σ = 0.05 already meets it. Fails (NotApplicable) naming the
// target and the risk at σ = 100 when even that is not private enough; cancellation
// (options.cancel) returns a Cancelled status; progress goes to options.progress.
Result<RiskCalibration> calibrateSigmaToRisk(const Params& params, const RiskTarget& target,
                                             const ExactOptions& options = {});

}  // namespace dpx::core::accounting
