// Conservative calibration: σ with ε(σ) ≤ target for every accountant and a grid of targets,
// and the smallest such σ up to root-finding tolerance.
#include <QTest>
#include <cmath>
#include <cstdlib>

#include "accounting/calibration.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestCalibration : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void conservativeOnAGridOfTargets_data() {
    QTest::addColumn<QString>("accountant");
    for (const Accountant* a : allAccountants()) {
      if (a->isAnalytic() && a->noiseSetBySigma()) QTest::newRow(a->id().data()) << QString::fromLatin1(a->id().data());
    }
  }
  void conservativeOnAGridOfTargets() {
    QFETCH(QString, accountant);
    const Accountant* a = findAccountant(accountant.toStdString());
    Params p;
    p.lambda = 0.05;  // sgld and outpert need strong convexity to be informative
    p.eta = 0.5;
    int calibrated = 0;
    for (double target : {0.05, 0.1, 0.3, 1.0, 2.0, 3.0, 8.0, 20.0}) {
      auto c = calibrateSigma(*a, p, target);
      if (!c) {
        QVERIFY2(QString::fromStdString(c.status().message()).contains(QStringLiteral("unreachable")),
                 c.status().message().c_str());
        continue;
      }
      ++calibrated;
      Params at = p;
      at.sigma = c->sigma;
      const double eps = a->epsilon(at)->epsilon;
      QVERIFY2(eps <= target,
               qPrintable(QStringLiteral("%1: ε(%2) = %3 > %4").arg(accountant).arg(c->sigma).arg(eps).arg(target)));
      QCOMPARE(c->epsilon.epsilon, eps);
      // The σ is one that 10 significant digits print exactly (so a printed σ meets the target).
      QCOMPARE(std::strtod(formatNumber(c->sigma).c_str(), nullptr), c->sigma);
      if (!c->atLowerLimit) {
        // Tight: a slightly smaller σ is no longer private enough.
        at.sigma = c->sigma * (1 - 1e-6);
        QVERIFY(a->epsilon(at)->epsilon > target * (1 - 1e-4));
      }
    }
    QVERIFY(calibrated >= 4);
  }

  void sigmaFreeAnalysisIsRefusedWithTheReason() {
    // sgmcmc's Langevin noise is fixed by η: a "calibrated σ" would be meaningless.
    auto c = calibrateSigma(*findAccountant("sgmcmc"), Params{}, 1.0);
    QVERIFY(!c.isOk());
    QVERIFY(QString::fromStdString(c.status().message()).contains(QStringLiteral("step size")));
  }

  void unreachableTargetSaysWhy() {
    auto c = calibrateSigma(*findAccountant("rdp"), Params{}, 1e-6);
    QVERIFY(!c.isOk());
    const QString message = QString::fromStdString(c.status().message());
    QVERIFY(message.contains(QStringLiteral("unreachable")));
    QVERIFY(message.contains(QStringLiteral("σ = 100")));
  }

  void badTarget() {
    QVERIFY(!calibrateSigma(*findAccountant("rdp"), Params{}, 0.0).isOk());
    QVERIFY(!calibrateSigma(*findAccountant("rdp"), Params{}, std::nan("")).isOk());
    Params bad;
    bad.delta = 2;
    QVERIFY(!calibrateSigma(*findAccountant("rdp"), bad, 1.0).isOk());
  }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
