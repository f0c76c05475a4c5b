// dpx frontier --target-accuracy / --best-at-epsilon on a small digits frontier: the answers agree
// with the points printed beside them (the first target reaching the accuracy, the target below
// it, the most accurate point within the budget), an unreachable accuracy gives a reason and exit
// 0, the text names each mechanism, and bad goal flags exit 2 with one line before any training.
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

#include "cli_util.h"

namespace {

using Run = dpx::test::CliRun;

// Three targets, one seed, 5 epochs of DP-SGD and DP-SGLD on digits: about a second.
QStringList smallFrontier() {
  return QStringList{QStringLiteral("frontier"),   QStringLiteral("--data"),       QStringLiteral("builtin:digits"),
                     QStringLiteral("--m"),        QStringLiteral("64"),           QStringLiteral("--eta"),
                     QStringLiteral("0.5"),        QStringLiteral("--epochs"),     QStringLiteral("5"),
                     QStringLiteral("--epsilons"), QStringLiteral("0.25,1,4"),     QStringLiteral("--seeds"),
                     QStringLiteral("1"),          QStringLiteral("--mechanisms"), QStringLiteral("dp-sgd,dp-sgld")};
}

Run frontier(const QStringList& args) { return dpx::test::runDpx(smallFrontier() + args); }

QJsonArray pointsOf(const QJsonObject& o, int series) {
  return o.value(QStringLiteral("mechanisms")).toArray()[series].toObject().value(QStringLiteral("points")).toArray();
}

}  // namespace

class TestDpxGoalSeek : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void answersAgreeWithThePoints() {
    const Run r = frontier({QStringLiteral("--target-accuracy"), QStringLiteral("50%"),
                            QStringLiteral("--best-at-epsilon"), QStringLiteral("2"), QStringLiteral("--json")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject o = dpx::test::jsonOf(r);
    const QJsonObject goal = o.value(QStringLiteral("target_accuracy")).toObject();
    QCOMPARE(goal.value(QStringLiteral("accuracy")).toDouble(), 0.5);
    QCOMPARE(goal.value(QStringLiteral("statistic")).toString(), QStringLiteral("mean"));
    for (const char* key : {"mechanism", "target_epsilon", "epsilon", "sigma", "per_mechanism"})
      QVERIFY2(goal.contains(QLatin1String(key)), key);
    const QJsonArray per = goal.value(QStringLiteral("per_mechanism")).toArray();
    QCOMPARE(per.size(), 2);
    double overall = 1e300;
    for (int s = 0; s < 2; ++s) {
      const QJsonObject a = per[s].toObject();
      QCOMPARE(a.value(QStringLiteral("mechanism")).toString(),
               o.value(QStringLiteral("mechanisms")).toArray()[s].toObject().value(QStringLiteral("mechanism")));
      QVERIFY(!a.value(QStringLiteral("message")).toString().isEmpty());
      // The first point (in target order) whose mean reaches 50 %, recomputed from the points.
      const QJsonArray points = pointsOf(o, s);
      int first = -1;
      for (int i = 0; i < points.size() && first < 0; ++i) {
        const QJsonValue mean = points[i].toObject().value(QStringLiteral("accuracy_mean"));
        if (mean.isDouble() && mean.toDouble() >= 0.5) first = i;
      }
      QCOMPARE(a.value(QStringLiteral("reached")).toBool(), first >= 0);
      if (first < 0) {
        QVERIFY(a.value(QStringLiteral("bracket")).isNull() && a.value(QStringLiteral("point")).isNull());
        QCOMPARE(a.value(QStringLiteral("outcome")).toString(), QStringLiteral("not_reached"));
        continue;
      }
      const QJsonObject p = a.value(QStringLiteral("point")).toObject();
      QCOMPARE(p, points[first].toObject());
      QCOMPARE(p.value(QStringLiteral("batch")).toInt(), 64);
      const QJsonArray bracket = a.value(QStringLiteral("bracket")).toArray();
      QCOMPARE(bracket[1].toDouble(), p.value(QStringLiteral("target_epsilon")).toDouble());
      if (a.value(QStringLiteral("outcome")).toString() == QStringLiteral("between")) {
        const double lo = bracket[0].toDouble();
        const double interpolated = a.value(QStringLiteral("interpolated_epsilon")).toDouble();
        QVERIFY(lo < bracket[1].toDouble() && lo <= interpolated && interpolated <= bracket[1].toDouble());
      } else {
        QCOMPARE(a.value(QStringLiteral("outcome")).toString(), QStringLiteral("at_first_point"));
        QVERIFY(bracket[0].isNull());
      }
      overall = std::min(overall, bracket[1].toDouble());
    }
    if (overall < 1e300) QCOMPARE(goal.value(QStringLiteral("target_epsilon")).toDouble(), overall);

    const QJsonObject best = o.value(QStringLiteral("best_at_epsilon")).toObject();
    QCOMPARE(best.value(QStringLiteral("epsilon_max")).toDouble(), 2.0);
    const QJsonArray perBest = best.value(QStringLiteral("per_mechanism")).toArray();
    QCOMPARE(perBest.size(), 2);
    for (int s = 0; s < 2; ++s) {
      double top = -1.0;
      for (const QJsonValue& v : pointsOf(o, s)) {
        const QJsonObject p = v.toObject();
        if (p.value(QStringLiteral("epsilon")).isDouble() && p.value(QStringLiteral("epsilon")).toDouble() <= 2.0)
          top = std::max(top, p.value(QStringLiteral("accuracy_mean")).toDouble());
      }
      const QJsonObject a = perBest[s].toObject();
      QCOMPARE(a.value(QStringLiteral("found")).toBool(), top >= 0.0);
      if (top >= 0.0) {
        QCOMPARE(a.value(QStringLiteral("accuracy")).toDouble(), top);
        QVERIFY(a.value(QStringLiteral("point")).toObject().value(QStringLiteral("epsilon")).toDouble() <= 2.0);
      }
    }
  }

  void unreachableAccuracyGivesAReason() {
    const Run r = frontier({QStringLiteral("--target-accuracy"), QStringLiteral("1"), QStringLiteral("--json")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject goal = dpx::test::jsonOf(r).value(QStringLiteral("target_accuracy")).toObject();
    QVERIFY(goal.value(QStringLiteral("mechanism")).isNull());
    QVERIFY(goal.value(QStringLiteral("target_epsilon")).isNull());
    QVERIFY(goal.value(QStringLiteral("reason")).toString().contains(QStringLiteral("at any target ε")));
    for (const QJsonValue& v : goal.value(QStringLiteral("per_mechanism")).toArray()) {
      const QJsonObject a = v.toObject();
      QCOMPARE(a.value(QStringLiteral("reached")).toBool(), false);
      QVERIFY(a.value(QStringLiteral("best_accuracy")).toDouble() < 1.0);
      QCOMPARE(a.value(QStringLiteral("largest_target_epsilon")).toDouble(), 4.0);
    }
  }

  void textHasALinePerMechanism() {
    const Run r = frontier({QStringLiteral("--target-accuracy"), QStringLiteral("0.5"),
                            QStringLiteral("--accuracy-statistic"), QStringLiteral("min")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("goal: accuracy ≥ 50 % (worst seed)\n  DP-SGD ")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("\n  DP-SGLD ")), qPrintable(r.out));
  }

  void badGoalExitsTwoWithOneLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("percent without its sign")
        << QStringList{QStringLiteral("--target-accuracy"), QStringLiteral("85")}
        << "--target-accuracy 85: must be a fraction in (0, 1] or a percentage in (0, 100]% (for 85 percent write "
           "0.85 or 85%)";
    QTest::newRow("zero") << QStringList{QStringLiteral("--target-accuracy"), QStringLiteral("0")}
                          << "--target-accuracy 0: must be a fraction in (0, 1]";
    QTest::newRow("above 100 %") << QStringList{QStringLiteral("--target-accuracy"), QStringLiteral("120%")}
                                 << "--target-accuracy 120%: must be a fraction in (0, 1]";
    QTest::newRow("not a number") << QStringList{QStringLiteral("--target-accuracy"), QStringLiteral("high")}
                                  << "--target-accuracy";
    QTest::newRow("epochs frontier") << QStringList{QStringLiteral("--target-accuracy"), QStringLiteral("0.5"),
                                                    QStringLiteral("--vary"), QStringLiteral("epochs")}
                                     << "--target-accuracy needs a frontier over ε";
    QTest::newRow("csv") << QStringList{QStringLiteral("--best-at-epsilon"), QStringLiteral("1"),
                                        QStringLiteral("--csv")}
                         << "(--csv is one row per point)";
    QTest::newRow("budget") << QStringList{QStringLiteral("--best-at-epsilon"), QStringLiteral("-1")}
                            << "--best-at-epsilon -1: must be an ε > 0";
    QTest::newRow("statistic") << QStringList{QStringLiteral("--target-accuracy"), QStringLiteral("0.5"),
                                              QStringLiteral("--accuracy-statistic"), QStringLiteral("median")}
                               << "--accuracy-statistic 'median': must be mean or min";
    QTest::newRow("statistic alone") << QStringList{QStringLiteral("--accuracy-statistic"), QStringLiteral("min")}
                                     << "--accuracy-statistic goes with --target-accuracy or --best-at-epsilon";
  }
  void badGoalExitsTwoWithOneLine() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run r = frontier(args);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestDpxGoalSeek)
#include "tst_dpx_goal_seek.moc"
