// The parameter model: one source of truth, undoable edits, one undo step per slider drag,
// validity with the message naming the bound.
#include <QSignalSpy>
#include <QTest>

#include "knob_widget.h"
#include "session/parameter_model.h"

using namespace dpx::core;
using dpx::ui::ParameterModel;
using dpx::ui::TrainerSettings;

class TestParameterModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void editsAreUndoable() {
    ParameterModel model;
    const double sigma = model.params().sigma;
    model.setKnob(Knob::kSigma, 2.5);
    QCOMPARE(model.params().sigma, 2.5);
    model.undoStack()->undo();
    QCOMPARE(model.params().sigma, sigma);
    model.undoStack()->redo();
    QCOMPARE(model.params().sigma, 2.5);
  }

  void aDragIsOneUndoStep() {
    ParameterModel model;
    const double before = model.params().eta;
    const int drag = model.beginDrag();
    for (double eta : {0.2, 0.3, 0.4, 0.5}) model.setKnob(Knob::kEta, eta, drag);
    QCOMPARE(model.undoStack()->count(), 1);
    model.setKnob(Knob::kEta, 0.6);  // a typed edit: its own step
    QCOMPARE(model.undoStack()->count(), 2);
    model.undoStack()->undo();
    QCOMPARE(model.params().eta, 0.5);
    model.undoStack()->undo();
    QCOMPARE(model.params().eta, before);
    // A new drag of the same knob is a new step.
    const int second = model.beginDrag();
    model.setKnob(Knob::kEta, 0.7, second);
    model.setKnob(Knob::kEta, 0.8, second);
    QCOMPARE(model.undoStack()->index(), 1);
  }

  void invalidCombinationKeepsTheLastValid() {
    ParameterModel model;
    QSignalSpy validity(&model, &ParameterModel::validityChanged);
    model.setKnob(Knob::kM, 70000);  // > n = 60000
    QVERIFY(!model.isValid());
    QVERIFY(model.validationMessage().contains(QStringLiteral("exceeds n")));
    QCOMPARE(model.lastValid().m, std::int64_t(256));
    QCOMPARE(validity.count(), 1);
    model.undoStack()->undo();
    QVERIFY(model.isValid());
    QCOMPARE(validity.count(), 2);
  }

  void noOpEditsMakeNoStep() {
    ParameterModel model;
    model.setKnob(Knob::kN, static_cast<double>(model.params().n));
    QCOMPARE(model.undoStack()->count(), 0);
    model.setKnob(Knob::kK, static_cast<double>(model.params().K) + 0.2);  // rounds to the same K
    QCOMPARE(model.undoStack()->count(), 0);
  }

  void setAllIsOneStep() {
    ParameterModel model;
    Params p;
    p.sigma = 0.7;
    p.n = 1000;
    p.m = 10;
    model.setAll(p, QStringLiteral("preset"));
    QCOMPARE(model.undoStack()->count(), 1);
    QCOMPARE(model.params().n, std::int64_t(1000));
    model.undoStack()->undo();
    QCOMPARE(model.params().n, std::int64_t(60000));
  }

  // Loading data binds n (K follows so the epochs stay); undo leaves n a what-if, released.
  void nBindsToTheDataSize() {
    ParameterModel model;
    const Params before = model.params();
    QVERIFY(model.trainer().nFromData);
    model.setDataSize(model.trainer().source, 1438);
    QCOMPARE(model.params().n, std::int64_t(1438));
    QCOMPARE(model.params().K, *stepsForEpochs(60, 1438, before.m));  // the 60 epochs of the defaults
    QCOMPARE(nominalEpochs(model.params()), 60.0);
    QCOMPARE(model.undoStack()->count(), 1);
    model.undoStack()->undo();
    QCOMPARE(model.params().n, before.n);
    QVERIFY(!model.trainer().nFromData);
    // Another source's size does not touch n.
    model.setNFromData(true);
    QCOMPARE(model.params().n, std::int64_t(1438));
    model.setDataSize(QStringLiteral("builtin:breast-cancer"), 455);
    QCOMPARE(model.params().n, std::int64_t(1438));
    // Switching the source to it: n follows (after the event loop runs the binding).
    TrainerSettings t = model.trainer();
    t.source = QStringLiteral("builtin:breast-cancer");
    model.setTrainer(t, QStringLiteral("dataset"));
    QTRY_COMPARE(model.params().n, std::int64_t(455));
    // Released: n is free and stays where the user puts it.
    model.setNFromData(false);
    model.setKnob(Knob::kN, 5000);
    QCoreApplication::processEvents();
    QCOMPARE(model.params().n, std::int64_t(5000));
  }

  void trainerSettingsAreUndoable() {
    ParameterModel model;
    QSignalSpy changed(&model, &ParameterModel::trainerChanged);
    QSignalSpy params(&model, &ParameterModel::paramsChanged);
    TrainerSettings t = model.trainer();
    t.mechanisms = {QStringLiteral("cyclic")};
    t.targetEpsilon = 2.0;
    model.setTrainer(t, QStringLiteral("settings"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(params.count(), 0);  // the knobs did not change: the charts are not recomputed
    QCOMPARE(model.trainer().mechanisms, QStringList{QStringLiteral("cyclic")});
    model.undoStack()->undo();
    QCOMPARE(model.trainer().mechanisms.size(), 3);
    QVERIFY(!model.trainer().targetEpsilon);
    model.setTrainer(model.trainer(), QStringLiteral("no change"));
    QCOMPARE(model.undoStack()->count(), 1);  // a no-op makes no step (the undone one is still there to redo)
  }

  void sliderScaleRoundTrips() {
    for (const KnobInfo& info : knobInfos()) {
      const dpx::ui::SliderScale scale = dpx::ui::sliderScaleFor(info.knob, 60000);
      for (int tick : {0, 1, 250, 500, 999, 1000}) {
        const double value = scale.fromTick(tick);
        QVERIFY(std::isfinite(value));
        QCOMPARE(scale.toTick(value), tick);
      }
    }
    QCOMPARE(dpx::ui::sliderScaleFor(Knob::kLambda, 1).fromTick(0), 0.0);
  }

  void typedNumbers() {
    QCOMPARE(*dpx::ui::parseTypedNumber(QStringLiteral("1e-5")), 1e-5);
    QCOMPARE(*dpx::ui::parseTypedNumber(QStringLiteral(" 60000 ")), 60000.0);
    QVERIFY(!dpx::ui::parseTypedNumber(QStringLiteral("abc")));
    QVERIFY(!dpx::ui::parseTypedNumber(QStringLiteral("1.5x")));
    QVERIFY(!dpx::ui::parseTypedNumber(QStringLiteral("nan")));
    QVERIFY(!dpx::ui::parseTypedNumber(QString()));
  }
};

QTEST_MAIN(TestParameterModel)
#include "tst_parameter_model.moc"
