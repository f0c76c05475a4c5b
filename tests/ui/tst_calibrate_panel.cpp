// The calibration panel's attack-risk row (Kulynych et al. 2024), offscreen: a TPR or advantage
// target gives a σ whose pessimistic PLD curve meets it (recomputed here from core), "Apply σ" is
// one undoable edit, invalid entries show a message in place of the numbers and start nothing,
// and the accuracy column says how to get it without data and trains each σ once data is loaded.
// DPX_SCREENSHOT_DIR=dir saves a picture of the panel there.
#include <QDir>
#include <QSignalSpy>
#include <QTest>
#include <memory>

#include "accounting/risk_calibration.h"
#include "calibrate_panel.h"
#include "common/format.h"
#include "session/parameter_model.h"
#include "trainer_panel.h"
#include "training/dataset_cache.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

// Bu et al. 2020's MNIST sampling (q = 256/60000), 10 epochs.
Params mnistTenEpochs() {
  Params p;
  p.n = 60000;
  p.m = 256;
  p.K = 2344;
  p.sigma = 1.1;
  p.delta = 1e-5;
  return p;
}

void typeInto(QLineEdit* entry, const QString& text) {
  entry->setText(text);
  QTest::keyClick(entry, Qt::Key_Return);
}

}  // namespace

class TestCalibratePanel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void tprTargetGivesSigmaAndApplySetsIt() {
    ParameterModel model;
    model.setAll(mnistTenEpochs(), QStringLiteral("test run"));
    CalibratePanel panel(&model);
    panel.show();
    QSignalSpy done(&panel, &CalibratePanel::riskCalibrated);
    panel.fprEntry()->setText(QStringLiteral("0.01"));
    typeInto(panel.riskTargetEntry(), QStringLiteral("0.05"));
    QVERIFY(done.wait(30000));
    QVERIFY(panel.riskResult().has_value());
    const double sigma = panel.riskResult()->sigma;
    Params at = mnistTenEpochs();
    at.sigma = sigma;
    const double tpr = accounting::attackRisk(at, 0.01)->tpr;
    QVERIFY2(tpr <= 0.05 && tpr > 0.049, qPrintable(QString::number(tpr)));
    // Shown rounded up: the σ read off the panel meets the target too.
    QCOMPARE(panel.riskValue(QStringLiteral("sigma")),
             QString::fromStdString(formatNumber(roundedUpToPrinted(sigma, 6), 6)));
    at.sigma = panel.riskValue(QStringLiteral("sigma")).toDouble();
    QVERIFY(accounting::attackRisk(at, 0.01)->tpr <= 0.05);
    QCOMPARE(panel.riskValue(QStringLiteral("fpr")), QStringLiteral("0.01"));
    QVERIFY(panel.riskValue(QStringLiteral("epsilon")).contains(QStringLiteral("δ = 1e-05")));
    QVERIFY(panel.riskApplyButton()->isEnabled());
    // Without a trainer there is no accuracy to show.
    QCOMPARE(panel.riskValue(QStringLiteral("accuracy")), QStringLiteral("—"));

    QTest::mouseClick(panel.riskApplyButton(), Qt::LeftButton);
    QCOMPARE(model.params().sigma, sigma);
    model.undoStack()->undo();
    QCOMPARE(model.params().sigma, 1.1);
  }

  void advantageTargetHidesTheFpr() {
    ParameterModel model;
    model.setAll(mnistTenEpochs(), QStringLiteral("test run"));
    CalibratePanel panel(&model);
    panel.show();
    panel.riskKindBox()->setCurrentIndex(panel.riskKindBox()->findData(int(CalibratePanel::RiskKind::kAdvantage)));
    QVERIFY(!panel.fprEntry()->isVisible());
    QSignalSpy done(&panel, &CalibratePanel::riskCalibrated);
    typeInto(panel.riskTargetEntry(), QStringLiteral("0.1"));
    QVERIFY(done.wait(30000));
    QVERIFY(panel.riskResult().has_value());
    Params at = mnistTenEpochs();
    at.sigma = panel.riskResult()->sigma;
    QVERIFY(accounting::advantageRisk(at)->advantage <= 0.1);
    QVERIFY(panel.riskResult()->tpr - panel.riskResult()->fpr <= 0.1 + 1e-12);
  }

  void invalidEntriesShowAMessage_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("target");
    QTest::addColumn<QString>("fpr");
    QTest::addColumn<QString>("says");
    const int tpr = int(CalibratePanel::RiskKind::kTprAtFpr);
    const int advantage = int(CalibratePanel::RiskKind::kAdvantage);
    QTest::newRow("not a number") << tpr << "abc"
                                  << "0.01"
                                  << "TPR target";
    QTest::newRow("TPR below FPR") << tpr << "0.005"
                                   << "0.01"
                                   << "below FPR";
    QTest::newRow("TPR above 1") << tpr << "1.5"
                                 << "0.01"
                                 << "(0, 1]";
    QTest::newRow("FPR 1") << tpr << "0.5"
                           << "1"
                           << "FPR";
    QTest::newRow("FPR empty") << tpr << "0.5"
                               << ""
                               << "FPR";
    QTest::newRow("advantage 1") << advantage << "1"
                                 << ""
                                 << "[0, 1)";
  }
  void invalidEntriesShowAMessage() {
    QFETCH(int, kind);
    QFETCH(QString, target);
    QFETCH(QString, fpr);
    QFETCH(QString, says);
    ParameterModel model;
    CalibratePanel panel(&model);
    panel.show();
    panel.riskKindBox()->setCurrentIndex(panel.riskKindBox()->findData(kind));
    panel.fprEntry()->setText(fpr);
    typeInto(panel.riskTargetEntry(), target);
    QVERIFY(!panel.riskJob()->busy());
    QVERIFY2(panel.riskStatus()->text().contains(says), qPrintable(panel.riskStatus()->text()));
    for (const char* field : {"sigma", "tpr", "fpr", "advantage", "epsilon"}) {
      QCOMPARE(panel.riskValue(QLatin1String(field)), QStringLiteral("—"));
    }
    QVERIFY(!panel.riskApplyButton()->isEnabled());
    QVERIFY(!panel.riskResult().has_value());
  }

  // With the trainer's data loaded, the risk row's σ is trained (DP-SGD, σ fixed) and its test
  // accuracy shown; before, the column says how to get it.
  void accuracyOfEachSigmaOnTheLoadedData() {
    ParameterModel model;
    auto cache = std::make_shared<training::DatasetCache>();
    Session session(&model, cache);
    TrainerPanel trainer(&session);
    CalibratePanel panel(&model);
    panel.setSession(&session);
    panel.show();
    QSignalSpy done(&panel, &CalibratePanel::riskCalibrated);
    typeInto(panel.riskTargetEntry(), QStringLiteral("0.2"));
    QVERIFY(done.wait(30000));
    QVERIFY(panel.riskResult().has_value());
    QCOMPARE(panel.riskValue(QStringLiteral("accuracy")), QStringLiteral("—"));
    QVERIFY(panel.accuracyStatus()->text().contains(QStringLiteral("train once")));
    QVERIFY(!panel.accuracyButton()->isEnabled());

    // The digits load and n follows them: the σ found for n = 60000 no longer fits the run.
    trainer.ensureDataLoaded();
    QVERIFY(QTest::qWaitFor([&] { return model.params().n == 1438; }, 10000));
    QVERIFY(QTest::qWaitFor([&] { return panel.accuracyStatus()->text().contains(QStringLiteral("calibrate again")); },
                            10000));
    QCOMPARE(panel.riskValue(QStringLiteral("accuracy")), QStringLiteral("—"));
    QVERIFY(!panel.accuracyJob()->busy());

    // Calibrated for the run on the digits, its σ trains by itself (DP-SGD, σ fixed).
    QSignalSpy shown(&panel, &CalibratePanel::accuracyShown);
    panel.calibrateRisk();
    QVERIFY(done.wait(30000));
    QVERIFY(shown.wait(60000));
    const QString accuracy = panel.riskValue(QStringLiteral("accuracy"));
    QVERIFY2(accuracy.endsWith(QStringLiteral(" %")), qPrintable(accuracy));
    QVERIFY(accuracy.chopped(2).toDouble() > 10.0);  // better than guessing one of ten digits
    QVERIFY(panel.accuracyJob()->busy() || panel.accuracyStatus()->text().contains(QStringLiteral("Test accuracy")));

    if (const QByteArray dir = qgetenv("DPX_SCREENSHOT_DIR"); !dir.isEmpty()) {
      QSignalSpy rows(&panel, &CalibratePanel::calibrated);
      panel.calibrate();
      QVERIFY(rows.wait(120000));
      QVERIFY(QTest::qWaitFor([&] { return !panel.accuracyJob()->busy(); }, 120000));
      QCoreApplication::processEvents();
      panel.resize(360, 760);
      QVERIFY(panel.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("calibrate_panel.png"))));
    }
  }
};

QTEST_MAIN(TestCalibratePanel)
#include "tst_calibrate_panel.moc"
