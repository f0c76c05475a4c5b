#include "charts/explorer_charts.h"

#include <QSet>
#include <algorithm>
#include <iterator>
#include <map>

#include "accounting/cyclic_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "common/format.h"

namespace dpx::ui {

CurveStyle styleFor(const PlotCurve& curve) {
  CurveStyle style;
  style.color = QColor::fromRgb(accountantColor(curve.accountant));
  if (curve.accountant.empty()) style.color = QColor(120, 120, 120);
  style.pen = curve.dashed ? Qt::DashLine : Qt::SolidLine;
  style.width = curve.dashed ? 1.5 : 2.2;
  style.greyed = curve.greyed;
  style.tooltip = QString::fromStdString(curve.tooltip);
  // Variants are there to teach; they start hidden so the headline bounds set the scale.
  style.hiddenAtFirst = curve.dashed && curve.id.find(':') != std::string::npos && curve.id.rfind("fed:", 0) != 0 &&
                        curve.id != pldLowerCurveId() && curve.id.rfind("limit:", 0) != 0 &&
                        curve.id.rfind("renyi:", 0) != 0;
  if (curve.id.rfind("renyi:", 0) == 0) {  // what one Rényi order alone certifies: dotted, beside f_{ε,δ}
    style.pen = Qt::DotLine;
    style.width = 1.8;
    style.inLegend = false;  // its accountant's f_{ε,δ} entry shows and hides both
  }
  if (curve.id.rfind("renyi:", 0) == 0 || curve.id.rfind("fed:", 0) == 0) {
    style.group = QString::fromStdString("tradeoff:" + curve.accountant);
  }
  if (curve.id == "current") style.color = QColor(20, 20, 20);
  if (curve.id.rfind("limit:", 0) == 0) {
    // One legend entry ("analyses' limits") shows and hides every limit line; each line's
    // tooltip names its bound and paper.
    style.group = QStringLiteral("limits");
    style.inLegend = !curve.label.empty();
  }
  return style;
}

// Ranges before axes: switching an axis re-ranges it, and a log axis given 0 warns.
void setTradeoffAxes(ChartPanel* chart, bool roc) {
  chart->setLogFloor(1e-6);
  chart->setFixedRange(Qt::Horizontal, std::make_pair(1e-6, 1.0));  // fits both kinds of axis meanwhile
  chart->setFixedRange(Qt::Vertical, std::make_pair(1e-6, 1.0));
  chart->setLogAxis(Qt::Horizontal, roc);
  chart->setLogAxis(Qt::Vertical, roc);
  chart->setFixedRange(Qt::Horizontal, roc ? std::make_pair(1e-6, 1.0) : std::make_pair(0.0, 1.0));
  chart->setFixedRange(Qt::Vertical, roc ? std::make_pair(1e-6, 1.0) : std::make_pair(0.0, 1.0));
  chart->setAxisTitle(Qt::Vertical,
                      roc ? QStringLiteral("power 1 − type II (TPR)") : QStringLiteral("type II error (1 − TPR)"));
}

QVector<QPointF> toPoints(const PlotCurve& curve) {
  QVector<QPointF> points;
  points.reserve(static_cast<qsizetype>(curve.x.size()));
  for (std::size_t i = 0; i < curve.x.size() && i < curve.y.size(); ++i) points.push_back({curve.x[i], curve.y[i]});
  return points;
}

namespace {

// One colour per legend entry: entries that share their accountant's colour (the step-size
// chart's four sgmcmc lines, an accountant's ε beside its G(μ)) get lighter and darker shades of
// it, in order, and the curves grouped with an entry follow it.
void shadeRepeatedColours(const std::vector<PlotCurve>& curves, std::vector<CurveStyle>& styles) {
  constexpr int kLightnessSteps[] = {0, -70, 55, -115, 95, -40, 30};
  std::map<QRgb, int> seen;
  std::map<QString, QColor> groupColour;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    CurveStyle& style = styles[i];
    // Neutral greys (references, limits) are told apart by their pens.
    if (!style.inLegend || style.color.hslSaturation() == 0) continue;
    const int k = seen[style.color.rgb()]++;
    if (k == 0) continue;
    const int shift = kLightnessSteps[k % std::size(kLightnessSteps)];
    QColor shaded = QColor::fromHsl(style.color.hslHue(), style.color.hslSaturation(),
                                    std::clamp(style.color.lightness() + shift, 25, 215), style.color.alpha());
    style.color = shaded;
    if (!style.group.isEmpty()) groupColour[style.group] = shaded;
  }
  for (CurveStyle& style : styles) {
    if (style.inLegend || style.group.isEmpty()) continue;
    if (const auto it = groupColour.find(style.group); it != groupColour.end()) style.color = it->second;
  }
}

void showCurves(ChartPanel* chart, const std::vector<PlotCurve>& curves, const QStringList& extraKeep = {}) {
  QSet<QString> keep(extraKeep.begin(), extraKeep.end());
  std::vector<CurveStyle> styles;
  styles.reserve(curves.size());
  for (const PlotCurve& c : curves) styles.push_back(styleFor(c));
  shadeRepeatedColours(curves, styles);
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const PlotCurve& c = curves[i];
    const QString id = QString::fromStdString(c.id);
    keep.insert(id);
    chart->setCurve(id, QString::fromStdString(c.label), toPoints(c), styles[i]);
  }
  chart->removeCurvesExcept(keep);
}

}  // namespace

ExplorerCharts::ExplorerCharts(QWidget* parent) : QObject(parent) {
  m_epsilon = new ChartPanel(QStringLiteral("ε(δ) vs steps"), QStringLiteral("steps K"), QStringLiteral("ε"), parent);
  m_epsilon->setObjectName(QStringLiteral("epsilonChart"));
  m_epsilon->setLogAxis(Qt::Horizontal, true);
  m_epsilon->setLogAxis(Qt::Vertical, true);
  m_epsilon->setLogFloor(1e-6);
  m_rdp = new ChartPanel(QStringLiteral("Rényi DP of the run"), QStringLiteral("order α"),
                         QStringLiteral("ε<sub>α</sub>"), parent);
  m_rdp->setObjectName(QStringLiteral("rdpChart"));
  m_rdp->setLogAxis(Qt::Horizontal, true);
  m_rdp->setLogAxis(Qt::Vertical, true);
  m_rdp->setLogFloor(1e-12);
  m_rdp->setFixedRange(Qt::Horizontal, std::make_pair(1.0, 1024.0));  // the order grid
  m_tradeoff = new ChartPanel(QStringLiteral("Trade-off: hypothesis testing"), QStringLiteral("type I error (FPR)"),
                              QStringLiteral("type II error (1 − TPR)"), parent);
  m_tradeoff->setObjectName(QStringLiteral("tradeoffChart"));
  m_tradeoff->setFixedRange(Qt::Horizontal, std::make_pair(0.0, 1.0));
  m_tradeoff->setFixedRange(Qt::Vertical, std::make_pair(0.0, 1.0));
  m_stepsize = new ChartPanel(QStringLiteral("Step sizes that meet a target ε"), QStringLiteral("target ε"),
                              QStringLiteral("step size η"), parent);
  m_stepsize->setObjectName(QStringLiteral("stepsizeChart"));
  m_stepsize->setLogAxis(Qt::Horizontal, true);
  m_stepsize->setLogAxis(Qt::Vertical, true);
  m_stepsize->setLogFloor(1e-12);
  m_stepsize->setMessage(QStringLiteral("computing step-size bounds…"));
  for (ChartPanel* c : {m_epsilon, m_rdp, m_tradeoff, m_stepsize}) c->setLegendOnRight(true);
}

void ExplorerCharts::showAnalytics(const AnalyticsSnapshot& s) {
  m_epsilon->setAxisTitle(Qt::Horizontal, s.epochsAxis ? QStringLiteral("epochs") : QStringLiteral("steps K"));
  QStringList keep;
  if (m_pldShown) {
    keep << QString::fromStdString(pldUpperCurveId()) << QString::fromStdString(pldLowerCurveId())
         << QString::fromStdString(shuffleCurveId());
  }
  keep << pinnedIds(m_epsilon);
  m_epsilon->deferRedraws();
  showCurves(m_epsilon, s.epsilonCurves, keep);
  m_epsilon->setMarker(s.currentX, s.epochsAxis ? QStringLiteral("current epochs") : QStringLiteral("current K"));
  m_epsilon->refreshAxes();
  m_rdp->deferRedraws();
  showCurves(m_rdp, s.rdpCurves, pinnedIds(m_rdp));
  m_rdp->setMarker(s.params.alpha, QStringLiteral("α"));
  m_rdp->refreshAxes();
  m_tradeoffCurves = s.tradeoffCurves;
  m_tradeoff->setHeading(QStringLiteral("Trade-off: f<sub>ε,δ</sub> solid, f<sub>α</sub> at α = %1 dotted")
                             .arg(QString::fromStdString(core::formatNumber(s.params.alpha, 4))));
  redrawTradeoff();
  Q_EMIT updated();
}

void ExplorerCharts::showPinned(std::shared_ptr<const AnalyticsSnapshot> pinned, const QString& label) {
  m_pinned = std::move(pinned);
  m_pinnedLabel = label;
  m_epsilon->deferRedraws();
  drawPinned(m_epsilon, m_pinned ? &m_pinned->epsilonCurves : nullptr);
  m_epsilon->refreshAxes();
  m_rdp->deferRedraws();
  drawPinned(m_rdp, m_pinned ? &m_pinned->rdpCurves : nullptr);
  m_rdp->refreshAxes();
}

QStringList ExplorerCharts::pinnedIds(const ChartPanel* chart) const {
  QStringList ids;
  for (const QString& id : chart->curveIds()) {
    if (id.startsWith(pinnedCurvePrefix())) ids << id;
  }
  return ids;
}

void ExplorerCharts::drawPinned(ChartPanel* chart, const std::vector<PlotCurve>* curves) {
  QSet<QString> drawn;
  if (curves) {
    for (const PlotCurve& c : *curves) {
      CurveStyle style = styleFor(c);
      if (style.greyed || c.id == "current") continue;  // A's answers that apply, as B's legend reads them
      const bool first = drawn.isEmpty();
      style.color.setAlpha(120);
      style.pen = Qt::DashLine;
      style.width = 1.5;
      style.scatter = false;
      style.markers = false;
      style.hiddenAtFirst = false;
      style.group = pinnedCurvePrefix();
      style.fitsAxes = false;
      style.inLegend = first;
      style.tooltip = QStringLiteral("A (pinned): %1 — %2").arg(m_pinnedLabel, QString::fromStdString(c.label));
      const QString id = pinnedCurvePrefix() + QString::fromStdString(c.id);
      chart->setCurve(id, first ? QStringLiteral("A (pinned)") : QString::fromStdString(c.label), toPoints(c), style);
      drawn.insert(id);
    }
  }
  for (const QString& id : pinnedIds(chart)) {
    if (!drawn.contains(id)) chart->removeCurve(id);
  }
}

void ExplorerCharts::showPld(const PldSnapshot& s) {
  m_pldShown = true;
  m_epsilon->deferRedraws();
  if (!s.epsilonUpper.x.empty()) {
    m_epsilon->setCurve(QString::fromStdString(pldUpperCurveId()), QString::fromStdString(s.epsilonUpper.label),
                        toPoints(s.epsilonUpper), styleFor(s.epsilonUpper));
    m_epsilon->setCurve(QString::fromStdString(pldLowerCurveId()), QString::fromStdString(s.epsilonLower.label),
                        toPoints(s.epsilonLower), styleFor(s.epsilonLower));
  }
  // Before its stage has run, the shuffle curve stays as it was, like the pld curves while a new
  // bracket is computed.
  if (s.shuffleDone && !s.shuffleCurve.x.empty()) {
    m_epsilon->setCurve(QString::fromStdString(shuffleCurveId()), QString::fromStdString(s.shuffleCurve.label),
                        toPoints(s.shuffleCurve), styleFor(s.shuffleCurve));
  } else if (s.shuffleDone || !s.error.empty()) {
    m_epsilon->removeCurve(QString::fromStdString(shuffleCurveId()));
  }
  if (s.shuffleDone && !s.randomAllocationCurve.x.empty()) {
    m_epsilon->setCurve(QString::fromStdString(randomAllocationCurveId()),
                        QString::fromStdString(s.randomAllocationCurve.label), toPoints(s.randomAllocationCurve),
                        styleFor(s.randomAllocationCurve));
  } else if (s.shuffleDone || !s.error.empty()) {
    m_epsilon->removeCurve(QString::fromStdString(randomAllocationCurveId()));
  }
  m_epsilon->refreshAxes();
  if (!s.tradeoff.x.empty()) m_pldTradeoff = s.tradeoff;
  redrawTradeoff();
}

void ExplorerCharts::clearPld() {
  m_pldShown = false;
  m_pldTradeoff.reset();
  m_epsilon->removeCurve(QString::fromStdString(pldUpperCurveId()));
  m_epsilon->removeCurve(QString::fromStdString(pldLowerCurveId()));
  m_epsilon->removeCurve(QString::fromStdString(shuffleCurveId()));
  m_epsilon->removeCurve(QString::fromStdString(randomAllocationCurveId()));
  redrawTradeoff();
}

void ExplorerCharts::showStepsize(const StepsizeSnapshot& s) {
  std::vector<PlotCurve> curves = s.curves;
  const std::string_view sgld = core::accounting::accountantOf<core::accounting::SgldAccountant>().id();
  const std::string_view cyclic = core::accounting::accountantOf<core::accounting::CyclicAccountant>().id();
  for (PlotCurve& c : curves) {
    // "sgld: smallest η (Ryffel et al. 2022, Thm 3.1)": the legend keeps what, the tooltip why.
    const std::size_t paren = c.label.find(" (");
    if ((c.id == sgld || c.id == cyclic) && paren != std::string::npos) {
      c.tooltip = c.label + ". " + c.tooltip;
      c.label = c.label.substr(0, paren);
    }
  }
  // The lines span the chart's target range, [ε/20, 20ε] around the reference ε.
  const double lo = s.referenceEpsilon / kStepsizeSpread;
  const double hi = s.referenceEpsilon * kStepsizeSpread;
  for (const core::accounting::StepSizeLimit& l : s.limits) {
    if (l.id == "sgmcmc_upper") continue;  // N/L² is far above every other line
    PlotCurve c;
    c.id = "limit:" + l.id;
    // Six bounds with their papers do not fit beside the chart: the tooltip of each line says
    // which it is ("η < 1/β (Ryffel et al. 2022, Lemma 3.3) = 1"); the legend has one entry.
    c.label = "η limits (hover a line)";
    c.dashed = true;
    c.tooltip = "step-size limit of an analysis: " + l.label + " = " + core::formatNumber(l.eta, 4);
    if (curves.size() > s.curves.size()) c.label.clear();  // one legend entry for all the limits
    c.x = {lo, hi};
    c.y = {l.eta, l.eta};
    curves.push_back(std::move(c));
  }
  PlotCurve current;
  current.id = "current";
  current.label = "current η = " + core::formatNumber(s.params.eta, 4);
  current.x = {lo, hi};
  current.y = {s.params.eta, s.params.eta};
  current.tooltip = s.epsilonAtCurrentEta
                        ? "this η spends ε = " + core::formatNumber(*s.epsilonAtCurrentEta, 4) + " (sgmcmc, fixed step)"
                        : "the current step size";
  curves.push_back(std::move(current));
  m_stepsize->deferRedraws();
  showCurves(m_stepsize, curves);
  m_stepsize->setMarker(s.referenceEpsilon, QStringLiteral("target ε"));
  m_stepsize->setMessage(s.error.empty() ? QString() : QString::fromStdString(s.error));
  m_stepsize->refreshAxes();
}

void ExplorerCharts::showAudit(const QVector<QPointF>& points, const QString& label) {
  PlotCurve c;
  c.id = "audit";
  c.label = label.toStdString();
  c.accountant = "audit";
  for (const QPointF& p : points) {
    c.x.push_back(p.x());
    c.y.push_back(p.y());
  }
  c.tooltip = "empirical membership-inference attack on the trained model: every theoretical curve must lie below it";
  m_audit = c;
  redrawTradeoff();
}

void ExplorerCharts::setAuditStale(const QString& whatChanged) {
  if (m_auditStale == whatChanged) return;
  m_auditStale = whatChanged;
  if (m_audit) redrawTradeoff();
}

void ExplorerCharts::clearAudit() {
  m_audit.reset();
  redrawTradeoff();
}

void ExplorerCharts::setRocView(bool roc) {
  if (m_roc == roc) return;
  m_roc = roc;
  setTradeoffAxes(m_tradeoff, roc);
  redrawTradeoff();
}

void ExplorerCharts::redrawTradeoff() {
  std::vector<PlotCurve> curves = m_tradeoffCurves;
  if (m_pldTradeoff) curves.push_back(*m_pldTradeoff);
  m_tradeoff->deferRedraws();
  QSet<QString> keep;
  std::vector<CurveStyle> styles;
  styles.reserve(curves.size());
  for (const PlotCurve& c : curves) styles.push_back(styleFor(c));
  shadeRepeatedColours(curves, styles);
  for (std::size_t i = 0; i < curves.size(); ++i) {
    PlotCurve c = curves[i];
    if (m_roc) {
      for (double& y : c.y) y = 1.0 - y;  // ROC: power instead of type II error
    }
    const QString id = QString::fromStdString(c.id);
    keep.insert(id);
    m_tradeoff->setCurve(id, QString::fromStdString(c.label), toPoints(c), styles[i]);
  }
  if (m_audit) {
    PlotCurve c = *m_audit;
    if (m_roc) {
      for (double& y : c.y) y = 1.0 - y;
    }
    CurveStyle style = styleFor(c);
    style.color = QColor(200, 30, 30);
    style.scatter = true;
    style.width = 5.0;
    QString label = QString::fromStdString(c.label);
    if (!m_auditStale.isEmpty()) {
      // An attack on a model of other knobs says nothing about the curves of these.
      style.greyed = true;
      label += QStringLiteral(" — of other knobs");
      style.tooltip = QStringLiteral("this audit trained with %1: rerun it for the current knobs").arg(m_auditStale);
    }
    m_tradeoff->setCurve(QStringLiteral("audit"), label, toPoints(c), style);
    keep.insert(QStringLiteral("audit"));
  }
  m_tradeoff->removeCurvesExcept(keep);
  m_tradeoff->refreshAxes();
}

void ExplorerCharts::setDraftDrawing(bool draft) {
  for (ChartPanel* c : all()) c->setDraftDrawing(draft);
}

void ExplorerCharts::setMessage(const QString& text) {
  for (ChartPanel* c : {m_epsilon, m_rdp, m_tradeoff}) c->setMessage(text);
}

}  // namespace dpx::ui
