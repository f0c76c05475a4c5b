#include "compute/analytics.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "accounting/curves.h"
#include "accounting/rdp_based_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "common/format.h"

namespace dpx::ui {

using namespace core::accounting;

std::int64_t epsilonAxisMaxSteps(const core::Params& params) {
  const auto maxK = static_cast<std::int64_t>(core::knobInfo(core::Knob::kK).max);
  return std::clamp<std::int64_t>(10 * params.K, 100, maxK);
}

std::optional<double> tableEpsilon(const core::Params& params, Conversion conversion) {
  EpsilonOptions options;
  options.conversion = conversion;
  const Accountant* rdp = findAccountant("rdp");
  auto e = rdp ? rdp->epsilon(params, options) : core::Result<EpsilonResult>(core::Status::notApplicable("no rdp"));
  if (!e) return std::nullopt;
  return e->epsilon;
}

unsigned accountantColor(const std::string& id) {
  const Accountant* a = findAccountant(id);
  return a ? a->info().color : 0x7f7f7f;
}

std::string violationsText(const std::vector<Violation>& violations) {
  std::string text;
  for (const Violation& v : violations) {
    if (!text.empty()) text += "\n";
    text += v.assumption + ": " + v.reason;
  }
  return text;
}

AnalyticsSnapshot computeAnalytics(const core::Params& params, Conversion conversion, bool epochsAxis,
                                   bool fixedAlpha) {
  const auto start = std::chrono::steady_clock::now();
  AnalyticsSnapshot s;
  s.params = params;
  s.conversion = conversion;
  s.epochsAxis = epochsAxis;
  s.fixedAlpha = fixedAlpha;
  EpsilonOptions options;
  options.conversion = conversion;
  EpsilonOptions atAlpha = options;
  atAlpha.fixedAlpha = params.alpha;

  std::vector<const Accountant*> analytic;
  for (const Accountant* a : allAccountants()) {
    if (a->isAnalytic()) analytic.push_back(a);
  }

  // Table rows, in parallel (each is a handful of order conversions).
  s.accountants.resize(analytic.size());
  tbb::parallel_for(std::size_t{0}, analytic.size(), [&](std::size_t i) {
    const Accountant& a = *analytic[i];
    AccountantSummary& row = s.accountants[i];
    row.id = std::string(a.id());
    row.name = std::string(a.name());
    row.citation = std::string(a.citation());
    row.bound = a.boundKind();
    row.violations = a.check(params);
    row.assumptions = a.assumptions().statements;
    if (auto native = a.native(params)) row.native = *native;
    auto eps = a.epsilon(params, options);
    if (eps) {
      row.epsilon = *eps;
    } else {
      row.error = eps.status().message();
    }
    if (a.hasRdp()) {
      if (auto total = a.rdp(params, params.alpha)) row.rdpAtAlpha = *total;
      if (auto single = a.epsilon(params, atAlpha)) row.epsilonAtAlpha = *single;
    }
  });

  // ε vs K (or epochs), one curve per analytic accountant plus their teaching variants.
  const std::int64_t maxK = epsilonAxisMaxSteps(params);
  CurveSpec spec{CurveVariable::kSteps, 1.0, static_cast<double>(maxK), kEpsilonCurvePoints, true};
  std::vector<double> ks = *curveAxis(spec);
  ks.push_back(static_cast<double>(params.K));
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  const std::vector<AccountantCurve> curves =
      epsilonCurves(analytic, params, CurveVariable::kSteps, ks, fixedAlpha ? atAlpha : options);
  const double toEpochs = static_cast<double>(params.m) / static_cast<double>(params.n);
  s.currentX = epochsAxis ? static_cast<double>(params.K) * toEpochs : static_cast<double>(params.K);
  auto axisValue = [&](double k) { return epochsAxis ? k * toEpochs : k; };
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    const AccountantSummary& row = s.accountants[i];
    PlotCurve c;
    c.id = row.id;
    c.accountant = row.id;
    const bool single = fixedAlpha && analytic[i]->hasRdp();
    c.label = row.id + (row.bound == BoundKind::kEstimate ? " (estimate)" : "") +
              (single ? " (α = " + core::formatNumber(params.alpha, 4) + ")" : "");
    c.greyed = !row.violations.empty();
    c.tooltip = c.greyed ? violationsText(row.violations)
                         : row.name + (single ? ": converted at the α knob only, not the best order" : "");
    for (std::size_t k = 0; k < ks.size(); ++k) {
      if (!curves[i].epsilon[k]) continue;
      c.x.push_back(axisValue(ks[k]));
      c.y.push_back(*curves[i].epsilon[k]);
    }
    s.epsilonCurves.push_back(std::move(c));
  }
  // Variants for teaching, dashed: those whose info has a tooltip (e.g. the composition baseline
  // the Langevin bound beats, the bounded-domain form of the cyclic analysis, which reads D).
  for (const Accountant* a : analytic) {
    for (const Variant& v : a->variants()) {
      if (v.id.empty() || v.tooltip.empty()) continue;
      EpsilonOptions variantOptions = options;
      variantOptions.variant = v.id;
      const AccountantCurve b = epsilonCurve(*a, params, CurveVariable::kSteps, ks, variantOptions);
      PlotCurve c;
      c.id = std::string(a->id()) + ":" + v.id;
      c.accountant = std::string(a->id());
      // "cyclic bounded domain" in the legend; the theorem is in the tooltip.
      c.label = std::string(a->id()) + " " + v.label.substr(0, v.label.find(','));
      c.dashed = true;
      c.tooltip = v.tooltip;
      for (std::size_t k = 0; k < ks.size(); ++k) {
        if (!b.epsilon[k]) continue;
        c.x.push_back(axisValue(ks[k]));
        c.y.push_back(*b.epsilon[k]);
      }
      s.epsilonCurves.push_back(std::move(c));
    }
  }

  // ε_α vs α for the RDP accountants.
  const std::span<const double> orders = defaultOrders();
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    const auto* rdpBased = dynamic_cast<const RdpBasedAccountant*>(analytic[i]);
    if (!rdpBased) continue;
    auto profile = rdpBased->rdpProfile(params, orders);
    if (!profile) continue;
    PlotCurve c;
    c.id = s.accountants[i].id;
    c.accountant = c.id;
    c.label = c.id;
    c.greyed = !s.accountants[i].violations.empty();
    c.tooltip = c.greyed ? violationsText(s.accountants[i].violations) : s.accountants[i].name;
    c.x.assign(orders.begin(), orders.end());
    c.y = *profile;
    s.rdpCurves.push_back(std::move(c));
  }

  // Trade-off plane.
  const std::vector<double> grid = defaultTypeOneGrid(kTradeoffPoints);
  {
    PlotCurve identity;
    identity.id = "identity";
    identity.label = "perfect privacy (1 − x)";
    identity.dashed = true;
    identity.tooltip = "random guessing: no test does better";
    for (double x : grid) {
      identity.x.push_back(x);
      identity.y.push_back(1.0 - x);
    }
    s.tradeoffCurves.push_back(std::move(identity));
  }
  // An accountant whose native parameters include a Gaussian-DP μ has the trade-off G_μ itself.
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    const AccountantSummary& row = s.accountants[i];
    if (!analytic[i]->info().reportsGdpMu) continue;
    for (const NativeValue& v : row.native) {
      if (v.key != kGdpMuKey) continue;
      PlotCurve g;
      g.id = "tradeoff:" + row.id;
      g.accountant = row.id;
      g.label = "G_μ, μ = " + core::formatNumber(v.value, 3) + " (" + row.id + ")";
      g.greyed = !row.violations.empty();
      g.tooltip = g.greyed ? violationsText(row.violations) : "the Gaussian trade-off G_μ of " + row.citation;
      for (double x : grid) {
        g.x.push_back(x);
        g.y.push_back(gaussianTradeoff(v.value, x));
      }
      s.tradeoffCurves.push_back(std::move(g));
    }
  }
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    const AccountantSummary& row = s.accountants[i];
    if (!row.epsilon) continue;
    PlotCurve f;
    f.id = "fed:" + row.id;
    f.accountant = row.id;
    f.label = row.id + " (ε = " + core::formatNumber(row.epsilon->epsilon, 3) + ")";
    f.greyed = !row.violations.empty();
    f.dashed = analytic[i]->info().reportsGdpMu;  // G_μ is its curve; one (ε, δ) of it is a reference
    f.tooltip = f.greyed ? violationsText(row.violations)
                         : "Bu, Dong, Long & Su 2020, eq. 2.1: the trade-off every (" +
                               core::formatNumber(row.epsilon->epsilon, 4) + ", δ)-DP mechanism meets";
    for (double x : grid) {
      f.x.push_back(x);
      f.y.push_back(epsilonDeltaTradeoff(row.epsilon->epsilon, params.delta, x));
    }
    s.tradeoffCurves.push_back(std::move(f));
  }
  // The trade-off each RDP accountant's ε_α at the α knob implies on its own (the data-processing
  // inequality for Rényi divergence, Balle et al. 2020): below the envelope over all orders.
  std::vector<PlotCurve> slices(analytic.size());
  tbb::parallel_for(std::size_t{0}, analytic.size(), [&](std::size_t i) {
    const auto* rdpBased = dynamic_cast<const RdpBasedAccountant*>(analytic[i]);
    if (!rdpBased) return;
    auto curve = renyiTradeoffCurve(*rdpBased, params, grid, atAlpha);
    if (!curve) return;
    const AccountantSummary& row = s.accountants[i];
    PlotCurve& f = slices[i];
    f.id = "renyi:" + row.id;
    f.accountant = row.id;
    f.label = "f_α " + row.id + " (α = " + core::formatNumber(params.alpha, 4) + ")";
    f.greyed = !row.violations.empty();
    f.dashed = true;
    f.tooltip = f.greyed ? violationsText(row.violations)
                         : "what ε_α = " + core::formatNumber(row.rdpAtAlpha.value_or(0.0), 4) +
                               " at α = " + core::formatNumber(params.alpha, 4) +
                               " alone certifies (Balle et al. 2020, Rényi DP as hypothesis testing)";
    f.x = curve->typeOne;
    f.y = curve->typeTwo;
  });
  for (PlotCurve& f : slices) {
    if (!f.id.empty()) s.tradeoffCurves.push_back(std::move(f));
  }
  s.computeMilliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace dpx::ui
