// Params::validate, the knob table and K from epochs.
#include <QTest>

#include "common/params.h"
#include "test_util.h"

using namespace dpx::core;

class TestParams : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaultsAreValid() { QVERIFY(Params{}.validate().isOk()); }

  void everyKnobRejectsValuesOutsideItsRange_data() {
    QTest::addColumn<int>("knob");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("n < 10") << int(Knob::kN) << 5.0 << "[10, 1e+08]";
    QTest::newRow("n > 1e8") << int(Knob::kN) << 2e8 << "[10, 1e+08]";
    QTest::newRow("m = 0") << int(Knob::kM) << 0.0 << "[1, n]";
    QTest::newRow("σ = -1") << int(Knob::kSigma) << -1.0 << "[0.05, 100]";
    QTest::newRow("σ = 101") << int(Knob::kSigma) << 101.0 << "[0.05, 100]";
    QTest::newRow("η = 0") << int(Knob::kEta) << 0.0 << "[1e-06, 100]";
    QTest::newRow("K = 0") << int(Knob::kK) << 0.0 << "[1, 1e+07]";
    QTest::newRow("K = 1.5e7") << int(Knob::kK) << 1.5e7 << "[1, 1e+07]";
    QTest::newRow("α = 1") << int(Knob::kAlpha) << 1.0 << "[1.01, 1024]";
    QTest::newRow("δ = 2") << int(Knob::kDelta) << 2.0 << "[1e-15, 0.1]";
    QTest::newRow("δ = 0") << int(Knob::kDelta) << 0.0 << "[1e-15, 0.1]";
    QTest::newRow("L = 0") << int(Knob::kL) << 0.0 << "[0.001, 1000]";
    QTest::newRow("λ = -0.1") << int(Knob::kLambda) << -0.1 << "[0, 10]";
    QTest::newRow("β = 0") << int(Knob::kBeta) << 0.0 << "(0, 1e+06]";
    QTest::newRow("w < 0") << int(Knob::kW) << -1.0 << "[0, 1000]";
    QTest::newRow("M < 0") << int(Knob::kCurvatureM) << -1.0 << "[0, 1e+06]";
    QTest::newRow("D = 0") << int(Knob::kD) << 0.0 << "(0, 1e+06]";
    QTest::newRow("σ = NaN") << int(Knob::kSigma) << std::nan("") << "[0.05, 100]";
    QTest::newRow("n not an integer") << int(Knob::kN) << 100.5 << "integer";
  }
  void everyKnobRejectsValuesOutsideItsRange() {
    QFETCH(int, knob);
    QFETCH(double, value);
    QFETCH(QString, mustMention);
    Params p;
    const Knob k = static_cast<Knob>(knob);
    if (k == Knob::kN && value == 100.5) {
      QVERIFY(!validateKnob(k, value).isOk());
      QVERIFY(QString::fromStdString(validateKnob(k, value).message()).contains(mustMention));
      return;
    }
    setKnobValue(p, k, value);
    const Status s = p.validate();
    QVERIFY(!s.isOk());
    QCOMPARE(s.code(), StatusCode::kInvalidArgument);
    const QString message = QString::fromStdString(s.message());
    QVERIFY2(message.contains(QString::fromLatin1(knobInfo(k).key)), qPrintable(message));
    QVERIFY2(message.contains(mustMention), qPrintable(message));
  }

  void batchLargerThanDatasetIsRejected() {
    Params p;
    p.n = 100;
    p.m = 101;
    const Status s = p.validate();
    QVERIFY(!s.isOk());
    QVERIFY(QString::fromStdString(s.message()).contains(QStringLiteral("exceeds n = 100")));
  }

  void knobTableIsConsistent() {
    for (const KnobInfo& info : knobInfos()) {
      QCOMPARE(&knobInfo(info.knob), &info);
      QCOMPARE(findKnob(info.key), &info);
      QVERIFY(info.min < info.max);
      QVERIFY(std::string(info.lesson).size() > 40);
      // The setter writes this knob's field and no other: set it to its range end (never the
      // default) and read every knob back.
      Params p;
      const double value = info.max;
      QVERIFY(value != knobValue(Params{}, info.knob));
      setKnobValue(p, info.knob, value);
      QCOMPARE(knobValue(p, info.knob), value);
      for (const KnobInfo& other : knobInfos()) {
        if (other.knob != info.knob) QCOMPARE(knobValue(p, other.knob), knobValue(Params{}, other.knob));
      }
    }
  }

  void stepsForEpochs_data() {
    QTest::addColumn<double>("epochs");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("steps");
    QTest::newRow("Bu et al. 2020 Table 1 row 1: 15 epochs") << 15.0 << qint64(60000) << qint64(256) << qint64(3516);
    QTest::newRow("Bu et al. 2020 Table 1 row 2: 60 epochs") << 60.0 << qint64(60000) << qint64(256) << qint64(14063);
    QTest::newRow("exact product stays put") << 0.1 << qint64(600) << qint64(6) << qint64(10);
    QTest::newRow("one epoch") << 1.0 << qint64(60000) << qint64(250) << qint64(240);
  }
  void stepsForEpochs() {
    QFETCH(double, epochs);
    QFETCH(qint64, n);
    QFETCH(qint64, m);
    QFETCH(qint64, steps);
    auto k = dpx::core::stepsForEpochs(epochs, n, m);
    QVERIFY(k.isOk());
    QCOMPARE(qint64(*k), steps);
  }

  void epochsOutOfRange() {
    QVERIFY(!dpx::core::stepsForEpochs(0.0, 100, 10).isOk());
    QVERIFY(!dpx::core::stepsForEpochs(-1.0, 100, 10).isOk());
    QVERIFY(!dpx::core::stepsForEpochs(1e9, 100000000, 1).isOk());  // K > 1e7
  }

  void enumNamesRoundTrip() {
    for (Sampling s : {Sampling::kPoisson, Sampling::kUniform, Sampling::kCyclic, Sampling::kShuffle}) {
      QCOMPARE(*parseSampling(samplingName(s)), s);
    }
    QCOMPARE(*parseSchedule("decreasing"), Schedule::kDecreasing);
    QVERIFY(!parseSchedule("fast").has_value());
  }
};

QTEST_GUILESS_MAIN(TestParams)
#include "tst_params.moc"
