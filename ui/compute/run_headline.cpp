#include "compute/run_headline.h"

#include <algorithm>
#include <cmath>

#include "accounting/deterministic_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/registry.h"
#include "training/mechanism.h"

namespace dpx::ui {

using core::accounting::BoundKind;

double maxTprAtFpr(double epsilon, double delta, double fpr) {
  const double viaEps = std::exp(epsilon) * fpr + delta;
  const double viaComplement = 1.0 - std::exp(-epsilon) * (1.0 - delta - fpr);
  return std::clamp(std::min(viaEps, viaComplement), fpr, 1.0);
}

namespace {

// Type II error of the curve at type I error `fpr` (linear between its points); nullopt when the
// curve does not reach it.
std::optional<double> typeTwoAt(const PlotCurve& curve, double fpr) {
  for (std::size_t i = 1; i < curve.x.size() && i < curve.y.size(); ++i) {
    const double x0 = curve.x[i - 1];
    const double x1 = curve.x[i];
    if (!(x0 <= fpr && fpr <= x1)) continue;
    if (x1 == x0) return std::min(curve.y[i - 1], curve.y[i]);
    const double t = (fpr - x0) / (x1 - x0);
    return curve.y[i - 1] + t * (curve.y[i] - curve.y[i - 1]);
  }
  return std::nullopt;
}

std::string notApplyingLine(const std::string& id, const std::vector<core::accounting::Violation>& violations) {
  return id + " — " + violations.front().text();
}

}  // namespace

bool analysesTheRun(const std::string& accountantId) {
  using core::training::Mechanism;
  for (const std::string_view id : core::training::accountantsFor(Mechanism::kDpSgd)) {
    if (id == accountantId) return true;
  }
  return accountantId == core::accounting::accountantOf<core::accounting::DeterministicAccountant>().id();
}

std::optional<RunHeadline> runHeadline(const AnalyticsSnapshot& analytics, const PldSnapshot* pld) {
  std::optional<RunHeadline> best;
  RunHeadline all;
  for (const AccountantSummary& row : analytics.accountants) {
    if (!analysesTheRun(row.id)) continue;
    if (!row.violations.empty()) {
      all.notApplying.push_back(notApplyingLine(row.id, row.violations));
      continue;
    }
    if (row.bound != BoundKind::kUpper || !row.epsilon || !std::isfinite(row.epsilon->epsilon)) continue;
    ++all.applicable;
    if (best && best->epsilon <= row.epsilon->epsilon) continue;
    best = RunHeadline{};
    best->accountantId = row.id;
    best->accountantName = row.name;
    best->citation = row.citation;
    best->epsilon = row.epsilon->epsilon;
    best->delta = row.epsilon->delta;
  }
  const auto& exactAccountant = core::accounting::accountantOf<core::accounting::PldAccountant>();
  const bool pldCurrent = pld && pld->params == analytics.params && pld->error.empty() && pld->epsilon;
  if (pldCurrent) {
    const std::vector<core::accounting::Violation> violations = exactAccountant.check(analytics.params);
    if (!violations.empty()) {
      all.notApplying.push_back(notApplyingLine(exactAccountant.info().id, violations));
    } else {
      ++all.applicable;
      const double upper = pld->epsilon->epsilonUpper.value_or(pld->epsilon->epsilon);
      if (std::isfinite(upper) && (!best || upper <= best->epsilon)) {
        best = RunHeadline{};
        best->accountantId = exactAccountant.info().id;
        best->accountantName = exactAccountant.info().name;
        best->citation = exactAccountant.info().citation;
        best->epsilon = upper;
        best->delta = pld->epsilon->delta;
        best->exact = true;
      }
    }
  }
  // Random allocation, computed beside the Poisson bracket for a run that batches without Poisson
  // sampling: the bound of balls-in-bins batches (the upper end of its bracket).
  const AccountantSummary* allocation = pld && pld->params == analytics.params ? &pld->randomAllocation : nullptr;
  if (allocation && allocation->epsilon &&
      allocation->id == core::accounting::accountantOf<core::accounting::RandomAllocationAccountant>().id()) {
    if (!allocation->violations.empty()) {
      all.notApplying.push_back(notApplyingLine(allocation->id, allocation->violations));
    } else {
      ++all.applicable;
      const double upper = allocation->epsilon->epsilonUpper.value_or(allocation->epsilon->epsilon);
      if (std::isfinite(upper) && (!best || upper < best->epsilon)) {
        best = RunHeadline{};
        best->accountantId = allocation->id;
        best->accountantName = allocation->name + ", its bracket's upper end";
        best->citation = allocation->citation;
        best->epsilon = upper;
        best->delta = allocation->epsilon->delta;
      }
    }
  }
  if (!best) return std::nullopt;
  best->tprAtFpr = maxTprAtFpr(best->epsilon, best->delta, kHeadlineFpr);
  if (best->exact) {
    if (const std::optional<double> beta = typeTwoAt(pld->tradeoff, kHeadlineFpr)) {
      best->tprAtFpr = std::clamp(1.0 - *beta, kHeadlineFpr, 1.0);
      best->tprExact = true;
    }
  }
  best->applicable = all.applicable;
  best->sampler = std::string(core::samplingName(
      analytics.params.sampling.value_or(core::training::mechanismInfo(core::training::Mechanism::kDpSgd).sampling)));
  best->notApplying = std::move(all.notApplying);
  return best;
}

}  // namespace dpx::ui
