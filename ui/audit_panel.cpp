#include "audit_panel.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include "accounting/tradeoff.h"
#include "common/format.h"
#include "compute/analytics.h"
#include "session/session.h"
#include "training/dataset.h"

namespace dpx::ui {

using namespace core::training;

namespace {

QString n(double v, int digits = 4) { return QString::fromStdString(core::formatNumber(v, digits)); }

// "gdp ≈ 1.2 (estimate)", "rdp ≤ 1.5": every accountant of the mechanism but the one quoted.
QStringList otherAnalyses(const core::audit::AuditReport& report) {
  QStringList others;
  for (const core::audit::AccountantEpsilon& a : report.accountantEpsilons) {
    if (a.accountant == report.accountant) continue;
    const bool upper = a.kind == core::accounting::BoundKind::kUpper;
    others << QStringLiteral("%1 %2 %3%4")
                  .arg(QString::fromStdString(a.accountant), upper ? QStringLiteral("≤") : QStringLiteral("≈"),
                       n(a.epsilon),
                       upper ? (a.applicable ? QString() : QStringLiteral(" (assumptions fail)"))
                             : QStringLiteral(" (estimate)"));
  }
  return others;
}

// The strongest attack and the empirical lower bound against the proven upper bound (and the
// other analyses of the run); a contradiction between the two first, in red.
QString auditSummary(const core::audit::AuditReport& report, const core::audit::AttackReport& best) {
  QString text;
  if (report.contradiction) {
    text += QStringLiteral("<p style='color:white;background:#b71c1c;padding:6px'><b>CONTRADICTION:</b> %1</p>")
                .arg(QString::fromStdString(report.message).toHtmlEscaped());
  }
  text += QStringLiteral("<b>%1</b>: AUC %2, TPR %3 at FPR 1e−3, %4 at 1e−2.<br>")
              .arg(QString::fromStdString(best.name).toHtmlEscaped(), n(best.auc), n(best.tprAtFpr1e3),
                   n(best.tprAtFpr1e2));
  text += QStringLiteral("Empirical ε ≥ <b>%1</b> (%2 confidence, %3)")
              .arg(n(report.epsilonLowerBound), n(100 * report.confidence, 3) + QStringLiteral(" %"),
                   QString::fromStdString(report.boundMethod).toHtmlEscaped());
  if (report.epsilonUpperBound) {
    text += QStringLiteral("; proven ε ≤ <b>%1</b> (%2) at δ = %3.")
                .arg(n(*report.epsilonUpperBound), QString::fromStdString(report.accountant), n(report.delta, 3));
    const QStringList others = otherAnalyses(report);
    if (!others.isEmpty())
      text += QStringLiteral("<br>Other analyses of this run: ") + others.join(QStringLiteral(", ")) + QLatin1Char('.');
  } else {
    text += QStringLiteral("; the model is not private (no upper bound).");
  }
  return text;
}

}  // namespace

AuditPanel::AuditPanel(Session* session, QWidget* parent) : QWidget(parent), m_session(session) {
  setObjectName(QStringLiteral("auditPanel"));
  auto* outer = new QHBoxLayout(this);
  auto* controls = new QWidget(this);
  controls->setMaximumWidth(380);
  auto* grid = new QGridLayout(controls);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(new QLabel(QStringLiteral("<b>Membership-inference audit</b>"), controls), 0, 0, 1, 2);
  buildSettings(grid, controls);
  buildRunControls(grid, controls);
  outer->addWidget(controls);
  buildChart();
  outer->addWidget(m_chart, 1);
  connectControls();
}

// Rows 1–3: the mechanism to attack, the shadow models, the canaries.
void AuditPanel::buildSettings(QGridLayout* grid, QWidget* controls) {
  m_mechanism = new QComboBox(controls);
  for (Mechanism m : allMechanisms())
    m_mechanism->addItem(QString::fromLatin1(mechanismName(m).data()), static_cast<int>(m));
  m_mechanism->setCurrentIndex(m_mechanism->findData(static_cast<int>(Mechanism::kDpSgd)));
  m_mechanism->setToolTip(QStringLiteral("The mechanism to attack, with the trainer panel's data and settings."));
  grid->addWidget(new QLabel(QStringLiteral("mechanism"), controls), 1, 0);
  grid->addWidget(m_mechanism, 1, 1);
  m_shadows = new QSpinBox(controls);
  m_shadows->setRange(1, core::audit::kMaxShadowModels);
  m_shadows->setValue(16);
  m_shadows->setToolTip(QStringLiteral("Reference models on random halves of the data (LiRA, Carlini et al. 2022)."));
  grid->addWidget(new QLabel(QStringLiteral("shadow models"), controls), 2, 0);
  grid->addWidget(m_shadows, 2, 1);
  m_canaries = new QSpinBox(controls);
  m_canaries->setRange(0, 100000);
  m_canaries->setValue(0);
  m_canaries->setToolTip(
      QStringLiteral("Crafted worst-case records (mislabelled points far from the data) audited "
                     "instead of the whole pool."));
  grid->addWidget(new QLabel(QStringLiteral("canaries"), controls), 3, 0);
  grid->addWidget(m_canaries, 3, 1);
}

// Rows 4–6: run and cancel, the progress bar, the summary; row 7 takes the spare height.
void AuditPanel::buildRunControls(QGridLayout* grid, QWidget* controls) {
  auto* buttons = new QHBoxLayout();
  m_run = new QPushButton(QStringLiteral("Run audit"), controls);
  m_run->setObjectName(QStringLiteral("runAuditButton"));
  m_cancel = new QPushButton(QStringLiteral("Cancel"), controls);
  m_cancel->setEnabled(false);
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  grid->addLayout(buttons, 4, 0, 1, 2);
  m_progress = new QProgressBar(controls);
  m_progress->setRange(0, 1000);
  grid->addWidget(m_progress, 5, 0, 1, 2);
  m_summary =
      new QLabel(QStringLiteral("The strongest check of a DP claim is an attack that tries to break it."), controls);
  m_summary->setObjectName(QStringLiteral("auditSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::RichText);
  grid->addWidget(m_summary, 6, 0, 1, 2);
  grid->setRowStretch(7, 1);
}

void AuditPanel::buildChart() {
  m_chart = new ChartPanel(QStringLiteral("Audit: attack vs proven trade-off"), QStringLiteral("type I error (FPR)"),
                           QStringLiteral("type II error (1 − TPR)"), this);
  m_chart->setObjectName(QStringLiteral("auditChart"));
  m_chart->setFixedRange(Qt::Horizontal, std::make_pair(0.0, 1.0));
  m_chart->setFixedRange(Qt::Vertical, std::make_pair(0.0, 1.0));
  m_chart->setMinimumHeight(220);
}

void AuditPanel::connectControls() {
  connect(m_run, &QPushButton::clicked, this, &AuditPanel::runAudit);
  connect(m_cancel, &QPushButton::clicked, this, [this] { m_job.cancel(); });
  connect(&m_job, &BackgroundJob::progressed, this,
          [this](double f) { m_progress->setValue(static_cast<int>(1000 * f)); });
  connect(&m_job, &BackgroundJob::busyChanged, this, [this](bool busy) {
    m_run->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    if (!busy && !m_report) m_summary->setText(QStringLiteral("Audit cancelled."));
  });
}

void AuditPanel::runAudit() {
  QString error;
  std::optional<TrainingRequest> request = m_session->trainingRequest(&error);
  if (!request) {
    m_summary->setText(error.toHtmlEscaped());
    return;
  }
  if (core::Status target = resolveTableTarget(*request); !target.isOk()) {
    m_summary->setText(QString::fromStdString(target.message()).toHtmlEscaped());
    return;
  }
  TrainerConfig config = request->base;
  config.mechanism = static_cast<Mechanism>(m_mechanism->currentData().toInt());
  config.accountant.clear();
  core::audit::AuditConfig audit;
  audit.shadowModels = m_shadows->value();
  audit.canaries = m_canaries->value();
  const DatasetKey dataKey = request->data;
  std::shared_ptr<DatasetCache> cache = m_session->datasets();
  m_report.reset();
  m_reportTag.reset();
  m_reportRun.reset();
  m_progress->setValue(0);
  m_summary->setText(QStringLiteral("Training the target and %1 reference models…").arg(audit.shadowModels));
  m_job.request(
      [config, audit, dataKey, cache](const std::atomic<bool>& cancel,
                                      const BackgroundJob::Progress& progress) mutable -> std::any {
        core::Result<CachedDataset> loaded = cache->get(dataKey);
        if (!loaded) return loaded.status();
        std::shared_ptr<const TrainTestSplit> data = loaded->data;
        config.bounds = loaded->bounds;
        core::Result<std::unique_ptr<Trainer>> trainer = Trainer::create(config, data);
        if (!trainer) return trainer.status();
        audit.cancel = &cancel;
        audit.progress = progress;
        core::Result<core::audit::AuditReport> audited = core::audit::runAudit(**trainer, data, audit);
        if (!audited) return audited.status();
        return std::move(*audited);
      },
      [this, tag = tagOf(*request),
       run = AuditRun{config, dataKey, audit.shadowModels, audit.canaries}](std::any&& result) {
        if (auto* status = std::any_cast<core::Status>(&result)) {
          m_summary->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>")
                                 .arg(QString::fromStdString(status->message()).toHtmlEscaped()));
          return;
        }
        if (auto* audited = std::any_cast<core::audit::AuditReport>(&result)) {
          m_reportRun = run;
          show(*audited, tag);
        }
      });
}

// The audit proves its own target model's ε, which trains on part of the data: the Privacy tab's
// ε is for the knobs' n. Said on screen so the two numbers are not read as one.
QString AuditPanel::whyEpsilonDiffers(const core::audit::AuditReport& report, const ResultTag& tag) const {
  if (!report.epsilonUpperBound || report.targetRecords <= 0) return {};
  const std::int64_t knobN = m_session->model()->params().n;
  if (report.targetRecords == knobN) return {};
  QString text = QStringLiteral(
                     "<br><span style='color:#555'>Why this ε is not the Privacy tab's: the audit's target "
                     "model trains on %1 records (the audit holds the rest of the %2-record pool out, to "
                     "test membership), while the Privacy tab computes ε for n = %3")
                     .arg(report.targetRecords)
                     .arg(report.poolSize)
                     .arg(knobN);
  if (const std::optional<double> headline = m_session->headlineEpsilon()) {
    text += QStringLiteral(" (rdp ε = %1)").arg(QString::fromStdString(core::formatNumber(*headline, 4)));
  }
  text += QStringLiteral("; fewer records mean a larger sampling rate q = m/n and a larger ε.");
  if (!m_session->isCurrent(tag))
    text += QStringLiteral(" It also ran with other knobs: ") + m_session->whatChanged(tag);
  return text + QStringLiteral("</span>");
}

void AuditPanel::show(const core::audit::AuditReport& report, const ResultTag& tag) {
  m_report = report;
  m_reportTag = tag;
  m_progress->setValue(1000);
  const core::audit::AttackReport& best = report.attacks.at(static_cast<std::size_t>(report.bestAttack));
  m_summary->setText(auditSummary(report, best) + whyEpsilonDiffers(report, tag));
  const QVector<QPointF> attack = drawAudit(report, best);
  Q_EMIT auditFinished(
      attack,
      QStringLiteral("attack on %1").arg(QString::fromLatin1(mechanismId(report.training.run.mechanism).data())));
  Q_EMIT reportReady(std::make_shared<const core::audit::AuditReport>(report));
}

// The attack over the trade-off the proof guarantees: every attack must stay on or above it.
// Returns the attack's points (FPR, 1 − TPR).
QVector<QPointF> AuditPanel::drawAudit(const core::audit::AuditReport& report, const core::audit::AttackReport& best) {
  // Every distinct score is a ROC point; a few hundred show the curve without burying the others.
  QVector<QPointF> attack;
  const std::vector<core::audit::RocPoint> thin = core::audit::thinRoc(best.roc, 150);
  for (const core::audit::TradeoffPoint& p : core::audit::tradeoffPoints(thin)) attack.push_back({p.x, p.y});
  CurveStyle points;
  points.color = QColor(200, 30, 30);
  points.scatter = true;
  points.width = 5.0;
  points.tooltip = QStringLiteral("attack operating points (FPR, 1 − TPR)");
  m_chart->setCurve(QStringLiteral("attack"), QString::fromStdString(best.name), attack, points);
  drawReferences(report);
  m_chart->refreshAxes();
  return attack;
}

// Random guessing, and f_{ε,δ} of the proven ε when there is one.
void AuditPanel::drawReferences(const core::audit::AuditReport& report) {
  QVector<QPointF> identity;
  QVector<QPointF> proven;
  for (double x : core::accounting::defaultTypeOneGrid(200)) {
    identity.push_back({x, 1.0 - x});
    if (report.epsilonUpperBound) {
      proven.push_back({x, core::accounting::epsilonDeltaTradeoff(*report.epsilonUpperBound, report.delta, x)});
    }
  }
  CurveStyle grey;
  grey.color = QColor(130, 130, 130);
  grey.pen = Qt::DashLine;
  m_chart->setCurve(QStringLiteral("identity"), QStringLiteral("random guessing"), identity, grey);
  if (!proven.isEmpty()) {
    CurveStyle p;
    p.color = QColor::fromRgb(accountantColor(report.accountant));
    p.tooltip = QStringLiteral("f(ε,δ) of the run's proven ε: no attack can go below it");
    m_chart->setCurve(QStringLiteral("proven"),
                      QStringLiteral("proven f(ε,δ) (%1)").arg(QString::fromStdString(report.accountant)), proven, p);
  } else {
    m_chart->removeCurve(QStringLiteral("proven"));
  }
}

QString AuditPanel::reportSection() const {
  if (!m_report) return {};
  QString html = QStringLiteral("<h2>Membership-inference audit</h2><pre>%1</pre>")
                     .arg(QString::fromStdString(core::audit::describeAudit(*m_report)).toHtmlEscaped());
  return html;
}

}  // namespace dpx::ui
