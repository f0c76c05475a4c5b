// dpx audit: the `train` JSON plus roc, auc, tpr_at_fpr, epsilon_lower_bound and
// confidence; canary mode; and one-line errors with exit status 2 that name the flag and its
// range. Runs in-process, like tst_dpx_cli.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>
#include <sstream>

#include "cli.h"
#include "cli_util.h"
#include "test_util.h"

namespace {

using Run = dpx::test::CliRun;
inline Run dpxRun(const QString& line) { return dpx::test::runDpx(line); }

}  // namespace

class TestDpxAudit : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void badInputExitsTwoWithOneLine_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("mustMention");
    const QString base = QStringLiteral("audit --data builtin:breast-cancer --mechanism sgd --epochs 1 ");
    QTest::newRow("0 shadow models") << base + "--shadow-models 0"
                                     << "--shadow-models";
    QTest::newRow("0 shadow models names the range") << base + "--shadow-models 0"
                                                     << "[1, 1024]";
    QTest::newRow("too many shadow models") << base + "--shadow-models 5000"
                                            << "[1, 1024]";
    QTest::newRow("fractional shadow models") << base + "--shadow-models 2.5"
                                              << "--shadow-models";
    QTest::newRow("canaries above the pool") << base + "--canaries 1000"
                                             << "canaries = 1000 exceeds the pool";
    QTest::newRow("canaries above 1e6") << base + "--canaries 2000000"
                                        << "[0, 1000000]";
    QTest::newRow("negative canaries") << base + "--canaries -3"
                                       << "--canaries";
    QTest::newRow("confidence below 0.5") << base + "--confidence 0.2"
                                          << "--confidence";
    QTest::newRow("confidence not a number") << base + "--confidence high"
                                             << "--confidence";
    QTest::newRow("no data") << QStringLiteral("audit --mechanism sgd") << "--data";
    QTest::newRow("unknown flag") << base + "--shadows 3"
                                  << "--shadows";
  }
  void badInputExitsTwoWithOneLine() {
    QFETCH(QString, args);
    QFETCH(QString, mustMention);
    const Run r = dpxRun(args);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
  }

  void jsonHasTheTrainKeysAndTheAuditKeys() {
    const Run r =
        dpxRun(QStringLiteral("audit --data builtin:digits --mechanism dp-sgd --target-epsilon 1 --m 64 "
                              "--eta 2 --epochs 4 --shadow-models 4 --seed 3 --json --quiet"));
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(!r.out.contains(QStringLiteral("nan")));
    QJsonParseError error;
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    for (const char* key : {"mechanism", "epsilon", "delta", "sigma", "epochs", "history", "seconds", "roc", "auc",
                            "tpr_at_fpr", "epsilon_lower_bound", "confidence", "bound_method", "epsilon_lower_bound_cp",
                            "contradiction", "tradeoff", "attacks"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("mechanism")).toString(), QStringLiteral("dp-sgd"));
    QCOMPARE(o.value(QStringLiteral("confidence")).toDouble(), 0.95);
    const double upper = o.value(QStringLiteral("epsilon")).toDouble();
    QVERIFY(upper <= 1.0 + 1e-9 && upper > 0.9);
    QVERIFY(o.value(QStringLiteral("epsilon_lower_bound")).toDouble() < upper);
    QVERIFY(!o.value(QStringLiteral("contradiction")).toBool());
    const QJsonArray roc = o.value(QStringLiteral("roc")).toArray();
    QVERIFY(roc.size() > 100);
    QCOMPARE(roc.first().toArray().at(0).toDouble(), 0.0);
    QCOMPARE(roc.last().toArray().at(0).toDouble(), 1.0);
    QCOMPARE(roc.last().toArray().at(1).toDouble(), 1.0);
    // Trade-off points are (FPR, 1 − TPR) of the same ROC.
    const QJsonArray tradeoff = o.value(QStringLiteral("tradeoff")).toArray();
    QCOMPARE(tradeoff.size(), roc.size());
    QVERIFY(std::fabs(tradeoff.at(5).toArray().at(1).toDouble() - (1.0 - roc.at(5).toArray().at(1).toDouble())) < 1e-9);
    const QJsonObject tpr = o.value(QStringLiteral("tpr_at_fpr")).toObject();
    QVERIFY(tpr.value(QStringLiteral("0.001")).isDouble());
    QVERIFY(tpr.value(QStringLiteral("0.01")).toDouble() >= tpr.value(QStringLiteral("0.001")).toDouble());
    const double auc = o.value(QStringLiteral("auc")).toDouble();
    QVERIFY(auc > 0.3 && auc < 0.7);  // ε = 1 cannot be broken wide open
  }

  void canaryModeAuditsTheCanaries() {
    const Run r =
        dpxRun(QStringLiteral("audit --data builtin:digits --test-fraction 0.8 --mechanism sgd --m 10 "
                              "--eta 10 --lambda 0 --epochs 60 --shadow-models 4 --canaries 60 --json --quiet"));
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("canaries")).toInt(), 60);
    QCOMPARE(o.value(QStringLiteral("audited_records")).toInt(), 60);
    QVERIFY(o.value(QStringLiteral("epsilon_upper_bound")).isNull());  // sgd proves nothing
    QVERIFY(!o.value(QStringLiteral("contradiction")).toBool());
    QVERIFY2(o.value(QStringLiteral("auc")).toDouble() > 0.8, qPrintable(r.out.left(300)));
  }

  void textSaysWhatWasProven() {
    const Run r =
        dpxRun(QStringLiteral("audit --data builtin:breast-cancer --mechanism sgd --epochs 2 --m 32 "
                              "--shadow-models 2 --quiet"));
    QCOMPARE(r.code, 0);
    QVERIFY(r.err.isEmpty());
    QVERIFY2(r.out.contains(QStringLiteral("empirical ε ≥")), qPrintable(r.out));
    QVERIFY(r.out.contains(QStringLiteral("not private")));
    QVERIFY(r.out.contains(QStringLiteral("LiRA")));
  }
};

QTEST_GUILESS_MAIN(TestDpxAudit)
#include "tst_dpx_audit.moc"
