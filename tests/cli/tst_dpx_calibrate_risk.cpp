// dpx calibrate with an attack-risk target (--target-tpr T --at-fpr F | --target-advantage A,
// Kulynych et al. 2024): the JSON keys, a TPR (advantage) at most the target that the σ printed
// really gives, the text output, and one-line errors naming the flag (exit 2 for invalid input,
// 1 for a target the run cannot reach). Runs in-process, like tst_dpx_cli.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

#include "accounting/risk_calibration.h"
#include "cli_util.h"

namespace {

using Run = dpx::test::CliRun;
Run dpxRun(const QString& line) { return dpx::test::runDpx(line); }

using dpx::test::jsonOf;

// Bu et al. 2020's MNIST sampling (q = 256/60000), 10 epochs.
const QString kRun = QStringLiteral(" --n 60000 --m 256 --epochs 10 --delta 1e-5");

}  // namespace

class TestDpxCalibrateRisk : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void jsonMeetsTarget_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<bool>("advantage");
    QTest::addColumn<double>("goal");
    QTest::newRow("TPR 0.05 at FPR 0.01") << QStringLiteral("--target-tpr 0.05 --at-fpr 0.01") << false << 0.05;
    QTest::newRow("TPR 0.002 at FPR 0.001") << QStringLiteral("--target-tpr 0.002 --at-fpr 0.001") << false << 0.002;
    QTest::newRow("advantage 0.1") << QStringLiteral("--target-advantage 0.1") << true << 0.1;
  }
  void jsonMeetsTarget() {
    QFETCH(QString, target);
    QFETCH(bool, advantage);
    QFETCH(double, goal);
    const Run r = dpxRun(QStringLiteral("calibrate --accountant pld --json ") + target + kRun);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QJsonObject o = jsonOf(r);
    for (const char* key : {"accountant", "sigma", "tpr", "fpr", "advantage", "epsilon"}) {
      QVERIFY2(o.value(QLatin1String(key)).isDouble() || QLatin1String(key) == QLatin1String("accountant"), key);
    }
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), QStringLiteral("pld"));
    const double measured = o.value(advantage ? QStringLiteral("advantage") : QStringLiteral("tpr")).toDouble();
    QVERIFY2(measured <= goal && measured >= goal - 1e-3, qPrintable(r.out));
    QVERIFY(o.value(QStringLiteral("tpr")).toDouble() - o.value(QStringLiteral("fpr")).toDouble() <=
            o.value(QStringLiteral("advantage")).toDouble() + 1e-9);
    // The σ printed (10 significant digits) gives what was printed, recomputed from core.
    dpx::core::Params p;
    p.n = 60000;
    p.m = 256;
    p.K = 2344;  // ⌈10 · 60000 / 256⌉
    p.delta = 1e-5;
    p.sigma = o.value(QStringLiteral("sigma")).toDouble();
    const double fpr = o.value(QStringLiteral("fpr")).toDouble();
    const double again =
        advantage ? dpx::core::accounting::advantageRisk(p)->advantage : dpx::core::accounting::attackRisk(p, fpr)->tpr;
    QVERIFY2(again <= goal, qPrintable(QStringLiteral("at the printed σ: %1 > %2").arg(again).arg(goal)));
    const double eps = dpx::core::accounting::attackRisk(p, fpr)->epsilon;
    // Within the PLD bracket's requested width (1 %): the loss grid may differ at the rounded σ.
    QVERIFY(std::fabs(eps - o.value(QStringLiteral("epsilon")).toDouble()) <= 0.01 * eps);
  }

  void textNamesEveryNumber() {
    const Run r = dpxRun(QStringLiteral("calibrate --accountant pld --target-tpr 0.05 --at-fpr 0.01") + kRun);
    QCOMPARE(r.code, 0);
    for (const char* part :
         {"pld: σ = ", "TPR ≤ ", "at FPR 0.01", "(target 0.05)", "advantage", "ε = ", "δ = 1e-05", "pessimistic"}) {
      QVERIFY2(r.out.contains(QString::fromUtf8(part)), qPrintable(r.out));
    }
  }

  // The curve is DP-SGD's with Poisson sampling: another sampler is reported, not hidden.
  void violatedAssumptionsAreReported() {
    Run r = dpxRun(QStringLiteral("calibrate --accountant pld --target-advantage 0.2 --json") + kRun);
    QCOMPARE(r.code, 0);
    QVERIFY(jsonOf(r).value(QStringLiteral("applicable")).toBool());
    r = dpxRun(QStringLiteral("calibrate --accountant pld --target-advantage 0.2 --sampling shuffle --json") + kRun);
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    QVERIFY(!o.value(QStringLiteral("applicable")).toBool());
    QVERIFY(!o.value(QStringLiteral("violations")).toArray().isEmpty());
  }

  void lowerLimitIsSaid() {
    const Run r = dpxRun(QStringLiteral("calibrate --accountant pld --target-tpr 1 --at-fpr 0.01 --json") + kRun);
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("sigma")).toDouble(), 0.05);
    QVERIFY(o.value(QStringLiteral("at_lower_limit")).toBool());
  }

  void errorsNameTheFlag_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("named");
    QTest::newRow("TPR without FPR") << "--accountant pld --target-tpr 0.05" << 2 << "--at-fpr";
    QTest::newRow("FPR without TPR") << "--accountant pld --at-fpr 0.01 --target-advantage 0.1" << 2 << "--at-fpr";
    QTest::newRow("two targets") << "--accountant pld --target-epsilon 1 --target-advantage 0.1" << 2
                                 << "--target-advantage";
    QTest::newRow("no target") << "--accountant pld" << 2 << "--target-epsilon";
    QTest::newRow("not pld") << "--accountant rdp --target-tpr 0.05 --at-fpr 0.01" << 2 << "--accountant pld";
    QTest::newRow("TPR below FPR") << "--accountant pld --target-tpr 0.005 --at-fpr 0.01" << 2 << "--target-tpr";
    QTest::newRow("TPR above 1") << "--accountant pld --target-tpr 1.5 --at-fpr 0.01" << 2 << "--target-tpr";
    QTest::newRow("FPR 1") << "--accountant pld --target-tpr 0.5 --at-fpr 1" << 2 << "--at-fpr";
    QTest::newRow("FPR not a number") << "--accountant pld --target-tpr 0.5 --at-fpr x" << 2 << "--at-fpr";
    QTest::newRow("advantage 1") << "--accountant pld --target-advantage 1" << 2 << "--target-advantage";
    QTest::newRow("unreachable") << "--accountant pld --target-tpr 0.0100001 --at-fpr 0.01" << 1 << "σ = 100";
  }
  void errorsNameTheFlag() {
    QFETCH(QString, args);
    QFETCH(int, code);
    QFETCH(QString, named);
    const Run r = dpxRun(QStringLiteral("calibrate ") + args + kRun);
    QCOMPARE(r.code, code);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith(QStringLiteral("dpx calibrate: ")) && r.err.contains(named), qPrintable(r.err));
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
  }
};

QTEST_GUILESS_MAIN(TestDpxCalibrateRisk)
#include "tst_dpx_calibrate_risk.moc"
