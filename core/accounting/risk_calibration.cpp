#include "accounting/risk_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "accounting/pld_accountant.h"
#include "common/format.h"
#include "numerics/root_finding.h"

namespace dpx::core::accounting {
namespace {

// The composed run's profile δ(ε) = max over the two add/remove directions, on the loss grid
// ε_i = iΔ, i ≥ 0 (both directions share Δ and integer grid indices).
class Profile {
 public:
  Profile(const pld::ComposedRun& run, bool pessimistic)
      : m_remove(run.remove[pessimistic ? 0 : 1]), m_add(run.add[pessimistic ? 0 : 1]), m_interval(run.interval) {
    for (const pld::DiscretePld* d : {&m_remove, &m_add}) {
      const std::int64_t end = d->firstIndex() + static_cast<std::int64_t>(d->size());
      m_top = std::max(m_top, end);
    }
  }
  std::int64_t top() const { return m_top; }  // beyond it δ is constant (the mass at +∞)
  double epsilon(std::int64_t i) const { return static_cast<double>(i) * m_interval; }
  double delta(double eps) const { return std::max(m_remove.delta(eps), m_add.delta(eps)); }
  double gap(double eps) const { return m_remove.delta(eps) - m_add.delta(eps); }

 private:
  const pld::DiscretePld& m_remove;
  const pld::DiscretePld& m_add;
  double m_interval;
  std::int64_t m_top = 0;
};

// The two families of lines of the envelope at ε, evaluated at x: 1 − δ − e^ε x (the test
// rejecting on large losses of one direction) and e^{−ε}(1 − δ − x) (the other direction).
double firstLine(const Profile& p, double eps, double x) { return 1.0 - p.delta(eps) - std::exp(eps) * x; }
double secondLine(const Profile& p, double eps, double x) { return std::exp(-eps) * (1.0 - p.delta(eps) - x); }

using Line = double (*)(const Profile&, double, double);

// Between consecutive grid losses each direction's δ is affine in e^ε, so a line family is, as a
// function of e^ε (first) or e^{−ε} (second), the minimum of two affine functions: concave, with
// its kink where the directions' δ cross. Over the grid it is therefore unimodal; its supremum is
// at the best grid point or at a crossing in one of the two intervals beside it.
double lineSupremum(const Profile& p, Line line, double x) {
  std::int64_t lo = 0;
  std::int64_t hi = std::max<std::int64_t>(p.top(), 1);
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (line(p, p.epsilon(mid), x) < line(p, p.epsilon(mid + 1), x)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  double best = line(p, p.epsilon(lo), x);
  for (std::int64_t i = std::max<std::int64_t>(lo - 1, 0); i <= lo; ++i) {
    const double a = p.epsilon(i);
    const double b = p.epsilon(i + 1);
    const double ga = p.gap(a);
    const double gb = p.gap(b);
    if (!(ga * gb < 0.0)) continue;
    // The gap is affine in e^ε on [a, b]: its zero in closed form.
    const double ua = std::exp(a);
    const double ub = std::exp(b);
    const double crossing = std::clamp(std::log(ua + (ub - ua) * ga / (ga - gb)), a, b);
    best = std::max(best, line(p, crossing, x));
  }
  return best;
}

Status checkFpr(double fpr) {
  if (!(fpr > 0.0 && fpr < 1.0)) {
    return Status::invalidArgument("at-fpr = " + formatNumber(fpr) +
                                   " is out of range: the attack's false positive rate must be in (0, 1)");
  }
  return Status::ok();
}

AttackRisk riskOf(const pld::ComposedRun& run, double fpr) {
  AttackRisk r;
  r.fpr = fpr;
  r.tpr = 1.0 - pldTradeoffAt(run, true, fpr);
  r.tprOptimistic = std::min(r.tpr, 1.0 - pldTradeoffAt(run, false, fpr));
  r.advantage = run.deltaUpper(0.0);
  return r;
}

// Where max_x (1 − x − f(x)) is attained: the function is concave (f is convex).
double advantageFpr(const pld::ComposedRun& run) {
  auto negativeGain = [&run](double x) { return -(1.0 - x - pldTradeoffAt(run, true, x)); };
  Result<numerics::Minimum> m = numerics::minimizeBrent(negativeGain, 0.0, 1.0, 50);
  return m ? std::clamp(m->x, 1e-300, 1.0 - 1e-16) : 0.5;
}

}  // namespace

double pldTradeoffAt(const pld::ComposedRun& run, bool pessimistic, double typeOne) {
  const double x = std::clamp(typeOne, 0.0, 1.0);
  // The line suprema read δ at a few hundred losses: from the tables.
  const pld::ComposedRun tables = run.tabulated(pessimistic ? pld::Estimate::kPessimistic : pld::Estimate::kOptimistic);
  const Profile profile(tables, pessimistic);
  const double f = std::max({0.0, lineSupremum(profile, &firstLine, x), lineSupremum(profile, &secondLine, x)});
  return std::min(f, 1.0 - x);
}

Result<AttackRisk> attackRisk(const Params& params, double fpr, const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(checkFpr(fpr));
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, options));
  AttackRisk risk = riskOf(*r.run, fpr);
  DPX_ASSIGN_OR_RETURN(risk.epsilon, r.run->epsilonUpper(params.delta));
  return risk;
}

Result<AttackRisk> advantageRisk(const Params& params, const ExactOptions& options) {
  DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(params, options));
  AttackRisk risk = riskOf(*r.run, advantageFpr(*r.run));
  DPX_ASSIGN_OR_RETURN(risk.epsilon, r.run->epsilonUpper(params.delta));
  return risk;
}

Status RiskTarget::validate() const {
  if (kind == Kind::kAdvantage) {
    if (!(advantage >= 0.0 && advantage < 1.0)) {
      return Status::invalidArgument("target-advantage = " + formatNumber(advantage) +
                                     " is out of range: the attack advantage max (TPR − FPR) must be in [0, 1)");
    }
    return Status::ok();
  }
  DPX_RETURN_IF_ERROR(checkFpr(fpr));
  if (!(tpr > 0.0 && tpr <= 1.0)) {
    return Status::invalidArgument("target-tpr = " + formatNumber(tpr) +
                                   " is out of range: the attack's true positive rate must be in (0, 1]");
  }
  if (tpr < fpr) {
    return Status::invalidArgument("target-tpr = " + formatNumber(tpr) + " is below at-fpr = " + formatNumber(fpr) +
                                   ": impossible, every trade-off curve allows TPR = FPR (a coin flip), so the "
                                   "target must be ≥ the FPR");
  }
  return Status::ok();
}

std::string RiskTarget::describe() const {
  if (kind == Kind::kAdvantage) return "advantage ≤ " + formatNumber(advantage);
  return "TPR ≤ " + formatNumber(tpr) + " at FPR " + formatNumber(fpr);
}

namespace {

// One σ's risk in the unit of the target (TPR at its FPR, or the advantage).
struct Evaluation {
  std::shared_ptr<const pld::ComposedRun> run;
  double value = 0.0;
};

// The search: evaluates the pessimistic risk at σ, with progress over the whole search and a
// cancellation that stops it at once.
class RiskSearch {
 public:
  RiskSearch(const Params& params, const RiskTarget& target, const ExactOptions& options)
      : m_params(params), m_target(target), m_options(options) {}

  Result<Evaluation> at(double sigma) {
    Params p = m_params;
    p.sigma = sigma;
    ExactOptions o = m_options;
    // Each PLD reports 0 → 1; map evaluation k into [1 − e^{−k/8}, 1 − e^{−(k+1)/8}].
    const double from = 1.0 - std::exp(-m_evaluations / 8.0);
    const double to = 1.0 - std::exp(-(m_evaluations + 1) / 8.0);
    if (m_options.progress) o.progress = [f = m_options.progress, from, to](double x) { f(from + (to - from) * x); };
    ++m_evaluations;
    DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(p, o));
    const double value = m_target.kind == RiskTarget::Kind::kAdvantage
                             ? r.run->deltaUpper(0.0)
                             : 1.0 - pldTradeoffAt(*r.run, true, m_target.fpr);
    return Evaluation{r.run, value};
  }
  double goal() const { return m_target.kind == RiskTarget::Kind::kAdvantage ? m_target.advantage : m_target.tpr; }
  // How far below the goal an answer may land: 1e−4, or 1 % of the way to the value of a
  // perfectly private run (TPR = FPR, advantage 0) when the goal is that close to it.
  double band() const {
    const double trivial = m_target.kind == RiskTarget::Kind::kAdvantage ? 0.0 : m_target.fpr;
    return std::min(1e-4, 0.01 * (goal() - trivial));
  }
  bool cancelled() const { return m_options.cancel && m_options.cancel->load(std::memory_order_relaxed); }
  std::string measure() const { return m_target.kind == RiskTarget::Kind::kAdvantage ? "advantage" : "TPR"; }

 private:
  const Params& m_params;
  const RiskTarget& m_target;
  const ExactOptions& m_options;
  int m_evaluations = 0;
};

Result<RiskCalibration> describeResult(const RiskTarget& target, const Params& params, double sigma,
                                       const Evaluation& e, bool atLowerLimit) {
  RiskCalibration c;
  c.sigma = sigma;
  c.atLowerLimit = atLowerLimit;
  c.fpr = target.kind == RiskTarget::Kind::kAdvantage ? advantageFpr(*e.run) : target.fpr;
  const AttackRisk risk = riskOf(*e.run, c.fpr);
  c.tpr = risk.tpr;
  c.advantage = risk.advantage;
  DPX_ASSIGN_OR_RETURN(c.epsilon, e.run->epsilonUpper(params.delta));
  return c;
}

// σ where the search starts: about where most targets of interest lie; fixed, so the answer does
// not depend on the σ the knob happened to hold.
constexpr double kStartSigma = 1.0;

struct SigmaBracket {
  double noisy;     // the risk exceeds the goal here
  double private_;  // the goal holds here
  std::optional<Evaluation> atPrivate;
};

// Halves or doubles σ from kStartSigma until the goal changes sides. Small σ make the widest
// (costliest) PLDs, so σ = lo is only composed when the answer may lie below lo·2.
Result<SigmaBracket> bracketSigma(RiskSearch& search, double lo, double hi) {
  auto meets = [&](const Result<Evaluation>& e) { return e && e->value <= search.goal(); };
  double sigma = std::clamp(kStartSigma, lo, hi);
  Result<Evaluation> e = search.at(sigma);
  if (!e && e.status().code() == StatusCode::kCancelled) return e.status();
  const bool startMeets = meets(e);
  while (true) {
    const double next = startMeets ? std::max(lo, sigma / 2.0) : std::min(hi, sigma * 2.0);
    if (next == sigma) {
      if (!startMeets)
        return Status::numericalIssue("the risk at σ = " + formatNumber(sigma) + " could not be computed");
      return SigmaBracket{0.0, sigma, *e};  // met even at σ = lo
    }
    Result<Evaluation> n = search.at(next);
    if (!n && n.status().code() == StatusCode::kCancelled) return n.status();
    if (meets(n) != startMeets) {
      return startMeets ? SigmaBracket{next, sigma, *e} : SigmaBracket{sigma, next, *n};
    }
    sigma = next;
    e = std::move(n);
  }
}

// TOMS 748 on log σ for value(σ) − goal (decreasing in σ) over the bracket, stopped as soon as a
// σ lands in the band [goal − band, goal]; returns the private end of the final bracket.
Result<double> searchSigma(RiskSearch& search, const SigmaBracket& b) {
  Status stop = Status::ok();
  const double logNoisy = std::log(b.noisy);
  const double logPrivate = std::log(b.private_);
  auto f = [&](double logSigma) {
    if (!stop.isOk()) return 0.0;
    // The ends map back to the σ evaluated before (the PLD cache then answers).
    const double sigma = logSigma == logNoisy     ? b.noisy
                         : logSigma == logPrivate ? b.private_
                                                  : std::clamp(std::exp(logSigma), b.noisy, b.private_);
    Result<Evaluation> e = search.at(sigma);
    if (!e && e.status().code() == StatusCode::kCancelled) {
      stop = e.status();
      return 0.0;
    }
    // A failed evaluation counts as "not private enough".
    if (!e) return 1.0;
    const double excess = e->value - search.goal();
    return excess <= 0.0 && excess >= -search.band() ? 0.0 : excess;
  };
  numerics::RootOptions options;
  options.relativeTolerance = 0.0;
  options.absoluteTolerance = 1e-10;
  Result<numerics::Bracket> bracket = numerics::findRootBracket(f, logNoisy, logPrivate, options);
  if (!stop.isOk()) return stop;
  if (!bracket) return bracket.status();
  const double upper = std::max(bracket->lower, bracket->upper);
  return upper == logPrivate ? b.private_ : std::clamp(std::exp(upper), b.noisy, b.private_);
}

}  // namespace

Result<RiskCalibration> calibrateSigmaToRisk(const Params& params, const RiskTarget& target,
                                             const ExactOptions& options) {
  DPX_RETURN_IF_ERROR(target.validate());
  DPX_RETURN_IF_ERROR(params.validate());
  const KnobInfo& sigmaInfo = knobInfo(Knob::kSigma);
  const double lo = sigmaInfo.min;
  const double hi = sigmaInfo.max;
  RiskSearch search(params, target, options);
  DPX_ASSIGN_OR_RETURN(const Evaluation atHi, search.at(hi));
  if (atHi.value > search.goal()) {
    return Status::notApplicable("target " + target.describe() + " is unreachable: even σ = " + formatNumber(hi) +
                                 " gives " + search.measure() + " = " + formatNumber(atHi.value));
  }
  if (target.kind == RiskTarget::Kind::kTprAtFpr && target.tpr >= 1.0) {
    // Every attack has TPR ≤ 1: no search, only the numbers of the smallest σ.
    DPX_ASSIGN_OR_RETURN(const Evaluation atLo, search.at(lo));
    return describeResult(target, params, lo, atLo, true);
  }
  DPX_ASSIGN_OR_RETURN(const SigmaBracket bracket, bracketSigma(search, lo, hi));
  if (bracket.private_ == lo) return describeResult(target, params, lo, *bracket.atPrivate, true);
  DPX_ASSIGN_OR_RETURN(double sigma, searchSigma(search, bracket));
  // Confirm the private side, rounded up to the digits dpx prints and stepping up if rounding
  // ever disagrees, so the contract holds for the value returned and for the value printed.
  sigma = std::min(bracket.private_, roundedUpToPrinted(sigma));
  for (int attempt = 0; attempt < 60 && sigma < bracket.private_; ++attempt) {
    if (search.cancelled()) return Status::cancelled();
    Result<Evaluation> e = search.at(sigma);
    if (e && e->value <= search.goal()) return describeResult(target, params, sigma, *e, false);
    sigma = std::min(bracket.private_, roundedUpToPrinted(sigma * (1.0 + 1e-9 * (1 << std::min(attempt, 30)))));
  }
  return describeResult(target, params, bracket.private_, *bracket.atPrivate, false);
}

}  // namespace dpx::core::accounting
