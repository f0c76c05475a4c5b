#include "accounting/threat_model_ladder.h"

#include <algorithm>
#include <cmath>

#include "accounting/curves.h"
#include "accounting/cyclic_accountant.h"
#include "accounting/heuristic_last_iterate_accountant.h"
#include "accounting/output_perturbation_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// The loss convexity an analysis needs.
enum class Convexity { kNone, kWeak, kStrong };

// The registry's accountant A, as a rung names it.
template <class A>
const Accountant& rungAccountant() {
  return accountantOf<A>();
}

struct RungSpec {
  const Accountant& (*accountant)();
  const char* label;  // "@" stands for the accountant's id
  const char* rung;
  Convexity need;
  const char* analysis;  // what the analysis assumes beyond convexity, in words
};

constexpr RungSpec kRungs[] = {
    {&rungAccountant<RdpAccountant>, "composition, all iterates (@)", "composition", Convexity::kNone,
     "Poisson sampling at q = m/n, every iterate released, add/remove neighbours"},
    {&rungAccountant<PldAccountant>, "composition, all iterates (@, exact upper)", "composition", Convexity::kNone,
     "Poisson sampling at q = m/n, every iterate released, add/remove neighbours"},
    {&rungAccountant<SgldAccountant>, "last iterate, proven (@)", "last-iterate proven", Convexity::kStrong,
     "β-smooth loss, η < 1/β, uniform batches, Langevin noise, replace-one neighbours"},
    {&rungAccountant<CyclicAccountant>, "last iterate, proven (@)", "last-iterate proven", Convexity::kWeak,
     "upper curvature M, η ≤ 1/(M + w), cyclic batches, clipping never active (Thm 4.5), replace-one neighbours"},
    {&rungAccountant<OutputPerturbationAccountant>, "last iterate, proven (@)", "last-iterate proven",
     Convexity::kStrong,
     "β-smooth loss, contraction ρ < 1, noiseless permutation SGD plus output noise, replace-one neighbours"},
    {&rungAccountant<HeuristicLastIterateAccountant>, "last iterate, heuristic (linear losses)", "heuristic",
     Convexity::kNone, "linear per-example losses, Poisson sampling; an estimate — losses exist that leak more"},
};

// A rung's legend: its label with the accountant's id in place of "@".
std::string rungLabel(const RungSpec& spec, std::string_view id) {
  std::string label = spec.label;
  if (const std::size_t at = label.find('@'); at != std::string::npos) label.replace(at, 1, id);
  return label;
}

// Whether the softmax trainer (cross-entropy, convex and β-smooth; λ-strongly convex with L2
// λ > 0) has the convexity `need`, and that in words.
struct ConvexityVerdict {
  bool holds = true;
  std::string words;
};

ConvexityVerdict trainerConvexity(Convexity need, const Params& p) {
  const std::string lambda = "λ = " + formatNumber(p.lambda, 4);
  if (!p.convexLoss) {
    if (need == Convexity::kNone) return {true, "no convexity needed: holds for any model, a network too"};
    return {false, std::string(need == Convexity::kWeak ? "w-weakly convex" : "λ-strongly convex") +
                       ": does not hold — the model is a network, whose loss is not convex (non-convex model)"};
  }
  switch (need) {
    case Convexity::kNone:
      return {true, "no convexity needed: holds for the softmax trainer"};
    case Convexity::kWeak:
      return {true, "w-weakly convex (w = 0: convex): holds for the softmax trainer, whose loss is convex"};
    case Convexity::kStrong:
      if (p.lambda > 0.0) return {true, "λ-strongly convex: holds for the softmax trainer with L2, " + lambda};
      return {false, "λ-strongly convex: does not hold — the softmax trainer without L2 (λ = 0) is only convex"};
  }
  return {};
}

void setApplicability(const Accountant& accountant, const RungSpec& spec, const Params& params, LadderRung& rung) {
  const ConvexityVerdict convexity = trainerConvexity(spec.need, params);
  rung.assumes = convexity.words + "; " + spec.analysis;
  std::vector<std::string> reasons;
  if (!convexity.holds) {
    reasons.push_back(params.convexLoss ? "the softmax trainer without L2 (λ = 0) is not strongly convex"
                                        : "non-convex model: a network's loss is not convex");
  }
  for (const Violation& v : accountant.check(params)) {
    // The trainer's convexity verdict already says it.
    if (!convexity.holds && (v.assumption == "strong convexity" || v.assumption == "non-convex model")) continue;
    reasons.push_back(v.text());
  }
  rung.applies = reasons.empty();
  rung.whyNot.clear();
  for (const std::string& r : reasons) rung.whyNot += (rung.whyNot.empty() ? "" : "; ") + r;
}

Status validateSteps(std::span<const std::int64_t> steps) {
  if (steps.empty()) return Status::invalidArgument("the ladder needs at least one K");
  for (std::int64_t k : steps) {
    if (k < 1) return Status::invalidArgument("K = " + std::to_string(k) + " is out of range: steps must be ≥ 1");
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<LadderRung>> threatModelLadder(const Params& params, std::span<const std::int64_t> steps,
                                                  const EpsilonOptions& options, const pld::ComputeControl& control) {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(validateSteps(steps));
  std::vector<const RungSpec*> specs;
  std::vector<const Accountant*> accountants;
  for (const RungSpec& spec : kRungs) {
    specs.push_back(&spec);
    accountants.push_back(&spec.accountant());
  }
  const std::vector<double> xs(steps.begin(), steps.end());
  EpsilonOptions o = options;
  if (control.cancel) o.exact.cancel = control.cancel;
  if (control.progress) o.exact.progress = [&control](double f) { control.report(0.05 + 0.9 * f); };
  control.report(0.0);
  const std::vector<AccountantCurve> curves = epsilonCurves(accountants, params, CurveVariable::kSteps, xs, o);
  if (control.cancelled()) return Status::cancelled("the threat-model ladder computation was cancelled");
  std::vector<LadderRung> rungs;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    LadderRung r;
    r.id = std::string(accountants[i]->id());
    r.label = rungLabel(*specs[i], accountants[i]->id());
    r.rung = specs[i]->rung;
    r.kind = accountants[i]->boundKind();
    setApplicability(*accountants[i], *specs[i], params, r);
    for (std::size_t k = 0; k < xs.size() && k < curves[i].epsilon.size(); ++k) {
      if (!curves[i].epsilon[k] || !std::isfinite(*curves[i].epsilon[k])) continue;
      r.steps.push_back(xs[k]);
      r.epsilon.push_back(*curves[i].epsilon[k]);
    }
    rungs.push_back(std::move(r));
  }
  control.report(1.0);
  return rungs;
}

}  // namespace dpx::core::accounting
