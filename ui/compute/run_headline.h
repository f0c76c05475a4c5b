// The Privacy tab's one answer first, for the run its knobs describe: DP-SGD (noise multiplier σ,
// batches of m, K steps) on its sampler. Of the analyses of DP-SGD (the mechanism's accountants,
// and Chua et al. 2024's fixed-order bound for batches that are not Poisson) whose assumptions
// hold — sampler, neighbouring relation, loss, optimiser — the smallest upper bound on ε at δ, the
// exact PLD bracket's upper end when it is the current knobs', and what that bound allows a membership
// attack: the largest true-positive rate at a 1 % false-positive rate (from the exact trade-off
// curve when the PLD bound wins, else from (ε, δ)-DP's, TPR ≤ min(1, e^ε·FPR + δ,
// 1 − e^−ε·(1 − δ − FPR)); Kairouz, Oh & Viswanath 2015). Lower bounds and estimates never make
// the headline. The analyses of DP-SGD that do not apply are listed with the assumption that
// fails; the other mechanisms' analyses (Langevin, cyclic, output perturbation, SG-MCMC) are the
// table's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compute/analytics.h"
#include "compute/slow_analytics.h"

namespace dpx::ui {

inline constexpr double kHeadlineFpr = 0.01;

struct RunHeadline {
  std::string accountantId;
  std::string accountantName;
  std::string citation;
  std::string sampler;  // "poisson", …: the run's batches
  double epsilon = 0.0;
  double delta = 0.0;
  bool exact = false;     // the exact PLD bracket's upper end
  double tprAtFpr = 0.0;  // the largest TPR at kHeadlineFpr the bound allows
  bool tprExact = false;  // read off the exact trade-off curve
  int applicable = 0;     // upper bounds that apply (the headline among them)
  // "rdp — sampling: …", one per analysis that does not apply, in the table's order.
  std::vector<std::string> notApplying;
};

// Whether `accountantId` analyses the run (DP-SGD on any sampler).
bool analysesTheRun(const std::string& accountantId);
// nullopt when no upper bound applies to the run. `pld` may be null, or of other knobs (ignored).
std::optional<RunHeadline> runHeadline(const AnalyticsSnapshot& analytics, const PldSnapshot* pld);

// The largest TPR at `fpr` any (ε, δ)-DP mechanism allows.
double maxTprAtFpr(double epsilon, double delta, double fpr);

}  // namespace dpx::ui
