#include "compute/analytics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "accounting/curves.h"
#include "accounting/rdp_accountant.h"
#include "accounting/rdp_based_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "common/format.h"
#include "common/parallel.h"
#include "training/mechanism.h"

namespace dpx::ui {

using namespace core::accounting;

std::int64_t epsilonAxisMaxSteps(const core::Params& params) {
  const auto maxK = static_cast<std::int64_t>(core::knobInfo(core::Knob::kK).max);
  return std::clamp<std::int64_t>(10 * params.K, 100, maxK);
}

namespace {
// DP-SGD's classic baseline.
const RdpAccountant& headlineAccountant() { return accountantOf<RdpAccountant>(); }
}  // namespace

std::optional<double> tableEpsilon(const core::Params& params, Conversion conversion) {
  EpsilonOptions options;
  options.conversion = conversion;
  auto e = headlineAccountant().epsilon(params, options);
  if (!e) return std::nullopt;
  return e->epsilon;
}

std::optional<double> tableEpsilon(const AnalyticsSnapshot& snapshot) {
  for (const AccountantSummary& row : snapshot.accountants) {
    if (row.id == headlineAccountant().id() && row.epsilon) return row.epsilon->epsilon;
  }
  return std::nullopt;
}

unsigned accountantColor(const std::string& id) {
  const Accountant* a = findAccountant(id);
  return a ? a->info().color : 0x7f7f7f;
}

unsigned mechanismColor(const std::string& id) {
  if (const auto m = core::training::parseMechanism(id); m && core::training::isPrivate(*m)) {
    return accountantColor(std::string(core::training::accountantsFor(*m).front()));
  }
  return 0x505050;
}

std::string violationsText(const std::vector<Violation>& violations) {
  std::string text;
  for (const Violation& v : violations) {
    if (!text.empty()) text += "\n";
    text += v.text();
  }
  return text;
}

namespace {

// What the phases below share: the knobs, the accountants that answer at slider speed, and the
// two ways of converting RDP (the best order, or the α knob alone).
struct AnalyticsContext {
  const core::Params& params;
  std::vector<const Accountant*> analytic;
  EpsilonOptions options;  // the best order, at the chosen conversion
  EpsilonOptions atAlpha;  // the α knob alone
  bool epochsAxis = false;
  bool fixedAlpha = false;
  bool draft = false;
};

PlotCurve curveFromValues(const std::vector<double>& xs, const std::vector<std::optional<double>>& ys,
                          const std::function<double(double)>& x) {
  PlotCurve c;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!ys[k]) continue;
    c.x.push_back(x(xs[k]));
    c.y.push_back(*ys[k]);
  }
  return c;
}

// One table row per accountant, in parallel (each is a handful of order conversions).
void summariseAccountants(const AnalyticsContext& ctx, AnalyticsSnapshot& s) {
  s.accountants.resize(ctx.analytic.size());
  core::parallelFor(std::size_t{0}, ctx.analytic.size(), [&](std::size_t i) {
    const Accountant& a = *ctx.analytic[i];
    AccountantSummary& row = s.accountants[i];
    row.id = std::string(a.id());
    row.name = std::string(a.name());
    row.citation = std::string(a.citation());
    row.bound = a.boundKind();
    row.violations = a.check(ctx.params);
    row.assumptions = a.assumptions().statements;
    if (auto native = a.native(ctx.params)) row.native = *native;
    if (auto eps = a.epsilon(ctx.params, ctx.options)) {
      row.epsilon = *eps;
    } else {
      row.error = eps.status().message();
    }
    if (a.hasRdp()) {
      if (auto total = a.rdp(ctx.params, ctx.params.alpha)) row.rdpAtAlpha = *total;
      if (auto single = a.epsilon(ctx.params, ctx.atAlpha)) row.epsilonAtAlpha = *single;
    }
  });
}

// The K values of the ε chart: `points` log-spaced to ten times the run, and the run's own K.
std::vector<double> stepsAxis(const core::Params& params, int points) {
  const CurveSpec spec{CurveVariable::kSteps, 1.0, static_cast<double>(epsilonAxisMaxSteps(params)), points, true};
  std::vector<double> ks = *curveAxis(spec);
  ks.push_back(static_cast<double>(params.K));
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

// ε against K (or epochs), one curve per accountant plus its teaching variants: those whose
// info has a tooltip (the composition baseline the Langevin bound beats, the bounded-domain form
// of the cyclic analysis, which reads D), dashed.
void epsilonAlongSteps(const AnalyticsContext& ctx, AnalyticsSnapshot& s) {
  const std::vector<double> dense = stepsAxis(ctx.params, ctx.draft ? kDraftEpsilonCurvePoints : kEpsilonCurvePoints);
  const std::vector<double> sparse =
      stepsAxis(ctx.params, ctx.draft ? kDraftSparseEpsilonCurvePoints : kSparseEpsilonCurvePoints);
  const auto axisOf = [&](const Accountant* a) -> const std::vector<double>& {
    return a->cheapPerPoint() ? dense : sparse;
  };
  std::vector<AccountantCurve> curves(ctx.analytic.size());
  const EpsilonOptions& options = ctx.fixedAlpha ? ctx.atAlpha : ctx.options;
  // The costly accountants first: their points spread over both threads while the cheap curves
  // fill the gaps.
  std::vector<std::size_t> order(ctx.analytic.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return !ctx.analytic[i]->cheapPerPoint(); });
  core::parallelFor(std::size_t{0}, order.size(), [&](std::size_t j) {
    const std::size_t i = order[j];
    curves[i] = epsilonCurve(*ctx.analytic[i], ctx.params, CurveVariable::kSteps, axisOf(ctx.analytic[i]), options);
  });
  const double toEpochs = static_cast<double>(ctx.params.m) / static_cast<double>(ctx.params.n);
  const auto axis = [&](double k) { return ctx.epochsAxis ? k * toEpochs : k; };
  s.currentX = axis(static_cast<double>(ctx.params.K));
  const std::string alpha = core::formatNumber(ctx.params.alpha, 4);
  for (std::size_t i = 0; i < ctx.analytic.size(); ++i) {
    const AccountantSummary& row = s.accountants[i];
    const bool single = ctx.fixedAlpha && ctx.analytic[i]->hasRdp();
    PlotCurve c = curveFromValues(axisOf(ctx.analytic[i]), curves[i].epsilon, axis);
    c.id = c.accountant = row.id;
    c.label =
        row.id + (row.bound == BoundKind::kEstimate ? " (estimate)" : "") + (single ? " (α = " + alpha + ")" : "");
    c.greyed = !row.violations.empty();
    c.tooltip = c.greyed ? violationsText(row.violations)
                         : row.name + (single ? ": converted at the α knob only, not the best order" : "");
    s.epsilonCurves.push_back(std::move(c));
  }
  for (const Accountant* a : ctx.analytic) {
    for (const Variant& v : a->variants()) {
      if (v.id.empty() || v.tooltip.empty()) continue;
      EpsilonOptions variantOptions = ctx.options;
      variantOptions.variant = v.id;
      const std::vector<double>& ks = axisOf(a);
      PlotCurve c =
          curveFromValues(ks, epsilonCurve(*a, ctx.params, CurveVariable::kSteps, ks, variantOptions).epsilon, axis);
      c.id = std::string(a->id()) + ":" + v.id;
      c.accountant = std::string(a->id());
      c.label = std::string(a->id()) + " " + v.label.substr(0, v.label.find(','));  // the theorem is in the tooltip
      c.dashed = true;
      c.tooltip = v.tooltip;
      s.epsilonCurves.push_back(std::move(c));
    }
  }
}

// The orders of a draft's RDP chart: a subset of the default grid, so each value is the settled
// chart's at that α.
std::span<const double> draftOrders() {
  static const std::vector<double> orders = [] {
    const std::span<const double> all = defaultOrders();
    std::vector<double> kept;
    for (std::size_t i = 0; i < all.size(); i += kDraftRdpOrderStride) kept.push_back(all[i]);
    if (kept.back() != all.back()) kept.push_back(all.back());
    return kept;
  }();
  return orders;
}

// ε_α against α for the RDP accountants.
void rdpProfiles(const AnalyticsContext& ctx, AnalyticsSnapshot& s) {
  const std::span<const double> orders = ctx.draft ? draftOrders() : defaultOrders();
  for (std::size_t i = 0; i < ctx.analytic.size(); ++i) {
    const auto* rdpBased = dynamic_cast<const RdpBasedAccountant*>(ctx.analytic[i]);
    if (!rdpBased) continue;
    auto profile = rdpBased->rdpProfile(ctx.params, orders);
    if (!profile) continue;
    const AccountantSummary& row = s.accountants[i];
    PlotCurve c;
    c.id = c.accountant = c.label = row.id;
    c.greyed = !row.violations.empty();
    c.tooltip = c.greyed ? violationsText(row.violations) : row.name;
    c.x.assign(orders.begin(), orders.end());
    c.y = *profile;
    s.rdpCurves.push_back(std::move(c));
  }
}

PlotCurve curveOnGrid(const std::vector<double>& grid, const std::function<double(double)>& y) {
  PlotCurve c;
  for (double x : grid) {
    c.x.push_back(x);
    c.y.push_back(y(x));
  }
  return c;
}

// The trade-off plane: the identity; G_μ of an accountant whose native parameters include a
// Gaussian-DP μ; f_{ε,δ} of every accountant's (ε, δ).
void tradeoffPlane(const AnalyticsContext& ctx, const std::vector<double>& grid, AnalyticsSnapshot& s) {
  PlotCurve identity = curveOnGrid(grid, [](double x) { return 1.0 - x; });
  identity.id = "identity";
  identity.label = "perfect privacy (1 − x)";
  identity.dashed = true;
  identity.tooltip = "random guessing: no test does better";
  s.tradeoffCurves.push_back(std::move(identity));
  // G_μ first: it is the headline curve of the plane; then every accountant's f_{ε,δ}.
  for (std::size_t i = 0; i < ctx.analytic.size(); ++i) {
    const AccountantSummary& row = s.accountants[i];
    if (!ctx.analytic[i]->info().reportsGdpMu) continue;
    for (const NativeValue& v : row.native) {
      if (v.key != kGdpMuKey) continue;
      PlotCurve g = curveOnGrid(grid, [&](double x) { return gaussianTradeoff(v.value, x); });
      g.id = "tradeoff:" + row.id;
      g.accountant = row.id;
      g.label = "G(μ), μ = " + core::formatNumber(v.value, 3) + " (" + row.id + ")";
      g.greyed = !row.violations.empty();
      g.tooltip = g.greyed ? violationsText(row.violations) : "the Gaussian trade-off G(μ) of " + row.citation;
      if (!g.greyed && row.bound == BoundKind::kUpper && row.epsilon) {
        g.tooltip += " — exact, so its (ε = " + core::formatNumber(row.epsilon->epsilon, 4) + ", δ) lies on it";
      }
      s.tradeoffCurves.push_back(std::move(g));
    }
  }
  for (std::size_t i = 0; i < ctx.analytic.size(); ++i) {
    const AccountantSummary& row = s.accountants[i];
    if (!row.epsilon) continue;
    // An exact μ-GDP analysis: G_μ is its whole curve, and its one (ε, δ) lies on it.
    if (ctx.analytic[i]->info().reportsGdpMu && row.bound == BoundKind::kUpper) continue;
    const double epsilon = row.epsilon->epsilon;
    PlotCurve f = curveOnGrid(grid, [&](double x) { return epsilonDeltaTradeoff(epsilon, ctx.params.delta, x); });
    f.id = "fed:" + row.id;
    f.accountant = row.id;
    f.label = row.id + " (ε = " + core::formatNumber(epsilon, 3) + ")";
    f.greyed = !row.violations.empty();
    f.dashed = ctx.analytic[i]->info().reportsGdpMu;  // G_μ is its curve; one (ε, δ) of it is a reference
    f.tooltip = f.greyed ? violationsText(row.violations)
                         : "Bu, Dong, Long & Su 2020, eq. 2.1: the trade-off every (" + core::formatNumber(epsilon, 4) +
                               ", δ)-DP mechanism meets";
    s.tradeoffCurves.push_back(std::move(f));
  }
}

// The trade-off each RDP accountant's ε_α at the α knob implies on its own (the data-processing
// inequality for Rényi divergence, Balle et al. 2020): below the envelope over all orders.
void renyiSlices(const AnalyticsContext& ctx, const std::vector<double>& grid, AnalyticsSnapshot& s) {
  std::vector<PlotCurve> slices(ctx.analytic.size());
  core::parallelFor(std::size_t{0}, ctx.analytic.size(), [&](std::size_t i) {
    const auto* rdpBased = dynamic_cast<const RdpBasedAccountant*>(ctx.analytic[i]);
    if (!rdpBased) return;
    auto curve = renyiTradeoffCurve(*rdpBased, ctx.params, grid, ctx.atAlpha);
    if (!curve) return;
    const AccountantSummary& row = s.accountants[i];
    const std::string alpha = core::formatNumber(ctx.params.alpha, 4);
    PlotCurve& f = slices[i];
    f.id = "renyi:" + row.id;
    f.accountant = row.id;
    f.label = "f(α) " + row.id + " (α = " + alpha + ")";
    f.greyed = !row.violations.empty();
    f.dashed = true;
    f.tooltip = f.greyed ? violationsText(row.violations)
                         : "what ε(α) = " + core::formatNumber(row.rdpAtAlpha.value_or(0.0), 4) + " at α = " + alpha +
                               " alone certifies (Balle et al. 2020, Rényi DP as hypothesis testing)";
    f.x = curve->typeOne;
    f.y = curve->typeTwo;
  });
  for (PlotCurve& f : slices) {
    if (!f.id.empty()) s.tradeoffCurves.push_back(std::move(f));
  }
}

}  // namespace

AnalyticsSnapshot computeAnalytics(const core::Params& params, Conversion conversion, bool epochsAxis, bool fixedAlpha,
                                   bool draft) {
  const auto start = std::chrono::steady_clock::now();
  AnalyticsContext ctx{params, {}, {}, {}, epochsAxis, fixedAlpha, draft};
  for (const Accountant* a : allAccountants()) {
    if (a->isAnalytic()) ctx.analytic.push_back(a);
  }
  ctx.options.conversion = conversion;
  ctx.atAlpha = ctx.options;
  ctx.atAlpha.fixedAlpha = params.alpha;
  AnalyticsSnapshot s;
  s.params = params;
  s.conversion = conversion;
  s.epochsAxis = epochsAxis;
  s.fixedAlpha = fixedAlpha;
  s.draft = draft;
  summariseAccountants(ctx, s);
  epsilonAlongSteps(ctx, s);
  rdpProfiles(ctx, s);
  const std::vector<double> grid = defaultTypeOneGrid(draft ? kDraftTradeoffPoints : kTradeoffPoints);
  tradeoffPlane(ctx, grid, s);
  renyiSlices(ctx, grid, s);
  s.computeMilliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace dpx::ui
