// dpx frontier: the JSON contract (every point's keys, reported ε ≤ target, one entry per
// mechanism and target), the CSV rows, the epochs mode and the one-line errors for bad input.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <sstream>

#include "cli.h"
#include "cli_util.h"

namespace {

using Run = dpx::test::CliRun;

Run frontier(const QStringList& args) { return dpx::test::runDpx(QStringList{QStringLiteral("frontier")} + args); }

QStringList digits() {
  return {QStringLiteral("--data"),   QStringLiteral("builtin:digits"),
          QStringLiteral("--m"),      QStringLiteral("64"),
          QStringLiteral("--eta"),    QStringLiteral("0.5"),
          QStringLiteral("--epochs"), QStringLiteral("10")};
}

}  // namespace

class TestDpxFrontier : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void jsonContract() {
    const Run r =
        frontier(digits() + QStringList{QStringLiteral("--mechanisms"), QStringLiteral("dp-sgd,dp-sgld"),
                                        QStringLiteral("--epsilons"), QStringLiteral("0.5,1,4"),
                                        QStringLiteral("--seeds"), QStringLiteral("2"), QStringLiteral("--json")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.err.isEmpty());
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* key : {"data", "vary", "delta", "mechanisms", "nonprivate_accuracy", "seconds"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("vary")).toString(), QStringLiteral("epsilon"));
    QCOMPARE(o.value(QStringLiteral("delta")).toDouble(), 1e-5);
    QVERIFY(o.value(QStringLiteral("nonprivate_accuracy")).toDouble() > 0.8);
    const QJsonArray mechanisms = o.value(QStringLiteral("mechanisms")).toArray();
    QCOMPARE(mechanisms.size(), 2);
    QCOMPARE(mechanisms[0].toObject().value(QStringLiteral("mechanism")).toString(), QStringLiteral("dp-sgd"));
    QCOMPARE(mechanisms[1].toObject().value(QStringLiteral("mechanism")).toString(), QStringLiteral("dp-sgld"));
    // Whose ε each series reports, and what kind of number it is.
    QCOMPARE(mechanisms[0].toObject().value(QStringLiteral("accountant")).toString(), QStringLiteral("rdp"));
    QCOMPARE(mechanisms[1].toObject().value(QStringLiteral("accountant")).toString(), QStringLiteral("sgld"));
    for (const QJsonValue& m : mechanisms)
      QCOMPARE(m.toObject().value(QStringLiteral("bound")).toString(), QStringLiteral("upper"));
    const double targets[] = {0.5, 1.0, 4.0};
    for (const QJsonValue& m : mechanisms) {
      const QJsonArray points = m.toObject().value(QStringLiteral("points")).toArray();
      QCOMPARE(points.size(), 3);
      for (int i = 0; i < 3; ++i) {
        const QJsonObject p = points[i].toObject();
        for (const char* key : {"target_epsilon", "epsilon", "epochs", "sigma", "accuracy_mean", "accuracy_min",
                                "accuracy_max", "seeds"}) {
          QVERIFY2(p.value(QLatin1String(key)).isDouble(), key);
        }
        QCOMPARE(p.value(QStringLiteral("target_epsilon")).toDouble(), targets[i]);
        QVERIFY(p.value(QStringLiteral("epsilon")).toDouble() <= targets[i]);
        QCOMPARE(p.value(QStringLiteral("seeds")).toInt(), 2);
        QCOMPARE(p.value(QStringLiteral("epochs")).toDouble(), 10.0);
        const double lo = p.value(QStringLiteral("accuracy_min")).toDouble();
        const double mean = p.value(QStringLiteral("accuracy_mean")).toDouble();
        const double hi = p.value(QStringLiteral("accuracy_max")).toDouble();
        QVERIFY(0.0 <= lo && lo <= mean && mean <= hi && hi <= 1.0);
      }
    }
  }

  void csvHasOneRowPerPoint() {
    const Run r =
        frontier(digits() + QStringList{QStringLiteral("--mechanisms"), QStringLiteral("dp-sgd"),
                                        QStringLiteral("--target-epsilon"), QStringLiteral("1"),
                                        QStringLiteral("--points"), QStringLiteral("4"), QStringLiteral("--seeds"),
                                        QStringLiteral("1"), QStringLiteral("--csv")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 5);
    QCOMPARE(lines[0],
             QStringLiteral("mechanism,target_epsilon,epsilon,epochs,steps,sigma,eta,accuracy_mean,accuracy_min,"
                            "accuracy_max,seeds"));
    // --target-epsilon 1 with --points 4: targets over [1/8, 8].
    QVERIFY(lines[1].startsWith(QStringLiteral("dp-sgd,0.125,")));
    QVERIFY(lines[4].startsWith(QStringLiteral("dp-sgd,8,")));
  }

  // A point whose target cannot be reached keeps its row, with no σ, η or steps (0 would read as
  // "no noise"), and says why.
  void unreachablePointHasNoNoiseValues() {
    const Run json =
        frontier(digits() + QStringList{QStringLiteral("--mechanisms"), QStringLiteral("dp-sgd"),
                                        QStringLiteral("--epsilons"), QStringLiteral("1e-3"), QStringLiteral("--seeds"),
                                        QStringLiteral("1"), QStringLiteral("--json")});
    QVERIFY2(json.code == 0, qPrintable(json.err));
    const QJsonObject point = QJsonDocument::fromJson(json.out.toUtf8())
                                  .object()
                                  .value(QStringLiteral("mechanisms"))
                                  .toArray()[0]
                                  .toObject()
                                  .value(QStringLiteral("points"))
                                  .toArray()[0]
                                  .toObject();
    for (const char* key : {"epsilon", "steps", "sigma", "eta", "accuracy_mean"}) {
      QVERIFY2(point.value(QLatin1String(key)).isNull(), key);
    }
    QVERIFY(point.value(QStringLiteral("error")).toString().contains(QStringLiteral("unreachable")));
    const Run csv =
        frontier(digits() + QStringList{QStringLiteral("--mechanisms"), QStringLiteral("dp-sgd"),
                                        QStringLiteral("--epsilons"), QStringLiteral("1e-3"), QStringLiteral("--seeds"),
                                        QStringLiteral("1"), QStringLiteral("--csv")});
    QCOMPARE(csv.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts).value(1), QStringLiteral("dp-sgd,0.001,,10,,,,,,,0"));
  }

  void epochsMode() {
    const Run r = frontier(digits() +
                           QStringList{QStringLiteral("--mechanisms"), QStringLiteral("dp-sgld"),
                                       QStringLiteral("--vary"), QStringLiteral("epochs"), QStringLiteral("--epsilons"),
                                       QStringLiteral("2"), QStringLiteral("--epochs-list"), QStringLiteral("2,8"),
                                       QStringLiteral("--seeds"), QStringLiteral("1"), QStringLiteral("--json")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("vary")).toString(), QStringLiteral("epochs"));
    QCOMPARE(o.value(QStringLiteral("nonprivate_by_epochs")).toArray().size(), 2);
    const QJsonArray points =
        o.value(QStringLiteral("mechanisms")).toArray()[0].toObject().value(QStringLiteral("points")).toArray();
    QCOMPARE(points.size(), 2);
    QCOMPARE(points[0].toObject().value(QStringLiteral("epochs")).toDouble(), 2.0);
    QCOMPARE(points[1].toObject().value(QStringLiteral("epochs")).toDouble(), 8.0);
    for (const QJsonValue& p : points) QVERIFY(p.toObject().value(QStringLiteral("epsilon")).toDouble() <= 2.0);
  }

  void badInputExitsTwoWithOneLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("seeds 0") << QStringList{QStringLiteral("--epsilons"), QStringLiteral("1"),
                                            QStringLiteral("--seeds"), QStringLiteral("0")}
                             << "--seeds 0: must be an integer in [1, 50]";
    QTest::newRow("not private") << QStringList{QStringLiteral("--epsilons"), QStringLiteral("1"),
                                                QStringLiteral("--mechanisms"), QStringLiteral("sgd")}
                                 << "--mechanisms: 'sgd' is not a private mechanism";
    QTest::newRow("no targets") << QStringList{} << "--epsilons LIST or --target-epsilon E is required";
    QTest::newRow("negative target") << QStringList{QStringLiteral("--epsilons"), QStringLiteral("1,-1")}
                                     << "every target ε must be > 0";
    QTest::newRow("vary what") << QStringList{QStringLiteral("--epsilons"), QStringLiteral("1"),
                                              QStringLiteral("--vary"), QStringLiteral("sigma")}
                               << "--vary sigma: must be epsilon, epochs or models";
    QTest::newRow("json and csv") << QStringList{QStringLiteral("--epsilons"), QStringLiteral("1"),
                                                 QStringLiteral("--json"), QStringLiteral("--csv")}
                                  << "--json and --csv: choose one output format";
    QTest::newRow("epochs list without epochs mode")
        << QStringList{QStringLiteral("--epsilons"), QStringLiteral("1"), QStringLiteral("--epochs-list"),
                       QStringLiteral("2")}
        << "--epochs-list is for --vary epochs";
  }
  void badInputExitsTwoWithOneLine() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run r = frontier(digits() + args);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestDpxFrontier)
#include "tst_dpx_frontier.moc"
