#include "compute/auditor_analytics.h"

#include <chrono>

#include "accounting/gdp_accountant.h"
#include "accounting/heuristic_last_iterate_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/privacy_profile.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "accounting/threat_model_ladder.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "compute/slow_analytics.h"

namespace dpx::ui {

using namespace core::accounting;

namespace {

PlotCurve curveOf(std::string id, std::string accountant, std::string label, const TradeoffCurve& curve) {
  PlotCurve c;
  c.id = std::move(id);
  c.accountant = std::move(accountant);
  c.label = std::move(label);
  c.x = curve.typeOne;
  c.y = curve.typeTwo;
  return c;
}

// Greys a curve whose accountant does not cover the run and says why.
void markApplicability(PlotCurve& c, const Accountant& accountant, const core::Params& params) {
  const std::vector<Violation> violations = accountant.check(params);
  if (violations.empty()) return;
  c.greyed = true;
  c.tooltip = violationsText(violations);
}

void addIdentity(const std::vector<double>& grid, AuditorSnapshot& s) {
  PlotCurve identity;
  identity.id = "identity";
  identity.label = "perfect privacy (1 − x)";
  identity.dashed = true;
  identity.tooltip = "random guessing: no test does better";
  for (double x : grid) {
    identity.x.push_back(x);
    identity.y.push_back(1.0 - x);
  }
  s.plane.push_back(std::move(identity));
}

// G_μ of the CLT, the f_{ε,δ} envelope of the RDP conversion and the RDP-optimal envelope.
void addAnalyticCurves(const core::Params& params, const EpsilonOptions& options, const std::vector<double>& grid,
                       AuditorSnapshot& s) {
  const GdpAccountant& gdp = accountantOf<GdpAccountant>();
  if (auto curve = gdp.tradeoff(params, grid, options)) {
    const std::string& id = gdp.info().id;
    PlotCurve c = curveOf(id, id, "G(μ) (" + id + ", CLT estimate)", *curve);
    c.tooltip = "Bu, Dong, Long & Su 2020, Thm 5: the central-limit Gaussian trade-off (an estimate, not a bound)";
    markApplicability(c, gdp, params);
    s.plane.push_back(std::move(c));
  }
  const RdpAccountant& rdp = accountantOf<RdpAccountant>();
  const std::string& rdpId = rdp.info().id;
  if (auto curve = rdp.tradeoff(params, grid, options)) {
    PlotCurve c = curveOf(rdpId + ":fed", rdpId, rdpId + ": f(ε,δ) over δ", *curve);
    c.dashed = true;
    c.tooltip = "the pointwise maximum over δ of f(ε(δ),δ), ε(δ) from the moments accountant's conversion";
    markApplicability(c, rdp, params);
    s.plane.push_back(std::move(c));
  }
  EpsilonOptions allOrders = options;
  allOrders.fixedAlpha.reset();
  if (auto curve = renyiTradeoffCurve(rdp, params, grid, allOrders)) {
    PlotCurve c = curveOf(rdpId + ":envelope", rdpId, rdpId + ": optimal envelope over α", *curve);
    c.tooltip =
        "max over all orders of what ε(α) certifies (Balle et al. 2020; Bu, Dong, Long & Su 2020, Fig. 3): the "
        "tightest curve Rényi DP alone gives";
    markApplicability(c, rdp, params);
    s.plane.push_back(std::move(c));
  }
}

// The exact PLD trade-off of each direction: the pessimistic curve (a proven lower bound on
// every test's type II error) drawn, the optimistic one as the far edge of its bracket.
void addPldDirections(const core::Params& params, const EpsilonOptions& options, const std::vector<double>& grid,
                      AuditorSnapshot& s) {
  const PldAccountant& pld = accountantOf<PldAccountant>();
  const std::string& pldId = pld.info().id;
  const core::Result<DirectionalTradeoffs> curves = pld.directionalTradeoffs(params, grid, options);
  if (!curves) {
    if (curves.status().code() != core::StatusCode::kCancelled) {
      s.error = "exact PLD trade-off: " + curves.status().message();
    }
    return;
  }
  const std::vector<Violation> violations = pld.check(params);
  struct Direction {
    std::string id;
    const char* label;
    const char* tooltip;
    const TradeoffCurve* pessimistic;
    const TradeoffCurve* optimistic;
    bool dashed;
  };
  const Direction directions[2] = {
      {pldId + ":add", "exact PLD, add (attack's direction)",
       "T(M(D), M(D ∪ {z})): x is the FPR of the test “is z in the training set?”, so a membership attack's "
       "(FPR, FNR) must lie on or above this curve. Pessimistic discretisation; the shaded band reaches the "
       "optimistic one — the true curve lies inside.",
       &curves->addPessimistic, &curves->addOptimistic, false},
      {pldId + ":remove", "exact PLD, remove",
       "T(M(D ∪ {z}), M(D)): the reverse test (the inverse function of the add curve). Pessimistic "
       "discretisation; the shaded band reaches the optimistic one.",
       &curves->removePessimistic, &curves->removeOptimistic, true},
  };
  for (const Direction& d : directions) {
    PlotCurve c = curveOf(d.id, pldId, d.label, *d.pessimistic);
    c.dashed = d.dashed;
    c.tooltip = violations.empty() ? d.tooltip : violationsText(violations);
    c.greyed = !violations.empty();
    s.plane.push_back(std::move(c));
    if (d.pessimistic->typeOne == d.optimistic->typeOne) {
      s.planeBrackets.push_back(
          {d.id + ":bracket", pldId, d.pessimistic->typeOne, d.pessimistic->typeTwo, d.optimistic->typeTwo});
    }
  }
}

void addProfiles(const core::Params& params, const EpsilonOptions& options, const std::atomic<bool>& cancel,
                 AuditorSnapshot& s) {
  core::accounting::pld::ComputeControl control;
  control.cancel = &cancel;
  const std::vector<double> grid = profileEpsilonGrid(params, kProfilePoints);
  const core::Result<std::vector<ProfileCurve>> profiles = privacyProfiles(params, grid, options, control);
  if (!profiles) {
    if (profiles.status().code() != core::StatusCode::kCancelled && s.error.empty()) {
      s.error = "privacy profile: " + profiles.status().message();
    }
    return;
  }
  for (const ProfileCurve& p : *profiles) {
    PlotCurve c;
    c.id = "profile:" + p.label;
    c.accountant = p.accountant;
    c.label = p.label;
    c.x = p.epsilon;
    c.y = p.delta;
    c.dashed = p.kind != BoundKind::kUpper;
    c.tooltip = std::string(boundKindName(p.kind)) + ": δ(ε) of " + p.accountant;
    if (const Accountant* a = findAccountant(p.accountant)) markApplicability(c, *a, params);
    s.profile.push_back(std::move(c));
  }
}

// The legend names the analysis and its threat model in a few words; the tooltip says the rest.
std::string ladderLegend(const LadderRung& r) {
  const std::string who = r.id == accountantOf<HeuristicLastIterateAccountant>().id() ? "heuristic" : r.id;
  if (r.rung == "composition") return who + ": all iterates";
  if (r.rung == "heuristic") return who + ": last, linear loss";
  return who + ": last iterate";
}

void addLadder(const core::Params& params, const EpsilonOptions& options, const std::atomic<bool>& cancel,
               AuditorSnapshot& s) {
  core::accounting::pld::ComputeControl control;
  control.cancel = &cancel;
  const std::vector<std::int64_t> steps = pldCurveSteps(params);
  const core::Result<std::vector<LadderRung>> rungs = threatModelLadder(params, steps, options, control);
  if (!rungs) {
    if (rungs.status().code() != core::StatusCode::kCancelled && s.error.empty()) {
      s.error = "threat-model ladder: " + rungs.status().message();
    }
    return;
  }
  for (const LadderRung& r : *rungs) {
    PlotCurve c;
    c.id = "ladder:" + r.id;
    c.accountant = r.id;
    c.label = ladderLegend(r);
    c.x = r.steps;
    c.y = r.epsilon;
    c.dashed = r.kind != BoundKind::kUpper;
    c.greyed = !r.applies;
    c.tooltip = r.label + " — assumes: " + r.assumes + (r.applies ? std::string() : "\nnot for this run: " + r.whyNot);
    s.ladder.push_back(std::move(c));
  }
}

}  // namespace

std::optional<AuditorSnapshot> computeAuditorPlane(const core::Params& params, Conversion conversion,
                                                   const std::atomic<bool>& cancel,
                                                   const std::function<void(double)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  AuditorSnapshot s;
  s.params = params;
  EpsilonOptions options;
  options.conversion = conversion;
  options.exact.cancel = &cancel;
  const std::vector<double> grid = defaultTypeOneGrid(kAuditorPlanePoints);
  addIdentity(grid, s);
  addAnalyticCurves(params, options, grid, s);
  if (progress) progress(0.1);
  addPldDirections(params, options, grid, s);
  if (cancel.load()) return std::nullopt;
  if (progress) progress(0.5);
  addProfiles(params, options, cancel, s);
  if (cancel.load()) return std::nullopt;
  if (progress) progress(0.7);
  addLadder(params, options, cancel, s);
  if (cancel.load()) return std::nullopt;
  if (progress) progress(1.0);
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace dpx::ui
