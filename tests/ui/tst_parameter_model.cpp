// The parameter model: one source of truth, undoable edits, one undo step per slider drag,
// validity with the message naming the bound.
#include <QSignalSpy>
#include <QTest>

#include "knob_widget.h"
#include "parameter_model.h"

using namespace dpx::core;
using dpx::ui::ParameterModel;

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
