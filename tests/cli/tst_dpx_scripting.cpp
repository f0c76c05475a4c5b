// Numbers a script can trust, found by driving dpx with other libraries' test cases: δ_upper of
// the exact accountant never below the true δ (q = 1 is exactly Gaussian DP, whose δ(ε) is a
// closed form); `dpx delta --accuracy` tunes the grid to the δ asked about; delta, rdp, tradeoff
// and epsilon state applicability the same way; δ in (0, 1) on the command line; the ecosystem's
// names (--sample-rate, --noise-multiplier, --steps) and hints for its other words; tradeoff at
// the type I errors asked for.
#include <QJsonArray>
#include <QTest>
#include <cmath>

#include "accounting/tradeoff.h"
#include "cli_util.h"
#include "test_util.h"

using dpx::test::CliRun;
using dpx::test::jsonOf;
using dpx::test::runDpx;

namespace {

// Sanitizer builds run the exact compositions about twenty times slower: fewer cases there.
constexpr bool kSanitized = dpx::test::kSanitizedBuild;

// δ(ε) of G_μ (Dong, Roth & Su 2019, Cor. 2.13): Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the second
// term's exponential folded into the tail so nothing overflows.
double gaussianDpDelta(double mu, double epsilon) {
  const auto logPhi = [](double x) { return std::log(0.5 * std::erfc(-x / std::sqrt(2.0))); };
  const double a = logPhi(-epsilon / mu + mu / 2.0);
  const double b = epsilon + logPhi(-epsilon / mu - mu / 2.0);
  return a > b ? std::exp(a) * -std::expm1(b - a) : 0.0;
}

QString number(double x) { return QString::number(x, 'g', 17); }

}  // namespace

class TestDpxScripting : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void exactDeltaNeverBelowTheTruth_data() {
    QTest::addColumn<double>("epsilon");
    QTest::addColumn<QString>("accuracy");
    for (double epsilon : {0.5, 2.0, 5.0, 8.0, 10.0, 12.0, 20.0}) {
      for (const char* accuracy : {"1e-4", "0.01"}) {
        if (kSanitized && epsilon < 8.0 && QLatin1String(accuracy) == QLatin1String("1e-4")) continue;
        QTest::addRow("eps=%g acc=%s", epsilon, accuracy) << epsilon << QString::fromLatin1(accuracy);
      }
    }
  }

  // q = 1, σ = 100, K = 10⁴: G_μ with μ = √K/σ = 1; at ε = 10 the true δ is 9.8e−23, far below
  // the composition's round-off: δ_upper must still be positive and above it.
  void exactDeltaNeverBelowTheTruth() {
    QFETCH(double, epsilon);
    QFETCH(QString, accuracy);
    const CliRun run =
        runDpx(QStringLiteral("delta --accountant pld --n 1000 --m 1000 --sigma 100 --K 10000 --epsilon ") +
               number(epsilon) + QStringLiteral(" --accuracy ") + accuracy + QStringLiteral(" --json"));
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const QJsonObject o = jsonOf(run);
    const double truth = gaussianDpDelta(1.0, epsilon);
    const double upper = o.value(QStringLiteral("delta_upper")).toDouble();
    const double lower = o.value(QStringLiteral("delta_lower")).toDouble();
    QVERIFY2(upper >= 1e-20, qPrintable(run.out));  // at least the truncated tails' mass
    QVERIFY2(upper >= truth * (1.0 - 1e-9), qPrintable(QStringLiteral("δ_upper %1 < true δ %2").arg(upper).arg(truth)));
    // Below the composition's round-off the optimistic end says nothing: it is reported as 0.
    QVERIFY2(lower <= truth * (1.0 + 1e-6) + 1e-15, qPrintable(run.out));
    if (upper <= 1e-12) QCOMPARE(lower, 0.0);
    QVERIFY(lower <= upper);
  }

  // The grid is chosen for the δ asked about: a tighter --accuracy narrows its bracket to the
  // width asked for, and never loosens δ_upper, at every ε (not only near the one --delta implies).
  void deltaAccuracyIsTheDeltasAccuracy() {
    for (double epsilon : {0.3, 1.0, 2.0, 3.0}) {
      if (kSanitized && epsilon != 1.0) continue;
      double previousUpper = 2.0;
      for (const char* accuracy : {"0.1", "0.01", "0.001"}) {
        const CliRun run = runDpx(
            QStringLiteral("delta --accountant pld --n 10000 --m 100 --sigma 1 --K 1000 --epsilon ") + number(epsilon) +
            QStringLiteral(" --accuracy ") + QLatin1String(accuracy) + QStringLiteral(" --json"));
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject o = jsonOf(run);
        const QJsonObject native = o.value(QStringLiteral("native")).toObject();
        const double upper = o.value(QStringLiteral("delta_upper")).toDouble();
        const double lower = o.value(QStringLiteral("delta_lower")).toDouble();
        const double asked = QString::fromLatin1(accuracy).toDouble();
        QVERIFY2(upper > 1e-12, qPrintable(run.out));  // above the round-off, where a bracket can narrow
        QCOMPARE(native.value(QStringLiteral("requested_width")).toDouble(), asked);
        QVERIFY2(native.value(QStringLiteral("relative_width")).toDouble() <= asked, qPrintable(run.out));
        DPX_COMPARE_REL(native.value(QStringLiteral("relative_width")).toDouble(), (upper - lower) / upper, 1e-6);
        QVERIFY2(upper <= previousUpper * (1.0 + 1e-9),
                 qPrintable(QStringLiteral("ε = %1, accuracy %2: δ_upper %3 above the coarser %4")
                                .arg(epsilon)
                                .arg(QLatin1String(accuracy))
                                .arg(upper)
                                .arg(previousUpper)));
        previousUpper = upper;
      }
    }
  }

  // --neighbouring replace-one: the analyses are for add/remove. Every command says so the same
  // way, with the same words.
  void everyCommandStatesApplicability() {
    const QString run = QStringLiteral(" --accountant rdp --n 60000 --m 256 --sigma 1.1 --K 1000 --json");
    const QStringList commands{QStringLiteral("epsilon") + run, QStringLiteral("delta --epsilon 1") + run,
                               QStringLiteral("rdp --alphas 2,8") + run, QStringLiteral("tradeoff --fpr 0.01") + run};
    for (const QString& command : commands) {
      const CliRun plain = runDpx(command);
      QVERIFY2(plain.code == 0, qPrintable(command + QLatin1Char('\n') + plain.err));
      QCOMPARE(jsonOf(plain).value(QStringLiteral("applicable")).toBool(), true);
      QCOMPARE(jsonOf(plain).value(QStringLiteral("violations")).toArray().size(), 0);
      const CliRun replace = runDpx(command + QStringLiteral(" --neighbouring replace-one"));
      QVERIFY2(replace.code == 0, qPrintable(replace.err));
      const QJsonObject o = jsonOf(replace);
      QVERIFY2(o.contains(QStringLiteral("applicable")), qPrintable(command));
      QCOMPARE(o.value(QStringLiteral("applicable")).toBool(), false);
      const QJsonArray violations = o.value(QStringLiteral("violations")).toArray();
      QCOMPARE(violations.size(), 1);
      QVERIFY2(violations.at(0).toString().contains(QStringLiteral("replace-one")), qPrintable(replace.out));
    }
    // The text forms say it too (the CSV ones on stderr, so the table stays a table).
    QVERIFY(runDpx(QStringLiteral("delta --epsilon 1 --accountant rdp --neighbouring replace-one"))
                .out.contains(QStringLiteral("VIOLATED")));
    QVERIFY(runDpx(QStringLiteral("rdp --accountant rdp --neighbouring replace-one"))
                .err.contains(QStringLiteral("VIOLATED")));
  }

  // Libraries' users calibrate at δ = 0.13 or 0.79: any δ in (0, 1) on the command line, each
  // accountant answering with a finite ε ≥ 0 or its reason.
  void deltaAnywhereInTheOpenUnitInterval() {
    for (const char* delta : {"0.13", "0.79", "1e-20"}) {
      const CliRun run =
          runDpx(QStringLiteral("epsilon --accountant all --K 1000 --json --delta ") + QLatin1String(delta));
      QVERIFY2(run.code == 0, qPrintable(run.err));
      const QJsonArray rows = QJsonDocument::fromJson(run.out.toUtf8()).array();
      QVERIFY(rows.size() >= 8);
      for (const QJsonValue& row : rows) {
        const QJsonObject o = row.toObject();
        const QJsonValue eps = o.value(QStringLiteral("epsilon"));
        QVERIFY2(
            eps.isNull() ? o.contains(QStringLiteral("error")) : eps.toDouble() >= 0.0 && std::isfinite(eps.toDouble()),
            qPrintable(QJsonDocument(o).toJson(QJsonDocument::Compact)));
      }
    }
    // ε falls as δ grows, for the exact accountant too.
    const double at13 = jsonOf(runDpx(QStringLiteral("epsilon --accountant pld --K 1000 --json --delta 0.13")))
                            .value(QStringLiteral("epsilon"))
                            .toDouble();
    const double at5 = jsonOf(runDpx(QStringLiteral("epsilon --accountant pld --K 1000 --json --delta 1e-5")))
                           .value(QStringLiteral("epsilon"))
                           .toDouble();
    QVERIFY(at13 < at5);
    for (const char* delta : {"0", "1", "1.5", "-0.1"}) {
      const CliRun bad = runDpx(QStringLiteral("epsilon --accountant rdp --delta ") + QLatin1String(delta));
      QCOMPARE(bad.code, 2);
      QVERIFY2(bad.err.contains(QStringLiteral("must be in (0, 1)")), qPrintable(bad.err));
    }
  }

  // --sample-rate, --noise-multiplier and --steps are the knob run itself, to the byte.
  void ecosystemNamesAreTheKnobs() {
    const CliRun knobs =
        runDpx(QStringLiteral("epsilon --accountant all --n 25600 --m 256 --sigma 1.1 --K 1000 --json"));
    const CliRun theirs = runDpx(
        QStringLiteral("epsilon --accountant all --sample-rate 0.01 --noise-multiplier 1.1 --steps 1000 --json"));
    QVERIFY2(theirs.code == 0, qPrintable(theirs.err));
    QCOMPARE(theirs.out, knobs.out);
    // With --n, m = q·n; with --m, n = m/q.
    QCOMPARE(
        runDpx(QStringLiteral("epsilon --accountant rdp --sample-rate 0.01 --n 25600 --sigma 1.1 --K 1000 --json")).out,
        runDpx(QStringLiteral("epsilon --accountant rdp --n 25600 --m 256 --sigma 1.1 --K 1000 --json")).out);
    QCOMPARE(
        runDpx(QStringLiteral("epsilon --accountant rdp --sample-rate 0.01 --m 600 --sigma 1.1 --K 1000 --json")).out,
        runDpx(QStringLiteral("epsilon --accountant rdp --n 60000 --m 600 --sigma 1.1 --K 1000 --json")).out);
    // q is kept exactly, or refused with the reason.
    const QJsonObject odd = jsonOf(runDpx(QStringLiteral("epsilon --accountant rdp --sample-rate 0.00427 --json")));
    QCOMPARE(odd.value(QStringLiteral("native")).toObject().value(QStringLiteral("q")).toDouble(), 0.00427);
    for (const char* line :
         {"epsilon --accountant rdp --sample-rate 0.0042 --n 60001",
          "epsilon --accountant rdp --sample-rate 0.01 --n 100 --m 1", "epsilon --accountant rdp --sample-rate 1.5",
          "epsilon --accountant rdp --sample-rate 0"}) {
      const CliRun bad = runDpx(QString::fromLatin1(line));
      QCOMPARE(bad.code, 2);
      QVERIFY2(bad.err.startsWith(QStringLiteral("dpx epsilon: --sample-rate")), qPrintable(bad.err));
    }
  }

  // Another library's word gets a hint, not a bare refusal.
  void unknownOptionsGetAHint_data() {
    QTest::addColumn<QString>("flag");
    QTest::addColumn<QString>("hint");
    QTest::newRow("q") << "--q 0.01"
                       << "did you mean --sample-rate";
    QTest::newRow("noise_multiplier") << "--noise_multiplier 1"
                                      << "did you mean --noise-multiplier";
    QTest::newRow("batch_size") << "--batch_size 256"
                                << "did you mean --m";
    QTest::newRow("typo") << "--sigmaa 1"
                          << "did you mean --sigma?";
    QTest::newRow("target_delta") << "--target_delta 1e-5"
                                  << "did you mean --delta";
  }

  void unknownOptionsGetAHint() {
    QFETCH(QString, flag);
    QFETCH(QString, hint);
    const CliRun run = runDpx(QStringLiteral("epsilon --accountant rdp ") + flag);
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(hint), qPrintable(run.err));
    QVERIFY(run.err.contains(QStringLiteral("see 'dpx epsilon --help'")));
  }

  // --fpr: the curve at exactly the type I errors asked for, in their order.
  void tradeoffAtTheTypeOneErrorsAskedFor() {
    const CliRun run = runDpx(
        QStringLiteral("tradeoff --accountant gdp --n 1000 --m 1000 --sigma 2 --K 4 --fpr 0.5,0.001,0.01,0 --json"));
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const QJsonObject o = jsonOf(run);
    const QJsonArray x = o.value(QStringLiteral("x")).toArray();
    const QJsonArray y = o.value(QStringLiteral("y")).toArray();
    const QList<double> asked{0.5, 0.001, 0.01, 0.0};
    QCOMPARE(x.size(), asked.size());
    for (qsizetype i = 0; i < asked.size(); ++i) {
      QCOMPARE(x.at(i).toDouble(), asked[i]);
      // gdp's G_μ, μ = q√(K(e^{1/σ²} − 1)) (Bu et al. 2020's CLT) at q = 1, K = 4, σ = 2.
      const double mu = std::sqrt(4.0 * std::expm1(0.25));
      DPX_COMPARE_REL(y.at(i).toDouble(), dpx::core::accounting::gaussianTradeoff(mu, asked[i]), 1e-9);
    }
    for (const char* bad : {"--fpr 0.1,1.5", "--fpr 0.1 --points 10", "--fpr abc"}) {
      const CliRun refused = runDpx(QStringLiteral("tradeoff --accountant gdp ") + QLatin1String(bad));
      QCOMPARE(refused.code, 2);
      QVERIFY2(refused.err.contains(QStringLiteral("--fpr")), qPrintable(refused.err));
    }
  }
};

QTEST_GUILESS_MAIN(TestDpxScripting)
#include "tst_dpx_scripting.moc"
