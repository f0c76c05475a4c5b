// The membership-inference audit in the GUI (issue: audit view): attack the model the trainer
// panel's settings produce, draw the empirical ROC points on the trade-off plane over the
// theoretical curve of the run's proven ε, and state the empirical ε lower bound next to the
// accountant's upper bound — loudly when the lower bound exceeds it.
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <optional>

#include "audit/membership_inference.h"
#include "charts/chart_panel.h"
#include "compute/background_job.h"
#include "session/session.h"

class QGridLayout;

namespace dpx::ui {

// What an audit attacked: the run's configuration and data, and the attack's own settings (the
// spin boxes may have moved since).
struct AuditRun {
  core::training::TrainerConfig config;
  core::training::DatasetKey data;
  int shadowModels = 0;
  std::int64_t canaries = 0;
};

class AuditPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AuditPanel(Session* session, QWidget* parent = nullptr);
  void runAudit();
  const std::optional<core::audit::AuditReport>& report() const { return m_report; }
  // The knobs and data the report's target model trained with.
  const std::optional<ResultTag>& reportTag() const { return m_reportTag; }
  const std::optional<AuditRun>& reportRun() const { return m_reportRun; }
  QString reportSection() const;  // HTML for the exported report
  ChartPanel* chart() const { return m_chart; }
  QSpinBox* shadowBox() const { return m_shadows; }
  QSpinBox* canaryBox() const { return m_canaries; }
  QLabel* summary() const { return m_summary; }
  BackgroundJob* job() { return &m_job; }

 Q_SIGNALS:
  // (FPR, 1 − TPR) of the strongest attack, for the explorer's trade-off chart.
  void auditFinished(const QVector<QPointF>& tradeoff, const QString& label);
  // The whole report (band, μ̂, f-DP audit, every attack), for the Auditor tab.
  void reportReady(std::shared_ptr<const core::audit::AuditReport> report);

 private:
  QString whyEpsilonDiffers(const core::audit::AuditReport& report, const ResultTag& tag) const;
  void buildSettings(QGridLayout* grid, QWidget* controls);
  void buildRunControls(QGridLayout* grid, QWidget* controls);
  void buildChart();
  void connectControls();
  void show(const core::audit::AuditReport& report, const ResultTag& tag);
  QVector<QPointF> drawAudit(const core::audit::AuditReport& report, const core::audit::AttackReport& best);
  void drawReferences(const core::audit::AuditReport& report);
  Session* m_session;
  QComboBox* m_mechanism;
  QSpinBox* m_shadows;
  QSpinBox* m_canaries;
  QPushButton* m_run;
  QPushButton* m_cancel;
  QProgressBar* m_progress;
  QLabel* m_summary;
  ChartPanel* m_chart;
  BackgroundJob m_job{true};
  std::optional<core::audit::AuditReport> m_report;
  std::optional<ResultTag> m_reportTag;
  std::optional<AuditRun> m_reportRun;
};

}  // namespace dpx::ui
