// The Frontier tab's goal-seek group, offscreen, on a tiny digits frontier (DP-SGD, 3 targets, one
// seed, 4 epochs): the answer in words follows the accuracy and budget inputs, the first point
// reaching the accuracy and the best point within the budget are ringed on the chart at the
// frontier's own points, an unreachable accuracy says so and rings nothing, and once the knobs
// move the answer says it is from the earlier knobs.
#include <QSignalSpy>
#include <QTest>
#include <memory>

#include "frontier_panel.h"
#include "goal_seek_box.h"
#include "session/parameter_model.h"
#include "session/session.h"
#include "training/dataset_cache.h"

using namespace dpx::core;
using namespace dpx::core::training;
using namespace dpx::ui;

class TestGoalSeekBox : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void answersFromTheFrontierOnScreen() {
    ParameterModel model;
    Params p = model.params();
    p.n = 1438;  // digits' training split
    p.m = 64;
    p.eta = 0.5;
    p.K = 90;  // 4 epochs
    model.setAll(p, QStringLiteral("small digits run"));
    TrainerSettings t = model.trainer();
    t.source = QStringLiteral("builtin:digits");
    t.mechanisms = {QStringLiteral("dp-sgd")};
    t.targetEpsilon = 1.0;  // the frontier's centre: targets 1/8, 1, 8
    model.setTrainer(t, QStringLiteral("dp-sgd at ε = 1"));
    Session session(&model, std::make_shared<DatasetCache>());
    session.setThreads(2);
    FrontierPanel panel(&session);
    panel.followBox()->setChecked(false);
    panel.pointsBox()->setValue(3);
    panel.seedsBox()->setValue(1);
    panel.resize(1000, 800);
    panel.show();
    GoalSeekBox* goal = panel.goalSeek();
    QVERIFY(goal->answerText().contains(QStringLiteral("Compute a frontier")));

    QSignalSpy done(&panel, &FrontierPanel::frontierFinished);
    QTest::mouseClick(panel.computeButton(), Qt::LeftButton);
    QVERIFY(done.wait(60000));
    QVERIFY(panel.lastResult().has_value());
    const std::vector<FrontierPoint>& points = panel.lastResult()->series.at(0).points;
    QCOMPARE(points.size(), std::size_t(3));
    for (const FrontierPoint& point : points) QVERIFY2(point.ok(), point.error.c_str());
    // The budget starts at the frontier's centre.
    QCOMPARE(goal->epsilonBox()->value(), 1.0);

    // An accuracy the largest target reaches: the first point reaching it is ringed where the
    // frontier draws it.
    const double reachable = std::floor(1000 * points.back().accuracyMean) / 10;  // percent, rounded down
    goal->accuracyBox()->setValue(reachable);
    std::size_t first = 0;
    while (100 * points[first].accuracyMean < reachable) ++first;
    const QString answer = goal->answerText();
    QVERIFY2(answer.startsWith(QStringLiteral("DP-SGD reaches ")), qPrintable(answer));
    QVERIFY2(answer.contains(first == 0 ? QStringLiteral("already at the smallest ε computed")
                                        : QStringLiteral("at ε between")),
             qPrintable(answer));
    const QVector<QPointF> ring = panel.chart()->curvePoints(GoalSeekBox::kReachCurve);
    QCOMPARE(ring.size(), 1);
    QCOMPARE(ring[0].x(), *points[first].epsilon);
    QCOMPARE(ring[0].y(), points[first].accuracyMean);
    QVERIFY(panel.chart()->curvePoints(QStringLiteral("dp-sgd")).contains(ring[0]));
    QCOMPARE(panel.chart()->curvePoints(GoalSeekBox::kGoalLineCurve).value(0).y(), reachable / 100);

    // The budget: the most accurate point whose reported ε is within it.
    goal->epsilonBox()->setValue(8.0);
    std::size_t best = 0;
    for (std::size_t i = 1; i < points.size(); ++i) {
      if (points[i].accuracyMean > points[best].accuracyMean) best = i;
    }
    QCOMPARE(panel.chart()->curvePoints(GoalSeekBox::kBestCurve).value(0).x(), *points[best].epsilon);
    QVERIFY2(goal->answerText().contains(QStringLiteral("DP-SGD at ε ≤ 8: best ")), qPrintable(goal->answerText()));
    goal->epsilonBox()->setValue(0.01);
    QVERIFY(panel.chart()->curvePoints(GoalSeekBox::kBestCurve).isEmpty());
    QVERIFY2(goal->answerText().contains(QStringLiteral("has no point at ε ≤ 0.01")), qPrintable(goal->answerText()));

    // Out of reach: said in words, nothing ringed.
    goal->accuracyBox()->setValue(100.0);
    QVERIFY2(goal->answerText().contains(QStringLiteral("DP-SGD does not reach 100 % at any ε up to 8")),
             qPrintable(goal->answerText()));
    QVERIFY(panel.chart()->curvePoints(GoalSeekBox::kReachCurve).isEmpty());

    // The knobs move on: the answer stays, marked as the earlier knobs'.
    QVERIFY(!goal->answerText().contains(QStringLiteral("earlier knobs")));
    model.setKnob(Knob::kSigma, 3.0);
    QVERIFY2(goal->answerText().startsWith(QStringLiteral("From the frontier of the earlier knobs")),
             qPrintable(goal->answerText()));
    model.undoStack()->undo();
    QVERIFY(!goal->answerText().contains(QStringLiteral("earlier knobs")));
  }
};

QTEST_MAIN(TestGoalSeekBox)
#include "tst_goal_seek_box.moc"
