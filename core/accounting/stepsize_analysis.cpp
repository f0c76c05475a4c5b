#include "accounting/stepsize_analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "accounting/calibration.h"
#include "accounting/cyclic_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "common/format.h"
#include "numerics/root_finding.h"

namespace dpx::core::accounting {
namespace {

// The σ range searched for the step-size bounds: wider than the slider because tiny targets
// need σ ≫ 100 (η ∝ 1/σ²).
constexpr double kSigmaLo = 1e-3;
constexpr double kSigmaHi = 1e5;

Result<EpsilonResult> epsilonOfRun(const Params& p, double sigma1, bool decreasing, const EpsilonOptions& options,
                                   std::optional<double> hint = {}) {
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  const std::span<const double> orders = grid.orders();
  // A decreasing schedule's order costs milliseconds (its head and lattice of σ values are new at
  // each σ₁): a cancelled search stops at the next order, and the partial minimum is not returned.
  const auto cancelled = [&] { return options.exact.cancel && options.exact.cancel->load(std::memory_order_relaxed); };
  auto rdpAt = [&](std::size_t i) -> Result<double> {
    if (cancelled()) return Status::cancelled();
    return sgmcmcTotalRdp(p.q(), sigma1, p.K, decreasing, orders[i]);
  };
  Result<OrderOptimum> optimum = minimizeOverOrders(orders, rdpAt, p.delta, options.conversion, true, hint);
  if (cancelled()) return Status::cancelled();
  DPX_ASSIGN_OR_RETURN(const OrderOptimum best, std::move(optimum));
  EpsilonResult r;
  r.epsilon = best.epsilon;
  r.delta = p.delta;
  r.alpha = best.alpha;
  r.conversion = options.conversion;
  return r;
}

// η = τ²/(L²σ²N) inverts σ = τ/(L√(ηN)). Rounded down to the digits dpx prints, and further
// until the η it returns maps back to a noise multiplier ≥ σ, so the step reported (and typed
// back in) keeps the ε certified at σ.
double etaForSigma(const Params& p, double sigma) {
  const double tau = static_cast<double>(p.m);
  double eta = roundedDownToPrinted(tau * tau / (p.L * p.L * sigma * sigma * static_cast<double>(p.n)));
  for (int i = 0; i < 64 && sgmcmcNoiseMultiplier(p, eta) < sigma; ++i) {
    eta = roundedDownToPrinted(std::nextafter(eta, 0.0));
  }
  return eta;
}

struct ExactBounds {
  double sigmaFixed, sigmaDecreasing;
};

Result<ExactBounds> exactBounds(const Params& p, double target, const EpsilonOptions& options) {
  std::optional<double> hint;
  auto run = [&](double s, bool decreasing) -> Result<EpsilonResult> {
    // A newer request cancels a search between two evaluations (each up to seconds for the
    // decreasing schedule at small σ₁): every later step of the bracket then returns at once.
    if (options.exact.cancel && options.exact.cancel->load(std::memory_order_relaxed)) return Status::cancelled();
    Result<EpsilonResult> e = epsilonOfRun(p, s, decreasing, options, hint);
    if (e) hint = e->alpha;
    return e;
  };
  // Meeting the target at the smallest σ searched means the largest step size lies beyond the
  // search (and far beyond η ≤ N/L²): there is no finite answer to report.
  auto unbounded = [&](const Calibration& c) {
    return Status::notApplicable(
        "target ε = " + formatNumber(target) + " is met even at σ_eff = " + formatNumber(c.sigma) +
        " (η = " + formatNumber(etaForSigma(p, c.sigma)) + "): the step size is not limited by privacy here");
  };
  auto fixed = calibrateDecreasing([&](double s) { return run(s, false); }, target, kSigmaLo, kSigmaHi);
  if (!fixed) return fixed.status().withContext("exact fixed step");
  if (fixed->atLowerLimit) return unbounded(*fixed).withContext("exact fixed step");
  // σ_t = σ₁t^{1/6} ≥ σ₁, so σ₁ = σ* (the fixed answer) is private enough and σ₁ = σ*/T^{1/6}
  // is not: the decreasing answer lies in between, and a narrow bracket keeps the search on few
  // lattice cells. Should rounding ever put the answer outside, the whole range is searched.
  const double spread = std::pow(static_cast<double>(p.K), 1.0 / 6.0);
  const double hi = std::min(kSigmaHi, fixed->sigma * (1.0 + 1e-9));
  const double lo = std::max(kSigmaLo, fixed->sigma / spread * (1.0 - 1e-9));
  auto decreasingOf = [&](double s) { return run(s, true); };
  Result<Calibration> decreasing = Status::invalidArgument("empty bracket");
  if (lo < hi) decreasing = calibrateDecreasing(decreasingOf, target, lo, hi);
  if (!decreasing || (decreasing->atLowerLimit && lo > kSigmaLo)) {
    decreasing = calibrateDecreasing(decreasingOf, target, kSigmaLo, kSigmaHi);
  }
  if (!decreasing) return decreasing.status().withContext("exact decreasing step");
  if (decreasing->atLowerLimit) return unbounded(*decreasing).withContext("exact decreasing step");
  return ExactBounds{fixed->sigma, decreasing->sigma};
}

}  // namespace

std::vector<StepSizeLimit> stepSizeLimits(const Params& p) {
  const double N = static_cast<double>(p.n);
  std::vector<StepSizeLimit> limits{
      {"sgld_lsi", "η < 1/β (Ryffel et al. 2022, Lemma 3.3)", "<", 1.0 / p.beta},
      {"sgld_utility", "η ≤ 1/(2β) (Ryffel et al. 2022, Lemma 4.1)", "<=", 1.0 / (2.0 * p.beta)},
  };
  if (p.M + p.w > 0.0) {
    limits.push_back({"cyclic", "η ≤ 1/(M+w) (Kong & Ribero 2024, eq. 12)", "<=", 1.0 / (p.M + p.w)});
  }
  limits.push_back({"outpert", "η < 2/β (Chen, Lee & Kifer 2019, contraction)", "<", 2.0 / p.beta});
  limits.push_back(
      {"outpert_optimal", "η* = 2/(β+λ) (Chen, Lee & Kifer 2019, smallest ρ)", "=", 2.0 / (p.beta + p.lambda)});
  limits.push_back({"sgmcmc_upper", "η ≤ N/L² (Li et al. 2019, Thm 3 cond. 1)", "<=", N / (p.L * p.L)});
  limits.push_back({"sgmcmc_lower", "η > q²N/(256L²) (Li et al. 2019, Thm 3 cond. 2)", ">",
                    p.q() * p.q() * N / (256.0 * p.L * p.L)});
  return limits;
}

double wangStepSize(const Params& p, double eps) {
  const double T = static_cast<double>(p.K);
  return eps * eps * static_cast<double>(p.n) /
         (128.0 * p.L * p.L * T * std::log(2.5 * T / p.delta) * std::log(2.0 / p.delta));
}

Result<StepSizeAnalysis> analyzeStepSize(const Params& p, double target, const EpsilonOptions& options) {
  DPX_RETURN_IF_ERROR(p.validate());
  if (!std::isfinite(target) || target <= 0.0) {
    return Status::invalidArgument("target-epsilon = " + formatNumber(target) +
                                   " is out of range: the target ε must be > 0");
  }
  DPX_ASSIGN_OR_RETURN(const ExactBounds exact, exactBounds(p, target, options));
  StepSizeAnalysis a{};
  a.targetEpsilon = target;
  a.sigmaFixed = exact.sigmaFixed;
  a.sigmaDecreasing1 = exact.sigmaDecreasing;
  a.exactFixed = etaForSigma(p, a.sigmaFixed);
  a.exactDecreasingEta1 = etaForSigma(p, a.sigmaDecreasing1);
  a.c = liConstantFixed(p, target, a.sigmaFixed);
  a.c2 = liConstantDecreasing(p, target, a.sigmaDecreasing1);
  a.liFixed = liFixedStepSize(p, target, a.c);
  a.liDecreasingT1 = liDecreasingStepSize(p, target, a.c2);
  a.wang = wangStepSize(p, target);
  Result<EpsilonResult> current = epsilonOfRun(p, sgmcmcNoiseMultiplier(p, p.eta), false, options);
  if (!current) return current.status().withContext("ε at the current η");
  a.epsilonAtCurrentEta = current->epsilon;
  a.limits = stepSizeLimits(p);
  for (const auto& [name, value] : {std::pair{"exact fixed η", a.exactFixed},
                                    {"exact decreasing η₁", a.exactDecreasingEta1},
                                    {"c", a.c},
                                    {"c₂", a.c2},
                                    {"Li et al. fixed η", a.liFixed},
                                    {"Li et al. decreasing η at t = 1", a.liDecreasingT1},
                                    {"Wang et al. η", a.wang},
                                    {"ε at the current η", a.epsilonAtCurrentEta}}) {
    if (Result<double> v = finiteOrStatus(value, name); !v) return v.status().withContext("step-size analysis");
  }
  return a;
}

Result<SgmcmcExactSteps> sgmcmcExactSteps(const Params& p, double target, const EpsilonOptions& options) {
  DPX_RETURN_IF_ERROR(p.validate());
  if (!std::isfinite(target) || target <= 0.0) {
    return Status::invalidArgument("target-epsilon = " + formatNumber(target) +
                                   " is out of range: the target ε must be > 0");
  }
  DPX_ASSIGN_OR_RETURN(const ExactBounds exact, exactBounds(p, target, options));
  if (options.exact.cancel && options.exact.cancel->load()) return Status::cancelled();
  return SgmcmcExactSteps{etaForSigma(p, exact.sigmaFixed), etaForSigma(p, exact.sigmaDecreasing), exact.sigmaFixed,
                          exact.sigmaDecreasing};
}

double liFixedStepSize(const Params& p, double eps, double c) {
  const double T = static_cast<double>(p.K);
  return eps * eps * static_cast<double>(p.n) / (c * c * p.L * p.L * T * -std::log(p.delta));
}

double liDecreasingStepSize(const Params& p, double eps, double c2) {
  const double T23 = std::pow(static_cast<double>(p.K), 2.0 / 3.0);
  return eps * eps * static_cast<double>(p.n) / (c2 * c2 * p.L * p.L * T23 * -std::log(p.delta));
}

double liConstantFixed(const Params& p, double eps, double sigmaFixed) {
  return sigmaFixed * eps / (p.q() * std::sqrt(static_cast<double>(p.K) * -std::log(p.delta)));
}

double liConstantDecreasing(const Params& p, double eps, double sigmaDecreasing1) {
  const double T23 = std::pow(static_cast<double>(p.K), 2.0 / 3.0);
  return sigmaDecreasing1 * eps / (p.q() * std::sqrt(T23 * -std::log(p.delta)));
}

// ---------------------------------------------------------------------------------------------
// Step sizes for a target ε of any accountant whose ε depends on η.

std::string_view etaTrendName(EtaTrend trend) {
  switch (trend) {
    case EtaTrend::kConstant:
      return "constant";
    case EtaTrend::kRising:
      return "rising";
    case EtaTrend::kFalling:
      return "falling";
    case EtaTrend::kMixed:
      return "mixed";
  }
  return "mixed";
}

namespace {

constexpr int kEtaPointsPerDecade = 16;
// ε values closer than this (relative) count as equal when deciding how ε moves with η: the
// analyses are closed forms, reproducible to a few ulps.
constexpr double kFlatTolerance = 1e-12;
constexpr const char* kStepSizeTag = "step size";

bool stepSizeAssumptionsHold(const Accountant& accountant, const Params& p) {
  for (const Violation& v : accountant.check(p)) {
    if (v.assumption == kStepSizeTag) return false;
  }
  return true;
}

// The requirement a step-size violation states ("…: the Langevin analysis needs η < 1/β").
std::string stepSizeRequirement(const Accountant& accountant, const Params& p) {
  for (const Violation& v : accountant.check(p)) {
    if (v.assumption != kStepSizeTag) continue;
    const std::size_t colon = v.reason.rfind(": ");
    return colon == std::string::npos ? v.reason : v.reason.substr(colon + 2);
  }
  return "the analysis' step-size condition";
}

std::string etaText(double eta) { return formatNumber(eta, 4); }

}  // namespace

std::string limitText(const EtaLimit& limit) {
  return "The analysis stops applying " + std::string(limit.upper ? "above" : "below") + " η ≈ " + etaText(limit.eta) +
         " (" + limit.requirement + ").";
}

namespace {

// Why ε moves with η for the analyses whose reason is known; a plain description otherwise.
std::string trendExplanation(const Accountant& accountant, const Params& p, const EpsilonOptions& options,
                             EtaTrend trend) {
  const bool headline = options.variant.empty();
  if (accountant.id() == accountantOf<SgldAccountant>().id() && headline) {
    if (p.schedule == Schedule::kDecreasing && trend == EtaTrend::kConstant) {
      return "The decreasing schedule ηₖ = 1/(2β + λk/2) is set by β and λ alone (Ryffel, Bach & Pointcheval 2022, "
             "Cor. 3.3): the η knob is not used, so ε does not depend on it";
    }
    if (p.schedule == Schedule::kConstant && trend == EtaTrend::kFalling) {
      return "With σ fixed, the Langevin noise σ_L = σL√η/(m√2) grows with η, so ε falls as η grows (Ryffel, Bach & "
             "Pointcheval 2022, Thm 3.1)";
    }
  }
  if (accountant.id() == accountantOf<CyclicAccountant>().id() && headline) {
    if (p.w == 0.0 && trend == EtaTrend::kConstant) {
      return "With w = 0, ℓ_η = 1 and the bound (Kong & Ribero 2024, Thm 4.5) does not involve η";
    }
    if (p.w > 0.0 && trend == EtaTrend::kRising) {
      return "With w > 0, ℓ_η = √(1 + 2ηw + ηw²/(M+w)) grows with η and shrinks Λ_k(ℓ_η), so ε rises with η (Kong & "
             "Ribero 2024, Thm 4.5)";
    }
  }
  switch (trend) {
    case EtaTrend::kConstant:
      return "For these knobs ε does not change with η";
    case EtaTrend::kRising:
      return "Here ε rises as η grows";
    case EtaTrend::kFalling:
      return "Here ε falls as η grows";
    case EtaTrend::kMixed:
      return "Here ε is not monotone in η: the feasible η may form several intervals";
  }
  return {};
}

struct EtaSample {
  double eta;
  std::optional<double> epsilon;  // unset: the accountant gave no ε there (counts as infeasible)
};

struct EtaSegment {
  std::vector<EtaSample> samples;  // ascending η, ends included
  EtaBoundKind lowerKind;
  EtaBoundKind upperKind;
};

// The scan's η grid: kEtaPointsPerDecade log-spaced points over [lo, hi], both ends exact.
std::vector<double> etaGrid(double lo, double hi) {
  const int points = static_cast<int>(std::ceil(std::log10(hi / lo) * kEtaPointsPerDecade)) + 1;
  std::vector<double> grid(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) grid[i] = i == points - 1 ? hi : lo * std::pow(hi / lo, double(i) / (points - 1));
  grid.front() = lo;
  return grid;
}

// The words for why an end of a feasible interval is where it is.
std::string boundText(const EtaBound& b) {
  switch (b.kind) {
    case EtaBoundKind::kKnobRange:
      return std::string("the end of the η range");
    case EtaBoundKind::kAssumption:
      return std::string("the analysis' step-size limit");
    case EtaBoundKind::kTarget:
      return std::string("the target");
  }
  return std::string();
}

class EtaScanner {
 public:
  EtaScanner(const Accountant& accountant, const Params& params, const EpsilonOptions& options)
      : m_accountant(accountant), m_params(params), m_options(options) {}

  Status scan(const StepSizeControl& control, double progressShare);
  Result<StepSizeRange> forTarget(double target) const;
  StepSizeScan summary() const;

 private:
  Params at(double eta) const {
    Params p = m_params;
    p.eta = eta;
    return p;
  }
  std::optional<double> epsilonAt(double eta) const {
    Result<EpsilonResult> e = m_accountant.epsilon(at(eta), m_options);
    if (!e || !isReportable(e->epsilon)) return std::nullopt;
    return e->epsilon;
  }
  bool holds(double eta) const { return stepSizeAssumptionsHold(m_accountant, at(eta)); }
  // The last η (a double) on `valid`'s side of the boundary between valid and invalid.
  double refineLimit(double valid, double invalid) const;
  // The feasible end of the crossing of the target between samples u and v (one feasible).
  double refineCrossing(const EtaSample& u, const EtaSample& v, double target) const;
  std::string feasibleText(const std::vector<EtaInterval>& intervals) const;
  // Segments of η where the analysis applies, their ends refined to the last valid double.
  Status findSegments(const std::vector<double>& grid, const StepSizeControl& control, double progressShare);
  // A segment from grid[i], or from the last valid double above grid[i − 1] if that one is not valid.
  EtaSegment openSegment(const std::vector<double>& grid, std::size_t i);
  // Ends `current` at grid[i], or at the last valid double below grid[i + 1], and keeps it.
  void closeSegment(EtaSegment& current, const std::vector<double>& grid, std::size_t i);
  // ε's range and trend over every sample; false when no sample has an ε.
  bool measureTrend();
  // The η intervals where ε ≤ target, their inner ends refined to the crossings.
  std::vector<EtaInterval> feasibleIntervals(double target) const;
  std::string limitsText() const;
  Status unreachable(double target, const std::string& limits) const;
  std::optional<double> bindingEta(const std::vector<EtaInterval>& feasible) const;
  std::string targetNote(const StepSizeRange& r, const std::string& limits) const;

  const Accountant& m_accountant;
  Params m_params;
  EpsilonOptions m_options;
  std::vector<EtaSegment> m_segments;
  std::vector<EtaLimit> m_limits;
  EtaTrend m_trend = EtaTrend::kConstant;
  std::string m_trendNote;
  double m_epsilonMin = 0.0, m_epsilonMax = 0.0;
  std::vector<Violation> m_other;
};

double EtaScanner::refineLimit(double valid, double invalid) const {
  // Geometric halving while the ends are far apart, then arithmetic down to adjacent doubles.
  for (int i = 0; i < 400; ++i) {
    double mid = std::sqrt(valid) * std::sqrt(invalid);
    if (!(mid > std::min(valid, invalid) && mid < std::max(valid, invalid))) mid = valid + (invalid - valid) / 2.0;
    if (mid == valid || mid == invalid) break;
    (holds(mid) ? valid : invalid) = mid;
  }
  return valid;
}

double EtaScanner::refineCrossing(const EtaSample& u, const EtaSample& v, double target) const {
  const bool leftFeasible = u.epsilon && *u.epsilon <= target;
  const double fallback = leftFeasible ? u.eta : v.eta;
  // g(log η) = ε(η) − target; a failed evaluation counts as infeasible.
  auto g = [&](double z) {
    const std::optional<double> e = epsilonAt(std::clamp(std::exp(z), u.eta, v.eta));
    return e ? *e - target : std::numeric_limits<double>::max();
  };
  numerics::RootOptions rootOptions;
  rootOptions.relativeTolerance = 0.0;
  rootOptions.absoluteTolerance = 1e-14;  // in log η: η to about 1e−14 relative
  Result<numerics::Bracket> bracket = numerics::findRootBracket(g, std::log(u.eta), std::log(v.eta), rootOptions);
  if (!bracket) return fallback;
  // The end on the feasible side, confirmed (exp and clamp are the ones g used).
  const double eta = std::clamp(std::exp(leftFeasible ? bracket->lower : bracket->upper), u.eta, v.eta);
  const std::optional<double> e = epsilonAt(eta);
  return e && *e <= target ? eta : fallback;
}

EtaSegment EtaScanner::openSegment(const std::vector<double>& grid, std::size_t i) {
  EtaSegment segment{{}, EtaBoundKind::kKnobRange, EtaBoundKind::kKnobRange};
  if (i > 0) {
    const double start = refineLimit(grid[i], grid[i - 1]);
    m_limits.push_back({start, false, stepSizeRequirement(m_accountant, at(grid[i - 1]))});
    segment.lowerKind = EtaBoundKind::kAssumption;
    if (start < grid[i]) segment.samples.push_back({start, epsilonAt(start)});
  }
  return segment;
}

void EtaScanner::closeSegment(EtaSegment& current, const std::vector<double>& grid, std::size_t i) {
  if (i + 1 < grid.size()) {
    const double end = refineLimit(grid[i], grid[i + 1]);
    m_limits.push_back({end, true, stepSizeRequirement(m_accountant, at(grid[i + 1]))});
    current.upperKind = EtaBoundKind::kAssumption;
    if (end > grid[i]) current.samples.push_back({end, epsilonAt(end)});
  }
  m_segments.push_back(std::move(current));
}

Status EtaScanner::findSegments(const std::vector<double>& grid, const StepSizeControl& control, double progressShare) {
  std::vector<bool> valid(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) valid[i] = holds(grid[i]);
  EtaSegment current;
  bool open = false;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (control.cancelled()) return Status::cancelled();
    if (control.progress) control.progress(progressShare * static_cast<double>(i) / static_cast<double>(grid.size()));
    if (!valid[i]) continue;
    if (!open) {
      current = openSegment(grid, i);
      open = true;
    }
    current.samples.push_back({grid[i], epsilonAt(grid[i])});
    if (i + 1 == grid.size() || !valid[i + 1]) {
      closeSegment(current, grid, i);
      open = false;
    }
  }
  return Status::ok();
}

bool EtaScanner::measureTrend() {
  bool any = false, up = false, down = false;
  for (const EtaSegment& segment : m_segments) {
    const EtaSample* previous = nullptr;
    for (const EtaSample& s : segment.samples) {
      if (!s.epsilon) continue;
      m_epsilonMin = any ? std::min(m_epsilonMin, *s.epsilon) : *s.epsilon;
      m_epsilonMax = any ? std::max(m_epsilonMax, *s.epsilon) : *s.epsilon;
      any = true;
      if (previous && previous->epsilon) {
        const double tolerance = kFlatTolerance * std::max(std::fabs(*s.epsilon), std::fabs(*previous->epsilon));
        if (*s.epsilon > *previous->epsilon + tolerance) up = true;
        if (*s.epsilon < *previous->epsilon - tolerance) down = true;
      }
      previous = &s;
    }
  }
  if (!any) return false;
  if (m_epsilonMax - m_epsilonMin <= kFlatTolerance * m_epsilonMax) {
    m_trend = EtaTrend::kConstant;
  } else if (up && down) {
    m_trend = EtaTrend::kMixed;
  } else {
    m_trend = up ? EtaTrend::kRising : EtaTrend::kFalling;
  }
  return true;
}

Status EtaScanner::scan(const StepSizeControl& control, double progressShare) {
  const KnobInfo& info = knobInfo(Knob::kEta);
  const double lo = info.min;
  const double hi = info.max;
  DPX_RETURN_IF_ERROR(findSegments(etaGrid(lo, hi), control, progressShare));
  if (m_segments.empty()) {
    return Status::notApplicable(std::string(m_accountant.id()) + " applies at no η in [" + etaText(lo) + ", " +
                                 etaText(hi) + "] for these knobs: " + stepSizeRequirement(m_accountant, at(lo)));
  }
  // How ε moves with η, over every η where the analysis applies.
  if (!measureTrend()) {
    return Status::notApplicable(std::string(m_accountant.id()) + " gives no finite ε at any η in [" + etaText(lo) +
                                 ", " + etaText(hi) + "] for these knobs");
  }
  m_trendNote = trendExplanation(m_accountant, m_params, m_options, m_trend);
  for (const Violation& v : m_accountant.check(at(m_segments.front().samples.front().eta))) {
    if (v.assumption != kStepSizeTag) m_other.push_back(v);
  }
  if (control.progress) control.progress(progressShare);
  return Status::ok();
}

std::string EtaScanner::feasibleText(const std::vector<EtaInterval>& intervals) const {
  std::string text;
  for (const EtaInterval& i : intervals) {
    text += (text.empty() ? "" : " ∪ ") + std::string("[") + etaText(i.lower.eta) + ", " + etaText(i.upper.eta) + "]";
  }
  return text;
}

std::vector<EtaInterval> EtaScanner::feasibleIntervals(double target) const {
  std::vector<EtaInterval> feasible;
  auto meets = [&](const EtaSample& s) { return s.epsilon && *s.epsilon <= target; };
  for (const EtaSegment& segment : m_segments) {
    const std::vector<EtaSample>& s = segment.samples;
    std::optional<EtaBound> lower;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!meets(s[i])) continue;
      if (!lower) {
        lower = i == 0 ? EtaBound{s[0].eta, segment.lowerKind}
                       : EtaBound{refineCrossing(s[i - 1], s[i], target), EtaBoundKind::kTarget};
      }
      if (i + 1 == s.size()) {
        feasible.push_back({*lower, EtaBound{s[i].eta, segment.upperKind}});
        lower.reset();
      } else if (!meets(s[i + 1])) {
        feasible.push_back({*lower, EtaBound{refineCrossing(s[i], s[i + 1], target), EtaBoundKind::kTarget}});
        lower.reset();
      }
    }
  }
  return feasible;
}

std::string EtaScanner::limitsText() const {
  std::string text;
  for (const EtaLimit& l : m_limits) {
    text += ' ';
    text += limitText(l);
  }
  return text;
}

// Why no η meets the target: the range of ε over the η where the analysis applies.
Status EtaScanner::unreachable(double target, const std::string& limits) const {
  const double etaLow = m_segments.front().samples.front().eta;
  const double etaHigh = m_segments.back().samples.back().eta;
  std::string message = std::string(m_accountant.id()) + " cannot reach ε = " + formatNumber(target, 6) +
                        " at σ = " + formatNumber(m_params.sigma, 6) + ": ";
  if (m_trend == EtaTrend::kConstant) {
    message += "ε = " + formatNumber(m_epsilonMin, 6) + " at every η. " + m_trendNote + ".";
  } else {
    message += "for η from " + etaText(etaLow) + " to " + etaText(etaHigh) + " its ε lies in [" +
               formatNumber(m_epsilonMin, 6) + ", " + formatNumber(m_epsilonMax, 6) + "]. " + m_trendNote + ".";
  }
  return Status::notApplicable(message + limits);
}

// The side that binds: the largest η when ε rises with η, the smallest when it falls.
std::optional<double> EtaScanner::bindingEta(const std::vector<EtaInterval>& feasible) const {
  std::optional<double> binding;
  if (m_trend == EtaTrend::kRising && feasible.back().upper.kind == EtaBoundKind::kTarget) {
    binding = feasible.back().upper.eta;
  }
  if (m_trend == EtaTrend::kFalling && feasible.front().lower.kind == EtaBoundKind::kTarget) {
    binding = feasible.front().lower.eta;
  }
  return binding;
}

std::string EtaScanner::targetNote(const StepSizeRange& r, const std::string& limits) const {
  const double target = r.targetEpsilon;
  std::string note = m_trendNote + ". ";
  if (m_trend == EtaTrend::kConstant) {
    note += "ε = " + formatNumber(m_epsilonMin, 6) + " ≤ " + formatNumber(target, 6) +
            " at every η where the analysis applies: privacy does not limit η.";
  } else if (r.bindingEta) {
    note += "ε ≤ " + formatNumber(target, 6) + " needs η " + (m_trend == EtaTrend::kRising ? "≤ " : "≥ ") +
            etaText(*r.bindingEta) + ".";
  } else if (m_trend == EtaTrend::kRising || m_trend == EtaTrend::kFalling) {
    const EtaBound& b = m_trend == EtaTrend::kRising ? r.feasible.back().upper : r.feasible.front().lower;
    note += "ε ≤ " + formatNumber(target, 6) + " holds " + (m_trend == EtaTrend::kRising ? "up to" : "down to") +
            " η = " + etaText(b.eta) + ", " + boundText(b) + ": privacy does not limit η there.";
  } else {
    note += "ε ≤ " + formatNumber(target, 6) + " for η in " + feasibleText(r.feasible) + ".";
  }
  note += limits;
  if (!m_other.empty()) {
    note += " Not met at any η:";
    for (const Violation& v : m_other) note += " " + v.reason + ";";
    note.back() = '.';
  }
  return note;
}

Result<StepSizeRange> EtaScanner::forTarget(double target) const {
  if (!std::isfinite(target) || target <= 0.0) {
    return Status::invalidArgument("target-epsilon = " + formatNumber(target) +
                                   " is out of range: the target ε must be > 0");
  }
  StepSizeRange r;
  r.accountant = std::string(m_accountant.id());
  r.targetEpsilon = target;
  r.sigma = m_params.sigma;
  r.trend = m_trend;
  r.limits = m_limits;
  r.epsilonMin = m_epsilonMin;
  r.epsilonMax = m_epsilonMax;
  r.otherViolations = m_other;
  r.feasible = feasibleIntervals(target);
  const std::string limits = limitsText();
  if (r.feasible.empty()) return unreachable(target, limits);
  r.bindingEta = bindingEta(r.feasible);
  r.note = targetNote(r, limits);
  return r;
}

StepSizeScan EtaScanner::summary() const {
  StepSizeScan s;
  s.accountant = std::string(m_accountant.id());
  s.sigma = m_params.sigma;
  s.trend = m_trend;
  s.trendNote = m_trendNote;
  s.limits = m_limits;
  s.etaLow = m_segments.front().samples.front().eta;
  s.etaHigh = m_segments.back().samples.back().eta;
  s.epsilonMin = m_epsilonMin;
  s.epsilonMax = m_epsilonMax;
  s.otherViolations = m_other;
  return s;
}

}  // namespace

Result<StepSizeScan> stepSizesForTargets(const Accountant& accountant, const Params& params,
                                         std::span<const double> targets, const EpsilonOptions& options,
                                         const StepSizeControl& control) {
  DPX_RETURN_IF_ERROR(params.validate());
  for (double t : targets) {
    if (!std::isfinite(t) || t <= 0.0) {
      return Status::invalidArgument("target-epsilon = " + formatNumber(t) +
                                     " is out of range: the target ε must be > 0");
    }
  }
  EtaScanner scanner(accountant, params, options);
  constexpr double kScanShare = 0.5;
  DPX_RETURN_IF_ERROR(scanner.scan(control, kScanShare));
  StepSizeScan scan = scanner.summary();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (control.cancelled()) return Status::cancelled();
    scan.targets.push_back(scanner.forTarget(targets[i]));
    if (control.progress) {
      const double fraction = static_cast<double>(i + 1) / static_cast<double>(targets.size());
      control.progress(kScanShare + (1.0 - kScanShare) * fraction);
    }
  }
  return scan;
}

Result<StepSizeRange> stepSizesForTarget(const Accountant& accountant, const Params& params, double targetEpsilon,
                                         const EpsilonOptions& options) {
  DPX_ASSIGN_OR_RETURN(StepSizeScan scan,
                       stepSizesForTargets(accountant, params, std::span<const double>(&targetEpsilon, 1), options));
  return std::move(scan.targets.front());
}

}  // namespace dpx::core::accounting
