// The Auditor tab: the trade-off plane an auditor checks an attack against, with the exact PLD
// curve of each neighbouring direction and its bracket, the RDP-optimal envelope, G_μ and the
// f_{ε,δ} envelope; the privacy profile δ(ε); and the threat-model ladder of the last iterate.
// Imported membership scores (File → Import audit scores…) are drawn the same way, against the
// curve claimed by the knobs at import, with their one-line verdict first in the summary.
// When an audit has run (Training and audit tab), its strongest attack is drawn with its
// simultaneous confidence band, the band corners that beat the run's proven curve in red, and
// the audited ε lower bound on the ladder; the summary states μ̂, the f-DP one-run audit and RMIA.
// The curves follow the knobs (computed on a worker while the tab is shown, 150 ms after the
// last change); the audit overlay stays until the next audit.
#pragma once

#include <QCheckBox>
#include <QLabel>
#include <QTimer>
#include <QWidget>
#include <memory>

#include "audit/membership_inference.h"
#include "charts/chart_panel.h"
#include "compute/auditor_analytics.h"
#include "compute/background_job.h"
#include "session/view_controller.h"

namespace dpx::ui {

class ParameterModel;

class AuditorTab : public QWidget {
  Q_OBJECT
 public:
  explicit AuditorTab(ParameterModel* model, QWidget* parent = nullptr);

  ChartPanel* plane() const { return m_plane; }
  ChartPanel* profile() const { return m_profile; }
  ChartPanel* ladder() const { return m_ladder; }
  QList<ChartPanel*> charts() const { return {m_plane, m_profile, m_ladder}; }
  QCheckBox* rocToggle() const { return m_rocToggle; }
  QLabel* summary() const { return m_summary; }
  BackgroundJob* job() { return m_view.job(); }
  std::shared_ptr<const AuditorSnapshot> lastSnapshot() const { return m_snapshot; }

  void showAudit(std::shared_ptr<const core::audit::AuditReport> report);
  // Non-empty: the audit shown is of other knobs or data (what changed); greyed, and said.
  void setAuditStale(const QString& whatChanged);
  void setRocView(bool roc);
  // Recomputes now if the knobs changed since the last computation (the tab was shown).
  void refreshIfStale();

 Q_SIGNALS:
  void snapshotApplied();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void request();
  void apply(std::shared_ptr<const AuditorSnapshot> snapshot);
  void redrawPlane();
  void drawAuditOnPlane(QSet<QString>& keep);
  void redrawLadder();
  void updateSummary();
  void updateImportedSummary();
  ParameterModel* m_model;
  ChartPanel* m_plane;
  ChartPanel* m_profile;
  ChartPanel* m_ladder;
  QCheckBox* m_rocToggle;
  QLabel* m_status;
  QLabel* m_summary;
  ViewController m_view;
  QString m_auditStale;
  bool m_stale = true;
  bool m_roc = false;
  std::shared_ptr<const AuditorSnapshot> m_snapshot;
  std::shared_ptr<const core::audit::AuditReport> m_audit;
};

}  // namespace dpx::ui
