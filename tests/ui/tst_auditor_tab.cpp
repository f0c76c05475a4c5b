// The Auditor tab: its three charts fill from the knobs when shown (the plane with both PLD
// directions and their brackets, the RDP-optimal envelope, G_μ; the δ(ε) profiles; the ladder's
// rungs), follow a knob, switch to the log–log ROC view, and draw an audit: the ROC, its band,
// the proven curve, red corners for a contradiction, the audited point on the ladder and the
// summary. Nothing non-finite is drawn.
#include <QSignalSpy>
#include <QTest>
#include <cmath>

#include "auditor_tab.h"
#include "session/parameter_model.h"

using namespace dpx;
using namespace dpx::ui;

namespace {

bool allFinite(ChartPanel* chart) {
  for (const QString& id : chart->curveIds()) {
    for (const QPointF& p : chart->curvePoints(id)) {
      if (!std::isfinite(p.x()) || !std::isfinite(p.y())) return false;
    }
  }
  return true;
}

bool waitForSnapshot(AuditorTab& tab, QSignalSpy& spy, int count) {
  return QTest::qWaitFor([&] { return spy.count() >= count; }, 60000) && !tab.job()->busy();
}

// A report whose strongest attack beats a proven curve at its low-FPR corner.
std::shared_ptr<core::audit::AuditReport> syntheticReport(bool contradiction) {
  auto report = std::make_shared<core::audit::AuditReport>();
  core::audit::AttackReport attack;
  attack.id = "lira";
  attack.name = "likelihood ratio (LiRA, online)";
  attack.auc = 0.8;
  attack.roc = {{0.0, 0.0}, {0.01, 0.3}, {0.1, 0.6}, {0.5, 0.9}, {1.0, 1.0}};
  attack.band.confidence = 0.95;
  attack.band.method = "test band";
  attack.band.points = {{0.5, 0.01, 0.005, 0.02, 0.3, 0.25, 0.35}, {0.2, 0.1, 0.08, 0.12, 0.6, 0.55, 0.65}};
  report->attacks.push_back(attack);
  report->bestAttack = 0;
  report->provenCurve = core::accounting::TradeoffCurve{{0.0, 0.5, 1.0}, {1.0, 0.4, 0.0}};
  report->provenCurveSource = "pld";
  report->epsilonLowerBound = 0.7;
  report->confidence = 0.95;
  report->boundMethod = "one-run";
  report->training.stepsDone = 500;
  if (contradiction) {
    report->bandCheck.flagged = {0};
    report->bandContradiction = true;
  }
  return report;
}

}  // namespace

class TestAuditorTab : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void fillsWhenShownAndFollowsKnobs();
  void rocViewIsLogLog();
  void drawsAnAudit();
};

void TestAuditorTab::fillsWhenShownAndFollowsKnobs() {
  ParameterModel model;
  AuditorTab tab(&model);
  QSignalSpy applied(&tab, &AuditorTab::snapshotApplied);
  tab.resize(1400, 800);
  tab.show();
  QVERIFY(waitForSnapshot(tab, applied, 1));
  const QStringList plane = tab.plane()->curveIds();
  for (const char* id : {"identity", "gdp", "rdp:fed", "rdp:envelope", "pld:add", "pld:remove"}) {
    QVERIFY2(plane.contains(QString::fromLatin1(id)), id);
    QVERIFY2(tab.plane()->curvePoints(QString::fromLatin1(id)).size() > 100, id);
  }
  QVERIFY(tab.plane()->bandIds().contains(QStringLiteral("pld:add:bracket")));
  QVERIFY(tab.plane()->bandIds().contains(QStringLiteral("pld:remove:bracket")));
  QVERIFY2(tab.profile()->curveIds().size() >= 3, qPrintable(tab.profile()->curveIds().join(',')));
  const QStringList ladder = tab.ladder()->curveIds();
  for (const char* id : {"ladder:rdp", "ladder:pld", "ladder:sgld", "ladder:cyclic", "ladder:outpert"}) {
    QVERIFY2(ladder.contains(QString::fromLatin1(id)), qPrintable(ladder.join(',')));
  }
  for (ChartPanel* c : tab.charts()) QVERIFY(allFinite(c));
  QCOMPARE(tab.lastSnapshot()->params, model.lastValid());

  // A knob moves: the tab follows with the new run's curves.
  const QVector<QPointF> before = tab.plane()->curvePoints(QStringLiteral("pld:add"));
  model.setKnob(core::Knob::kSigma, 2.0 * model.lastValid().sigma);
  QVERIFY(waitForSnapshot(tab, applied, 2));
  QCOMPARE(tab.lastSnapshot()->params.sigma, model.lastValid().sigma);
  QVERIFY(tab.plane()->curvePoints(QStringLiteral("pld:add")) != before);
  // More noise, weaker attacks: the pessimistic add curve rises at FPR 0.1.
  const auto at = [](const QVector<QPointF>& points, double x) {
    for (const QPointF& p : points) {
      if (p.x() >= x) return p.y();
    }
    return 0.0;
  };
  QVERIFY(at(tab.plane()->curvePoints(QStringLiteral("pld:add")), 0.1) > at(before, 0.1));
}

void TestAuditorTab::rocViewIsLogLog() {
  ParameterModel model;
  AuditorTab tab(&model);
  QSignalSpy applied(&tab, &AuditorTab::snapshotApplied);
  tab.show();
  QVERIFY(waitForSnapshot(tab, applied, 1));
  const QVector<QPointF> tradeoff = tab.plane()->curvePoints(QStringLiteral("pld:add"));
  tab.rocToggle()->setChecked(true);
  QVERIFY(tab.plane()->isLogAxis(Qt::Horizontal));
  QVERIFY(tab.plane()->isLogAxis(Qt::Vertical));
  const QVector<QPointF> roc = tab.plane()->curvePoints(QStringLiteral("pld:add"));
  QCOMPARE(roc.size(), tradeoff.size());
  // Power is 1 − type II error, and the grid reaches FPR 10⁻⁶.
  for (qsizetype i = 0; i < roc.size(); ++i) QVERIFY(std::abs(roc[i].y() - (1.0 - tradeoff[i].y())) < 1e-12);
  double smallest = 1.0;
  for (const QPointF& p : roc) {
    if (p.x() > 0) smallest = std::min(smallest, p.x());
  }
  QVERIFY(smallest <= 1e-6 * 1.0001);
  tab.rocToggle()->setChecked(false);
  QVERIFY(!tab.plane()->isLogAxis(Qt::Horizontal));
}

void TestAuditorTab::drawsAnAudit() {
  ParameterModel model;
  AuditorTab tab(&model);
  QSignalSpy applied(&tab, &AuditorTab::snapshotApplied);
  tab.show();
  QVERIFY(waitForSnapshot(tab, applied, 1));
  tab.showAudit(syntheticReport(false));
  QVERIFY(tab.plane()->curveIds().contains(QStringLiteral("audit:roc")));
  QVERIFY(tab.plane()->curveIds().contains(QStringLiteral("audit:proven")));
  QVERIFY(!tab.plane()->curveIds().contains(QStringLiteral("audit:flagged")));
  QVERIFY(tab.plane()->bandIds().contains(QStringLiteral("audit:band")));
  QVERIFY(tab.ladder()->curveIds().contains(QStringLiteral("ladder:audit")));
  QCOMPARE(tab.ladder()->curvePoints(QStringLiteral("ladder:audit")).value(0), QPointF(500.0, 0.7));
  QVERIFY(!tab.summary()->text().contains(QStringLiteral("CONTRADICTION")));

  tab.showAudit(syntheticReport(true));
  QVERIFY(tab.plane()->curveIds().contains(QStringLiteral("audit:flagged")));
  // The flagged corner is the conservative one: (FPR upper, 1 − TPR lower).
  QCOMPARE(tab.plane()->curvePoints(QStringLiteral("audit:flagged")).value(0), QPointF(0.02, 0.75));
  QVERIFY(tab.summary()->text().contains(QStringLiteral("CONTRADICTION")));
  // The overlay survives a recomputation of the curves.
  model.setKnob(core::Knob::kSigma, 1.5 * model.lastValid().sigma);
  QVERIFY(waitForSnapshot(tab, applied, 2));
  QVERIFY(tab.plane()->curveIds().contains(QStringLiteral("audit:flagged")));
  for (ChartPanel* c : tab.charts()) QVERIFY(allFinite(c));
}

QTEST_MAIN(TestAuditorTab)
#include "tst_auditor_tab.moc"
