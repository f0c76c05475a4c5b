#include "auditor_tab.h"

#include <QHBoxLayout>
#include <QSet>
#include <QShowEvent>
#include <QSplitter>
#include <QVBoxLayout>

#include "audit/roc.h"
#include "charts/explorer_charts.h"
#include "common/format.h"
#include "session/parameter_model.h"

namespace dpx::ui {

namespace {

constexpr int kSettleMs = 150;
const QColor kAttackColor(200, 30, 30);

QString n(double v, int digits = 4) { return QString::fromStdString(core::formatNumber(v, digits)); }

// Type II error → power in the ROC view.
QVector<QPointF> oriented(QVector<QPointF> points, bool roc) {
  if (roc) {
    for (QPointF& p : points) p.setY(1.0 - p.y());
  }
  return points;
}

const core::audit::AttackReport* attackById(const core::audit::AuditReport& report, const std::string& id) {
  for (const core::audit::AttackReport& a : report.attacks) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

}  // namespace

AuditorTab::AuditorTab(ParameterModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_view(ViewController::Freshness::kNewestOnly, [this] { request(); }) {
  auto* layout = new QVBoxLayout(this);
  auto* toggles = new QHBoxLayout;
  m_rocToggle = new QCheckBox(QStringLiteral("log–log ROC view"), this);
  m_rocToggle->setToolTip(
      QStringLiteral("FPR against TPR on log axes down to 10⁻⁶: where a membership attack's "
                     "low-FPR power, the metric that matters for privacy, is readable"));
  m_status = new QLabel(this);
  m_status->setStyleSheet(QStringLiteral("color: #777;"));
  toggles->addWidget(m_rocToggle);
  toggles->addStretch(1);
  toggles->addWidget(m_status);
  layout->addLayout(toggles);

  m_plane = new ChartPanel(QStringLiteral("Auditor's trade-off plane"), QStringLiteral("type I error (FPR)"),
                           QStringLiteral("type II error (1 − TPR)"), this);
  m_plane->setObjectName(QStringLiteral("auditorPlane"));
  setTradeoffAxes(m_plane, false);
  m_plane->setLegendOnRight(true);
  m_profile = new ChartPanel(QStringLiteral("Privacy profile δ(ε)"), QStringLiteral("ε"), QStringLiteral("δ(ε)"), this);
  m_profile->setObjectName(QStringLiteral("profileChart"));
  m_profile->setLogAxis(Qt::Vertical, true);
  m_profile->setLogFloor(1e-16);
  m_profile->setLegendOnRight(true);
  m_ladder = new ChartPanel(QStringLiteral("Threat models of the last iterate"), QStringLiteral("steps K"),
                            QStringLiteral("ε(δ)"), this);
  m_ladder->setObjectName(QStringLiteral("ladderChart"));
  m_ladder->setHeading(QStringLiteral("Threat models of the last iterate (hover a curve: what it assumes)"));
  m_ladder->setLogAxis(Qt::Horizontal, true);
  m_ladder->setLogAxis(Qt::Vertical, true);
  m_ladder->setLogFloor(1e-6);
  m_ladder->setLegendOnRight(true);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(m_plane);
  auto* right = new QSplitter(Qt::Vertical, split);
  right->addWidget(m_profile);
  right->addWidget(m_ladder);
  split->addWidget(right);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
  m_summary = new QLabel(
      QStringLiteral("Run an audit on the Training and audit tab to draw its ROC with a confidence band here."), this);
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::RichText);
  layout->addWidget(m_summary);

  for (ChartPanel* c : charts()) c->setMessage(QStringLiteral("computing…"));
  connect(m_model, &ParameterModel::paramsChanged, this, [this] {
    m_stale = true;
    if (isVisible()) m_view.schedule(kSettleMs);
  });
  connect(m_model, &ParameterModel::viewChanged, this, [this] {
    m_stale = true;
    if (isVisible()) m_view.schedule(kSettleMs);
  });
  connect(m_model, &ParameterModel::validityChanged, this, [this](bool valid, const QString& message) {
    for (ChartPanel* c : charts()) c->setMessage(valid ? QString() : message);
  });
  connect(m_rocToggle, &QCheckBox::toggled, this, &AuditorTab::setRocView);
  connect(&m_view, &ViewController::progressed, this, [this](double f) {
    m_status->setText(QStringLiteral("computing the exact curves… %1 %").arg(static_cast<int>(100 * f)));
  });
}

void AuditorTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refreshIfStale();
}

void AuditorTab::refreshIfStale() {
  if (m_stale) m_view.schedule(0);
}

void AuditorTab::request() {
  m_stale = false;
  const core::Params params = m_model->lastValid();
  const core::accounting::Conversion conversion = m_model->conversion();
  m_status->setText(QStringLiteral("computing the exact curves…"));
  m_view.run(
      [params, conversion](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) -> std::any {
        auto s = computeAuditorPlane(params, conversion, cancel, progress);
        if (!s) return {};
        return std::make_shared<const AuditorSnapshot>(std::move(*s));
      },
      [this](std::any&& result) {
        if (auto* s = std::any_cast<std::shared_ptr<const AuditorSnapshot>>(&result)) apply(*s);
      });
}

void AuditorTab::apply(std::shared_ptr<const AuditorSnapshot> snapshot) {
  m_snapshot = std::move(snapshot);
  const AuditorSnapshot& s = *m_snapshot;
  m_status->setText(s.error.empty() ? QStringLiteral("exact curves: %1 ms").arg(s.milliseconds, 0, 'f', 0)
                                    : QString::fromStdString(s.error));
  m_status->setStyleSheet(s.error.empty() ? QStringLiteral("color: #777;") : QStringLiteral("color: #b71c1c;"));
  for (ChartPanel* c : charts()) c->setMessage(QString());
  redrawPlane();
  QSet<QString> keep;
  for (const PlotCurve& c : s.profile) {
    keep.insert(QString::fromStdString(c.id));
    CurveStyle style = styleFor(c);
    style.hiddenAtFirst = false;
    m_profile->setCurve(QString::fromStdString(c.id), QString::fromStdString(c.label), toPoints(c), style);
  }
  m_profile->removeCurvesExcept(keep);
  m_profile->setMarker(std::nullopt);
  m_profile->refreshAxes();
  redrawLadder();
  Q_EMIT snapshotApplied();
}

void AuditorTab::setRocView(bool roc) {
  if (m_roc == roc) return;
  m_roc = roc;
  if (m_rocToggle->isChecked() != roc) m_rocToggle->setChecked(roc);
  setTradeoffAxes(m_plane, roc);
  redrawPlane();
}

void AuditorTab::redrawPlane() {
  QSet<QString> keep;
  if (m_snapshot) {
    for (const PlotCurve& c : m_snapshot->plane) {
      const QString id = QString::fromStdString(c.id);
      keep.insert(id);
      CurveStyle style = styleFor(c);
      style.hiddenAtFirst = false;
      m_plane->setCurve(id, QString::fromStdString(c.label), oriented(toPoints(c), m_roc), style);
    }
    QStringList bands;
    for (const PlotBracket& b : m_snapshot->planeBrackets) {
      QVector<QPointF> lower;
      QVector<QPointF> upper;
      for (std::size_t i = 0; i < b.x.size(); ++i) {
        lower.push_back({b.x[i], b.lower[i]});
        upper.push_back({b.x[i], b.upper[i]});
      }
      const QString id = QString::fromStdString(b.id);
      m_plane->setBand(id, oriented(lower, m_roc), oriented(upper, m_roc),
                       QColor::fromRgb(accountantColor(b.accountant)));
      bands << id;
    }
  }
  drawAuditOnPlane(keep);
  m_plane->removeCurvesExcept(keep);
  m_plane->refreshAxes();
}

// The strongest attack's empirical ROC, its simultaneous band, the band corners beyond the
// proven curve of the audited run, and that curve itself.
void AuditorTab::drawAuditOnPlane(QSet<QString>& keep) {
  if (!m_audit || m_audit->attacks.empty()) {
    m_plane->removeBand(QStringLiteral("audit:band"));
    return;
  }
  const core::audit::AuditReport& r = *m_audit;
  const bool imported = r.source == core::audit::AuditSource::kScores;
  const core::audit::AttackReport& best = r.attacks.at(static_cast<std::size_t>(r.bestAttack));
  QVector<QPointF> roc;
  for (const core::audit::RocPoint& p : core::audit::thinRoc(best.roc, 600)) roc.push_back({p.fpr, 1.0 - p.tpr});
  CurveStyle attack;
  attack.color = kAttackColor;
  attack.width = 1.6;
  attack.tooltip =
      imported ? QStringLiteral("empirical ROC of the imported scores")
               : QStringLiteral("empirical ROC of %1 on the audited model").arg(QString::fromStdString(best.name));
  QString label =
      imported ? QStringLiteral("imported scores") : QStringLiteral("attack: %1").arg(QString::fromStdString(best.id));
  if (!m_auditStale.isEmpty()) {
    attack.greyed = true;
    label += QStringLiteral(" (other knobs)");
  }
  m_plane->setCurve(QStringLiteral("audit:roc"), label, oriented(roc, m_roc), attack);
  keep.insert(QStringLiteral("audit:roc"));
  // Band edges: the attack at its best (FPR low, TPR high) and at its worst (FPR high, TPR low).
  QVector<QPointF> strong;
  QVector<QPointF> weak;
  for (const core::audit::RocBandPoint& p : best.band.points) {
    strong.push_back({p.fprLower, 1.0 - p.tprUpper});
    weak.push_back({p.fprUpper, 1.0 - p.tprLower});
  }
  // Both edges start at the same FPR: where the weak edge's TPR is still 0, the band reaches the
  // bottom of the ROC (the top of the trade-off plane).
  if (!strong.isEmpty() && !weak.isEmpty() && strong.front().x() < weak.front().x()) {
    weak.prepend({strong.front().x(), 1.0});
  }
  m_plane->setBand(QStringLiteral("audit:band"), oriented(strong, m_roc), oriented(weak, m_roc), kAttackColor,
                   /*sameX=*/false);
  if (r.provenCurve) {
    QVector<QPointF> proven;
    for (std::size_t i = 0; i < r.provenCurve->typeOne.size(); ++i) {
      proven.push_back({r.provenCurve->typeOne[i], r.provenCurve->typeTwo[i]});
    }
    CurveStyle style;
    style.color = QColor(30, 120, 60);
    style.pen = Qt::DashDotLine;
    style.width = 1.8;
    style.tooltip =
        (imported ? QStringLiteral("the trade-off claimed for the run that produced the scores (%1): a point "
                                   "of the band beyond it contradicts the claim")
                  : QStringLiteral("the proven trade-off of the audited run (%1): a point of the band beyond it "
                                   "contradicts the proof"))
            .arg(QString::fromStdString(r.provenCurveSource));
    m_plane->setCurve(QStringLiteral("audit:proven"),
                      imported ? QStringLiteral("claimed curve (knobs at import)")
                               : QStringLiteral("proven curve of the audited run"),
                      oriented(proven, m_roc), style);
    keep.insert(QStringLiteral("audit:proven"));
  }
  QVector<QPointF> flagged;
  for (int i : r.bandCheck.flagged) {
    const core::audit::RocBandPoint& p = best.band.points.at(static_cast<std::size_t>(i));
    flagged.push_back({p.fprUpper, 1.0 - p.tprLower});
  }
  if (!flagged.isEmpty()) {
    CurveStyle red;
    red.color = QColor(230, 0, 0);
    red.scatter = true;
    red.width = 9.0;
    red.tooltip = imported ? QStringLiteral(
                                 "the band's conservative corner lies beyond the claimed curve: the run that "
                                 "produced the scores does not have the claimed guarantee")
                           : QStringLiteral(
                                 "the band's conservative corner lies beyond the proven curve: a bug in the "
                                 "mechanism or in the accountant");
    m_plane->setCurve(QStringLiteral("audit:flagged"),
                      imported ? QStringLiteral("contradiction (band beyond the claim)")
                               : QStringLiteral("contradiction (band beyond the proof)"),
                      oriented(flagged, m_roc), red);
    keep.insert(QStringLiteral("audit:flagged"));
  }
}

void AuditorTab::redrawLadder() {
  QSet<QString> keep;
  if (m_snapshot) {
    for (const PlotCurve& c : m_snapshot->ladder) {
      const QString id = QString::fromStdString(c.id);
      keep.insert(id);
      CurveStyle style = styleFor(c);
      style.hiddenAtFirst = false;
      m_ladder->setCurve(id, QString::fromStdString(c.label), toPoints(c), style);
    }
    m_ladder->setMarker(static_cast<double>(m_snapshot->params.K), QStringLiteral("current K"));
  }
  // Imported scores have no run of the current knobs' K to mark.
  if (m_audit && m_audit->epsilonLowerBound > 0.0 && m_audit->source == core::audit::AuditSource::kTraining) {
    CurveStyle style;
    style.color = kAttackColor;
    style.scatter = true;
    style.width = 10.0;
    style.tooltip = QStringLiteral("%1 at the audited run's K: no analysis below it can be right")
                        .arg(QString::fromStdString(m_audit->boundMethod));
    const double steps = static_cast<double>(m_audit->training.stepsDone);
    m_ladder->setCurve(QStringLiteral("ladder:audit"),
                       QStringLiteral("audit (%1 %)").arg(n(100 * m_audit->confidence, 3)),
                       {QPointF(steps, m_audit->epsilonLowerBound)}, style);
    keep.insert(QStringLiteral("ladder:audit"));
  }
  m_ladder->removeCurvesExcept(keep);
  m_ladder->refreshAxes();
}

void AuditorTab::showAudit(std::shared_ptr<const core::audit::AuditReport> report) {
  m_audit = std::move(report);
  redrawPlane();
  redrawLadder();
  updateSummary();
}

void AuditorTab::setAuditStale(const QString& whatChanged) {
  if (m_auditStale == whatChanged) return;
  m_auditStale = whatChanged;
  if (!m_audit) return;
  redrawPlane();
  updateSummary();
}

void AuditorTab::updateSummary() {
  if (!m_audit || m_audit->attacks.empty()) return;
  const core::audit::AuditReport& r = *m_audit;
  const core::audit::AttackReport& best = r.attacks.at(static_cast<std::size_t>(r.bestAttack));
  QStringList lines;
  if (r.source == core::audit::AuditSource::kScores) {
    updateImportedSummary();
    return;
  }
  if (!m_auditStale.isEmpty()) {
    lines << QStringLiteral(
                 "<b>This audit trained with other knobs</b> (%1): its attack is greyed, and its proven curve is "
                 "that run's, not the current one. Rerun it in the Training and audit tab.")
                 .arg(m_auditStale.toHtmlEscaped());
  }
  if (r.bandContradiction) {
    lines << QStringLiteral(
                 "<b style='color:#b71c1c'>CONTRADICTION: %1 band point(s) beyond the proven curve — a "
                 "bug in the mechanism or in the accountant.</b>")
                 .arg(r.bandCheck.flagged.size());
  }
  lines << QStringLiteral("<b>%1</b> (strongest, AUC %2): simultaneous band, %3 % over all %4 attacks — %5.")
               .arg(QString::fromStdString(best.name).toHtmlEscaped(), n(best.auc, 3), n(100 * r.confidence, 3),
                    QString::number(r.attacks.size()), QString::fromStdString(best.band.method).toHtmlEscaped());
  if (best.gaussianFit) {
    lines << QStringLiteral("Gaussian-DP fit (Nasr et al. 2023): μ̂ = %1, interval [%2, %3].")
                 .arg(n(best.gaussianFit->muHat, 3), n(best.gaussianFit->muLower, 3), n(best.gaussianFit->muUpper, 3));
  }
  if (r.fdpAudit) {
    lines << QStringLiteral(
                 "f-DP one-run audit (Mahloujifar, Melis & Chaudhuri 2025): the proven curve is %1 at "
                 "%2 % (p = %3); largest μ rejected: %4.")
                 .arg(r.fdpAudit->rejected ? QStringLiteral("<b>rejected</b>") : QStringLiteral("not rejected"),
                      n(100 * r.fdpAudit->confidence, 3), n(r.fdpAudit->pValue, 3), n(r.fdpAudit->muLowerBound, 3));
  }
  lines << QStringLiteral("ε lower bound %1 (%2) against the proven ε %3.")
               .arg(n(r.epsilonLowerBound), QString::fromStdString(r.boundMethod).toHtmlEscaped(),
                    r.epsilonUpperBound ? n(*r.epsilonUpperBound) : QStringLiteral("— (not private)"));
  if (const core::audit::AttackReport* rmia = attackById(r, "rmia")) {
    lines << QStringLiteral("RMIA: AUC %1, TPR %2 at FPR 10⁻³, %3 at FPR 10⁻².")
                 .arg(n(rmia->auc, 3), n(rmia->tprAtFpr1e3, 3), n(rmia->tprAtFpr1e2, 3));
  }
  m_summary->setText(lines.join(QStringLiteral("<br>")));
}

// Imported scores: the verdict first, then what it rests on.
void AuditorTab::updateImportedSummary() {
  const core::audit::AuditReport& r = *m_audit;
  const core::audit::AttackReport& best = r.attacks.at(static_cast<std::size_t>(r.bestAttack));
  QStringList lines;
  if (!m_auditStale.isEmpty()) {
    lines << QStringLiteral(
                 "<b>These scores were checked against other knobs</b> (%1): the claimed curve drawn is that of the "
                 "knobs at import. Import the file again to check them against the current knobs.")
                 .arg(m_auditStale.toHtmlEscaped());
  }
  const QString verdict = QString::fromStdString(r.verdict).toHtmlEscaped();
  lines << (r.contradiction ? QStringLiteral("<b style='color:#b71c1c'>Imported scores: %1</b>").arg(verdict)
                            : QStringLiteral("<b>Imported scores: %1</b>").arg(verdict));
  lines << QStringLiteral("%1 audited records (%2 members), AUC %3; simultaneous band — %4.")
               .arg(QString::number(r.auditedRecords), QString::number(r.auditedMembers), n(best.auc, 3),
                    QString::fromStdString(best.band.method).toHtmlEscaped());
  if (best.gaussianFit) {
    lines << QStringLiteral("Gaussian-DP fit (Nasr et al. 2023): μ̂ = %1, interval [%2, %3].")
                 .arg(n(best.gaussianFit->muHat, 3), n(best.gaussianFit->muLower, 3), n(best.gaussianFit->muUpper, 3));
  }
  if (r.fdpAudit) {
    lines << QStringLiteral(
                 "f-DP one-run audit (Mahloujifar, Melis & Chaudhuri 2025): the claimed curve is %1 (p = %2); "
                 "largest μ rejected: %3.")
                 .arg(r.fdpAudit->rejected ? QStringLiteral("<b>rejected</b>") : QStringLiteral("not rejected"),
                      n(r.fdpAudit->pValue, 3), n(r.fdpAudit->muLowerBound, 3));
  }
  lines << QStringLiteral("Claim: %1.").arg(QString::fromStdString(r.provenCurveSource).toHtmlEscaped());
  m_summary->setText(lines.join(QStringLiteral("<br>")));
}

}  // namespace dpx::ui
