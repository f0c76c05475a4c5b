// The four privacy charts (ε vs K, RDP vs α, trade-off plane, step-size bounds) fed
// from the analytic, PLD, step-size and audit snapshots. Accountants whose assumptions fail are
// drawn greyed and dashed with the reason in their tooltip; nothing non-finite is plotted.
#pragma once

#include <QObject>
#include <QVector>
#include <memory>

#include "charts/chart_panel.h"
#include "compute/analytics.h"
#include "compute/slow_analytics.h"

namespace dpx::ui {

CurveStyle styleFor(const PlotCurve& curve);
QVector<QPointF> toPoints(const PlotCurve& curve);
// A trade-off plane's axes: [0, 1]² linear, or the ROC view (power against type I error) on
// log–log axes from 10⁻⁶.
void setTradeoffAxes(ChartPanel* chart, bool roc);

class ExplorerCharts : public QObject {
  Q_OBJECT
 public:
  explicit ExplorerCharts(QWidget* parent);
  ChartPanel* epsilon() const { return m_epsilon; }
  ChartPanel* rdp() const { return m_rdp; }
  ChartPanel* tradeoff() const { return m_tradeoff; }
  ChartPanel* stepsize() const { return m_stepsize; }
  QList<ChartPanel*> all() const { return {m_epsilon, m_rdp, m_tradeoff, m_stepsize}; }

  void showAnalytics(const AnalyticsSnapshot& snapshot);
  void showPld(const PldSnapshot& snapshot);
  void clearPld();
  void showStepsize(const StepsizeSnapshot& snapshot);
  // Empirical membership-inference points (FPR, 1 − TPR) and the attack's curve.
  void showAudit(const QVector<QPointF>& tradeoffPoints, const QString& label);
  void clearAudit();
  // Non-empty: the audit on the plane is of other knobs or data (what changed); drawn greyed.
  void setAuditStale(const QString& whatChanged);
  // ROC view: type I vs power (1 − type II) on log–log axes.
  void setRocView(bool roc);
  bool rocView() const { return m_roc; }
  // Ghosts of a pinned configuration (A) beside the current curves: the ε and Rényi charts draw
  // its curves that apply, in their colours but thin and dashed, under one legend entry that
  // shows or hides them together. Null removes them.
  void showPinned(std::shared_ptr<const AnalyticsSnapshot> pinned, const QString& label);
  static QString pinnedCurvePrefix() { return QStringLiteral("pinned/"); }
  void setMessage(const QString& text);  // on every chart (invalid parameters)
  void setDraftDrawing(bool draft);      // every chart (see ChartPanel::setDraftDrawing)

 Q_SIGNALS:
  void updated();  // all analytic charts replaced (benchmarks, tests)

 private:
  void redrawTradeoff();
  void drawPinned(ChartPanel* chart, const std::vector<PlotCurve>* curves);
  QStringList pinnedIds(const ChartPanel* chart) const;
  ChartPanel* m_epsilon;
  ChartPanel* m_rdp;
  ChartPanel* m_tradeoff;
  ChartPanel* m_stepsize;
  bool m_roc = false;
  std::vector<PlotCurve> m_tradeoffCurves;  // last analytic + pld + audit curves, in data space
  std::optional<PlotCurve> m_pldTradeoff;
  std::optional<PlotCurve> m_audit;
  QString m_auditStale;
  bool m_pldShown = false;
  std::shared_ptr<const AnalyticsSnapshot> m_pinned;
  QString m_pinnedLabel;
};

}  // namespace dpx::ui
