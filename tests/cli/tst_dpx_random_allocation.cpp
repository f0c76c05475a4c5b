// dpx epsilon / delta / statement / verify with the `random-allocation` accountant (Feldman &
// Shenfeld 2025): the k and t flags reach the analysis (native keys steps_per_epoch, selections,
// epochs), --sampling balls-in-bins is accepted, a bad k is refused with its flag named, and a
// statement of a balls-in-bins run verifies.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_util.h"
#include "test_util.h"

using dpx::test::CliRun;
using dpx::test::runDpx;

namespace {

QString describe(const CliRun& r) {
  return QStringLiteral("exit %1\nstdout: %2\nstderr: %3").arg(r.code).arg(r.out.left(2000), r.err);
}

}  // namespace

class TestDpxRandomAllocation : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void epsilonWithKnobs() {
    const CliRun r = runDpx(QStringLiteral(
        "epsilon --accountant random-allocation --n 1000 --m 10 --epochs 1 --selections 10 --sigma 2 --delta 1e-6 "
        "--sampling balls-in-bins --json"));
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonObject native = o.value(QStringLiteral("native")).toObject();
    QCOMPARE(native.value(QStringLiteral("steps_per_epoch")).toDouble(), 100.0);
    QCOMPARE(native.value(QStringLiteral("selections")).toDouble(), 10.0);
    QCOMPARE(native.value(QStringLiteral("epochs")).toDouble(), 1.0);
    QCOMPARE(o.value(QStringLiteral("bound")).toString(), QStringLiteral("upper"));
    QVERIFY(o.value(QStringLiteral("applicable")).toBool());
    // dp_accounting pull request #414: ε ≈ 2.4265 (within 0.5 %).
    QVERIFY(std::fabs(o.value(QStringLiteral("epsilon")).toDouble() / 2.4265 - 1.0) < 5e-3);
    // --steps-per-epoch sets t directly (here the same t).
    const CliRun same = runDpx(QStringLiteral(
        "epsilon --accountant random-allocation --n 1000 --m 10 --epochs 1 --selections 10 --steps-per-epoch 100 "
        "--sigma 2 --delta 1e-6 --json"));
    QVERIFY2(same.code == 0, qPrintable(describe(same)));
    QCOMPARE(QJsonDocument::fromJson(same.out.toUtf8()).object().value(QStringLiteral("epsilon")).toDouble(),
             o.value(QStringLiteral("epsilon")).toDouble());
  }

  void deltaAndRefusals() {
    const CliRun d = runDpx(
        QStringLiteral("delta --accountant random-allocation --n 100 --m 10 --K 10 --sigma 1 --epsilon 2 --json"));
    QVERIFY2(d.code == 0, qPrintable(describe(d)));
    const CliRun bad =
        runDpx(QStringLiteral("epsilon --accountant random-allocation --n 100 --m 10 --epochs 1 --selections 11"));
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("selections")), qPrintable(describe(bad)));
    const CliRun shuffled = runDpx(
        QStringLiteral("epsilon --accountant random-allocation --n 100 --m 10 --epochs 1 --sampling shuffle --json"));
    QVERIFY2(shuffled.code == 0, qPrintable(describe(shuffled)));
    QVERIFY(!QJsonDocument::fromJson(shuffled.out.toUtf8()).object().value(QStringLiteral("applicable")).toBool());
  }

  void statementRoundTrips() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("ra.json"));
    const CliRun made = runDpx(
        {QStringLiteral("statement"), QStringLiteral("--json"), QStringLiteral("--output"), file, QStringLiteral("--n"),
         QStringLiteral("1000"), QStringLiteral("--m"), QStringLiteral("10"), QStringLiteral("--epochs"),
         QStringLiteral("2"), QStringLiteral("--sampling"), QStringLiteral("balls-in-bins"),
         QStringLiteral("--selections"), QStringLiteral("2"), QStringLiteral("--sigma"), QStringLiteral("1.5")});
    QVERIFY2(made.code == 0, qPrintable(describe(made)));
    const CliRun checked = runDpx({QStringLiteral("verify"), file});
    QVERIFY2(checked.code == 0, qPrintable(describe(checked)));
    QVERIFY2(checked.out.startsWith(QStringLiteral("verified: ")), qPrintable(checked.out));
  }

  // DP-SGD trained on balls-in-bins batches is calibrated and reported by random allocation, the
  // analysis of those batches (rdp would be flagged: it assumes Poisson sampling); `dpx check`
  // names it as the run's accountant.
  void ballsInBinsTrainingIsAccountedByRandomAllocation() {
    // Calibrated to ε = 2 in a plain build; under sanitizers, where a calibration's dozen
    // compositions take minutes, at a fixed σ (one composition: the same accountant choice).
    const QString noise =
        dpx::test::kSanitizedBuild ? QStringLiteral(" --sigma 1.5") : QStringLiteral(" --target-epsilon 2");
    const CliRun r = runDpx(QStringLiteral("train --data builtin:digits --mechanism dp-sgd --sampling balls-in-bins "
                                           "--epochs 1 --json --quiet") +
                            noise);
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), QStringLiteral("random-allocation"));
    const double epsilon = o.value(QStringLiteral("epsilon")).toDouble();
    QVERIFY2(epsilon > 0.0 && (dpx::test::kSanitizedBuild || epsilon <= 2.0), qPrintable(r.out));
    QVERIFY2(o.value(QStringLiteral("violations")).toArray().isEmpty(), qPrintable(r.out));
    const CliRun named = runDpx(QStringLiteral("train --data builtin:digits --mechanism dp-sgd --sampling "
                                               "balls-in-bins --accountant rdp --epochs 1 --json --quiet") +
                                noise);
    QVERIFY2(named.code == 0, qPrintable(describe(named)));
    QVERIFY(
        !QJsonDocument::fromJson(named.out.toUtf8()).object().value(QStringLiteral("violations")).toArray().isEmpty());
    const CliRun check = runDpx(QStringLiteral("check --mechanism dp-sgd --sampling balls-in-bins --json"));
    QCOMPARE(check.code, 0);
    QCOMPARE(QJsonDocument::fromJson(check.out.toUtf8()).object().value(QStringLiteral("accountants")).toArray(),
             (QJsonArray{QStringLiteral("random-allocation")}));
  }
};

QTEST_GUILESS_MAIN(TestDpxRandomAllocation)
#include "tst_dpx_random_allocation.moc"
