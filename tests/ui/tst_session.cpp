// The GUI's application layer without widgets: the training request is built once from the knobs,
// the trainer's settings and the run settings; the headline ε stands for the knobs that produced
// it and no others; a typed target wins over it; a network's request leaves out the mechanisms
// whose analyses need a convex loss; a run's end reaches every view through the session.
#include <QSignalSpy>
#include <QTest>

#include "compute/analytics.h"
#include "session/session.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::training;
using namespace dpx::ui;

namespace {

std::shared_ptr<DatasetCache> freshCache() { return std::make_shared<DatasetCache>(); }

}  // namespace

class TestSession : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void requestCarriesKnobsSettingsAndRunSettings() {
    ParameterModel model;
    Session session(&model, freshCache());
    QSignalSpy changed(&session, &Session::runSettingsChanged);
    session.setSeed(7);
    session.setThreads(1);
    session.setSeed(7);  // no change, no signal
    QCOMPARE(changed.count(), 2);
    model.setKnob(Knob::kM, 128);
    QString error;
    const std::optional<TrainingRequest> request = session.trainingRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QCOMPARE(request->base.knobs.m, std::int64_t(128));
    QCOMPARE(request->base.seed, std::uint64_t(7));
    QCOMPARE(request->base.threads, 1);
    QCOMPARE(request->data.splitSeed, std::uint64_t(7));
    QCOMPARE(QString::fromStdString(request->data.source), model.trainer().source);
    QCOMPARE(request->data.features, model.trainer().features);
    QCOMPARE(request->base.epochs, nominalEpochs(model.params()));
    QCOMPARE(request->mechanisms.size(), static_cast<std::size_t>(model.trainer().mechanisms.size()));
    QVERIFY(session.dataKey() == request->data);
  }

  void requestRefusedWithTheReason() {
    ParameterModel model;
    Session session(&model, freshCache());
    QString error;
    TrainerSettings settings = model.trainer();
    settings.source.clear();
    model.setTrainer(settings, QStringLiteral("no data"));
    QVERIFY(!session.trainingRequest(&error));
    QVERIFY2(error.contains(QStringLiteral("Choose a dataset")), qPrintable(error));
    model.undoStack()->undo();
    model.setKnob(Knob::kM, 70000);  // > n
    QVERIFY(!session.trainingRequest(&error));
    QVERIFY2(error.contains(QStringLiteral("The knobs are invalid")), qPrintable(error));
    model.undoStack()->undo();
    settings = model.trainer();
    settings.mechanisms.clear();
    model.setTrainer(settings, QStringLiteral("nothing ticked"));
    QVERIFY(!session.trainingRequest(&error));
    QVERIFY2(error.contains(QStringLiteral("Tick at least one mechanism")), qPrintable(error));
  }

  // The headline ε is the knobs' only while they are the knobs that produced it; the trainer's
  // typed target wins over it; without either, the worker computes it from the table's rule.
  void headlineEpsilonStandsForItsKnobs() {
    ParameterModel model;
    Session session(&model, freshCache());
    QSignalSpy headline(&session, &Session::headlineEpsilonChanged);
    session.setHeadlineEpsilon(model.params(), 2.5);
    QCOMPARE(headline.count(), 1);
    QCOMPARE(session.headlineEpsilon().value_or(0.0), 2.5);
    QCOMPARE(session.defaultTarget().value_or(0.0), 2.5);
    QString error;
    std::optional<TrainingRequest> request = session.trainingRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QCOMPARE(request->base.targetEpsilon.value_or(0.0), 2.5);
    QVERIFY(!request->targetFromTable);

    model.setKnob(Knob::kSigma, model.params().sigma * 2.0);
    QVERIFY(!session.headlineEpsilon());
    request = session.trainingRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QVERIFY(!request->base.targetEpsilon);
    QVERIFY(request->targetFromTable);
    QCOMPARE(*request->targetFromTable, model.conversion());

    TrainerSettings settings = model.trainer();
    settings.targetEpsilon = 1.5;
    model.setTrainer(settings, QStringLiteral("typed target"));
    QCOMPARE(session.defaultTarget().value_or(0.0), 1.5);
    request = session.trainingRequest(&error);
    QCOMPARE(request->base.targetEpsilon.value_or(0.0), 1.5);

    settings.calibrate = false;
    model.setTrainer(settings, QStringLiteral("train at the σ knob"));
    request = session.trainingRequest(&error);
    QVERIFY(!request->base.targetEpsilon && !request->targetFromTable);
  }

  void headlineEpsilonComputedOnAWorker() {
    ParameterModel model;
    Session session(&model, freshCache());
    QSignalSpy headline(&session, &Session::headlineEpsilonChanged);
    session.requestHeadlineEpsilon(model.params(), model.conversion());
    QVERIFY(headline.wait(10000));
    const std::optional<double> expected = tableEpsilon(model.params(), model.conversion());
    QVERIFY(expected && *expected > 0.0);
    QCOMPARE(session.headlineEpsilon().value_or(-1.0), *expected);
  }

  // A CNN is not a convex loss: dp-sgld, cyclic and outpert are left out of its request, and a
  // request with nothing else is refused with why.
  void networkLeavesOutTheConvexMechanisms() {
    ParameterModel model;
    Session session(&model, freshCache());
    TrainerSettings settings = model.trainer();
    settings.model.kind = ModelKind::kCnn;
    settings.mechanisms = {QStringLiteral("dp-sgld"), QStringLiteral("dp-sgd"), QStringLiteral("outpert")};
    model.setTrainer(settings, QStringLiteral("cnn"));
    QVERIFY(!model.params().convexLoss);
    QString error;
    std::optional<TrainingRequest> request = session.trainingRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QCOMPARE(request->mechanisms.size(), std::size_t{1});
    QCOMPARE(request->mechanisms.front(), Mechanism::kDpSgd);
    QCOMPARE(request->base.model.kind, ModelKind::kCnn);
    settings.mechanisms = {QStringLiteral("dp-sgld")};
    model.setTrainer(settings, QStringLiteral("cnn, dp-sgld only"));
    QVERIFY(!session.trainingRequest(&error));
    QVERIFY2(error.contains(QStringLiteral("dp-sgld cannot train the cnn (non-convex model)")), qPrintable(error));
  }

  // Views learn that a run ended from the session, whoever started it.
  void trainingFinishedReachesTheSession() {
    ParameterModel model;
    Session session(&model, freshCache());
    TrainerSettings settings = model.trainer();
    settings.mechanisms = {QStringLiteral("sgd")};
    settings.calibrate = false;
    model.setTrainer(settings, QStringLiteral("sgd on digits"));
    model.setKnob(Knob::kM, 64);
    model.setKnob(Knob::kN, 1438);  // the digits' training split
    model.setKnob(Knob::kK, 23);    // about one epoch
    QString error;
    const std::optional<TrainingRequest> request = session.trainingRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QSignalSpy finished(&session, &Session::trainingFinished);
    session.training()->start(*request);
    QVERIFY(finished.wait(30000));
    QVERIFY(!session.training()->running());
    QCOMPARE(session.training()->results().size(), std::size_t{1});
    QVERIFY(session.datasets()->peek(request->data).has_value());
  }
};

QTEST_MAIN(TestSession)
#include "tst_session.moc"
