// The dpx command line contract: subcommands, JSON shape, and one-line errors with
// exit status 2 for invalid input. Most rows run in-process; a few run the real binary.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <sstream>

#include "cli.h"
#include "cli_util.h"
#include "common/params.h"
#include "test_util.h"

namespace {

using Run = dpx::test::CliRun;
Run dpxRun(const QStringList& args) { return dpx::test::runDpx(args); }

QStringList split(const QString& line) { return line.split(QLatin1Char(' '), Qt::SkipEmptyParts); }

}  // namespace

class TestDpxCli : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void helpListsEverySubcommand() {
    const Run r = dpxRun({QStringLiteral("--help")});
    QCOMPARE(r.code, 0);
    for (const char* name :
         {"epsilon", "rdp", "delta", "curve", "tradeoff", "calibrate", "stepsize", "train", "audit"}) {
      QVERIFY2(r.out.contains(QLatin1String(name)), name);
    }
  }

  void versionPrints() {
    const Run r = dpxRun({QStringLiteral("--version")});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.startsWith(QStringLiteral("dpx ")));
    // A result depends on the numerical libraries: a bug report quotes their versions.
    for (const char* library : {"\nEigen 3.", "\noneTBB 20", "\nBoost 1.", "\nFFTW 3.", "\nzlib 1."}) {
      QVERIFY2(r.out.contains(QLatin1String(library)), library);
    }
  }

  void subcommandHelp() {
    const Run r = dpxRun(split(QStringLiteral("epsilon --help")));
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains(QStringLiteral("--sigma")));
    QVERIFY(r.out.contains(QStringLiteral("--accountant")));
  }

  void badInputExitsTwoWithOneLine_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("unknown flag") << "epsilon --accountant rdp --frobnicate 3"
                                  << "--frobnicate";
    QTest::newRow("sigma negative") << "epsilon --accountant rdp --sigma -1"
                                    << "[0.05, 100]";
    QTest::newRow("delta above range") << "epsilon --accountant rdp --delta 2"
                                       << "[1e-15, 0.1]";
    QTest::newRow("m zero") << "epsilon --accountant rdp --m 0"
                            << "[1, n]";
    QTest::newRow("n not a number") << "epsilon --accountant rdp --n abc"
                                    << "--n";
    QTest::newRow("n not a number names the range") << "epsilon --accountant rdp --n abc"
                                                    << "[10, 1e+08]";
    QTest::newRow("m above n") << "epsilon --accountant rdp --n 100 --m 200"
                               << "[1, n]";
    QTest::newRow("alphas below one") << "epsilon --accountant rdp --alphas 0.5"
                                      << "[1.01, 1024]";
    QTest::newRow("unknown accountant") << "epsilon --accountant nope"
                                        << "rdp";
    QTest::newRow("missing value") << "epsilon --accountant rdp --sigma"
                                   << "--sigma";
    QTest::newRow("unknown command") << "frobnicate"
                                     << "frobnicate";
    QTest::newRow("bad conversion") << "epsilon --accountant rdp --conversion fancy"
                                    << "improved";
    QTest::newRow("K and epochs") << "epsilon --accountant rdp --K 10 --epochs 3"
                                  << "--epochs";
    QTest::newRow("epochs too many") << "epsilon --accountant rdp --n 100000000 --m 1 --epochs 1000"
                                     << "K";
    QTest::newRow("curve bad knob") << "curve --accountant rdp --vary zeta --from 1 --to 2 --points 3"
                                    << "--vary";
    QTest::newRow("curve points") << "curve --accountant rdp --vary K --from 1 --to 2 --points 1"
                                  << "--points";
    QTest::newRow("calibrate negative target") << "calibrate --accountant rdp --target-epsilon -1"
                                               << "target";
    QTest::newRow("delta negative epsilon") << "delta --accountant rdp --epsilon -1"
                                            << "ε";
    QTest::newRow("rdp of gdp") << "rdp --accountant gdp --alphas 2"
                                << "gdp";
    QTest::newRow("stray argument") << "epsilon rdp"
                                    << "rdp";
    QTest::newRow("no command") << ""
                                << "no command";
    QTest::newRow("epochs not a number") << "epsilon --accountant rdp --epochs abc"
                                         << "> 0";
    QTest::newRow("alphas not numbers") << "epsilon --accountant rdp --alphas 2,abc"
                                        << "> 1";
    QTest::newRow("missing value names the range") << "epsilon --accountant rdp --sigma"
                                                   << "[0.05, 100]";
    QTest::newRow("delta names its symbol once") << "epsilon --accountant rdp --delta 2"
                                                 << "the target δ must be";
    QTest::newRow("a name without its value points to the help")
        << "epsilon --accountant"
        << "--accountant needs a value (see 'dpx epsilon --help')";
    QTest::newRow("a single-dash option keeps its dash") << "epsilon --accountant rdp -x"
                                                         << "unknown option -x ";
    QTest::newRow("several unknown options, as typed") << "epsilon --accountant rdp -x 1 --why 2"
                                                       << "unknown options -x, --why ";
    QTest::newRow("an empty list entry") << "epsilon --accountant rdp --alphas 2,,4"
                                         << "an empty entry";
    QTest::newRow("tradeoff in one format") << "tradeoff --accountant rdp --json --csv"
                                            << "choose one output format";
    // Every knob below and above its range: the GUI's, or the wider one scripts may use (δ).
    for (const dpx::core::KnobInfo& info : dpx::core::knobInfos()) {
      const QString flag = QStringLiteral("--") + QString::fromLatin1(info.key);
      const double min = info.hasScriptRange() ? info.scriptMin : info.min;
      const double max = info.hasScriptRange() ? info.scriptMax : info.max;
      const double below = min > 0.0 ? min / 2.0 : -1.0;
      QTest::newRow(qPrintable(flag + QStringLiteral(" below")))
          << QStringLiteral("epsilon --accountant rdp %1 %2").arg(flag).arg(below) << flag;
      if (info.knob == dpx::core::Knob::kM) continue;  // above n is its own row
      QTest::newRow(qPrintable(flag + QStringLiteral(" above")))
          << QStringLiteral("epsilon --accountant rdp %1 %2").arg(flag).arg(max * 2.0) << flag;
    }
  }
  void badInputExitsTwoWithOneLine() {
    QFETCH(QString, args);
    QFETCH(QString, mustMention);
    const Run r = dpxRun(split(args));
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
    QVERIFY(!r.err.contains(QStringLiteral("nan")));
  }

  void epsilonJsonHasTheContractedShape() {
    const Run r = dpxRun(split(QStringLiteral("epsilon --accountant rdp --sigma 1.1 --epochs 60 --json")));
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), QStringLiteral("rdp"));
    QCOMPARE(o.value(QStringLiteral("conversion")).toString(), QStringLiteral("improved"));
    QCOMPARE(o.value(QStringLiteral("bound")).toString(), QStringLiteral("upper"));
    QVERIFY(o.value(QStringLiteral("applicable")).toBool());
    QVERIFY(o.value(QStringLiteral("violations")).toArray().isEmpty());
    const QJsonObject native = o.value(QStringLiteral("native")).toObject();
    QCOMPARE(native.value(QStringLiteral("steps")).toDouble(), 14063.0);
    DPX_COMPARE_REL(native.value(QStringLiteral("q")).toDouble(), 256.0 / 60000.0, 1e-9);
    QVERIFY(o.value(QStringLiteral("epsilon")).toDouble() > 2.0);
  }

  void epsilonAllReturnsAnArrayWithEveryAccountant() {
    const Run r = dpxRun(split(QStringLiteral("epsilon --accountant all --json") + dpx::test::quickRun()));
    QCOMPARE(r.code, 0);
    const QJsonArray array = QJsonDocument::fromJson(r.out.toUtf8()).array();
    QVERIFY(array.size() >= 6);
    for (const QJsonValue& v : array) {
      const QJsonObject o = v.toObject();
      QVERIFY(o.contains(QStringLiteral("native")));
      QVERIFY2(o.value(QStringLiteral("epsilon")).isDouble(),
               qPrintable(o.value(QStringLiteral("accountant")).toString()));
    }
    QVERIFY(!r.out.contains(QStringLiteral("nan")));
  }

  void classicConversionReproducesTheMomentsAccountant() {
    // Bu, Dong, Long & Su 2020, Table 1 row 2 (MA ε 3.01) with the legacy TF Privacy grid.
    QString orders;
    for (int x = 1; x <= 99; ++x) orders += QString::number(1.0 + x / 10.0) + QLatin1Char(',');
    for (int a = 12; a <= 63; ++a) orders += QString::number(a) + (a < 63 ? QStringLiteral(",") : QString());
    const Run r = dpxRun(split(QStringLiteral("epsilon --accountant rdp --sigma 1.1 --epochs 60 --conversion classic "
                                              "--json --alphas ") +
                               orders));
    QCOMPARE(r.code, 0);
    const double eps = QJsonDocument::fromJson(r.out.toUtf8()).object().value(QStringLiteral("epsilon")).toDouble();
    QCOMPARE(dpx::test::roundTo(eps, 2), 3.01);
  }

  void rdpDeltaCurveTradeoffCalibrateStepsizeRun() {
    Run r = dpxRun(split(QStringLiteral("rdp --accountant rdp --alphas 2,4,8.5 --json")));
    QCOMPARE(r.code, 0);
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("rdp")).toArray().size(), 3);

    r = dpxRun(split(QStringLiteral("delta --accountant gdp --epsilon 1 --json")));
    QCOMPARE(r.code, 0);
    o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(o.value(QStringLiteral("delta")).toDouble() > 0.0);

    // Every point a composition of its own for the exact accountants: fewer under sanitizers.
    const int points = dpx::test::kSanitizedBuild ? 10 : 50;
    r = dpxRun(
        split(QStringLiteral("curve --accountant all --vary K --from 100 --to 10000 --points %1 --csv").arg(points) +
              dpx::test::quickRun()));
    QCOMPARE(r.code, 0);
    const QStringList lines = r.out.trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), points + 1);
    QVERIFY(lines.first().startsWith(QStringLiteral("x,rdp,gdp")));

    r = dpxRun(split(QStringLiteral("tradeoff --mu 1 --points 20 --json")));
    QCOMPARE(r.code, 0);
    o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("x")).toArray().size(), 20);

    r = dpxRun(split(QStringLiteral("calibrate --accountant rdp --target-epsilon 3 --json")));
    QCOMPARE(r.code, 0);
    o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(o.value(QStringLiteral("epsilon")).toDouble() <= 3.0);

    r = dpxRun(split(QStringLiteral("stepsize --n 50000 --m 500 --K 10000 --L 1 --target-epsilon 0.1 --json")));
    QCOMPARE(r.code, 0);
    o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* key : {"exact_fixed", "exact_decreasing_eta1", "li_fixed", "li_decreasing_t1", "c", "c2", "wang",
                            "smoothness_limits"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
  }

  void pldBracketInJson() {
    const Run r = dpxRun(split(QStringLiteral("epsilon --accountant pld --sigma 1.3 --epochs 15 --json")));
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const double upper = o.value(QStringLiteral("epsilon_upper")).toDouble();
    const double lower = o.value(QStringLiteral("epsilon_lower")).toDouble();
    QVERIFY(lower <= 0.8645406802 && 0.8645406802 <= upper);  // dp_accounting, Δ = 1e−5
    const QJsonObject native = o.value(QStringLiteral("native")).toObject();
    for (const char* key : {"epsilon_upper", "epsilon_lower", "discretisation"}) {
      QVERIFY2(native.value(QLatin1String(key)).isDouble(), key);
    }
    QCOMPARE(o.value(QStringLiteral("bound")).toString(), QStringLiteral("upper"));
    const Run bad = dpxRun(split(QStringLiteral("epsilon --accountant pld --accuracy 0")));
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains(QStringLiteral("--accuracy")));

    // δ(ε) as a bracket around the pessimistic δ, which is the contracted "delta".
    const Run d = dpxRun(split(QStringLiteral("delta --accountant pld --sigma 1.3 --epochs 15 --epsilon 0.8 --json")));
    QCOMPARE(d.code, 0);
    const QJsonObject dj = QJsonDocument::fromJson(d.out.toUtf8()).object();
    const double deltaUpper = dj.value(QStringLiteral("delta_upper")).toDouble();
    const double deltaLower = dj.value(QStringLiteral("delta_lower")).toDouble();
    QCOMPARE(dj.value(QStringLiteral("delta")).toDouble(), deltaUpper);
    QVERIFY(deltaLower > 0.0 && deltaLower <= deltaUpper);
    QVERIFY(deltaUpper < 1e-4);  // ε = 0.8 is just below the run's ε ≈ 0.86 at δ = 1e−5

    // Calibration with the exact accountant reports the bracket at the σ it returns.
    const Run c = dpxRun(split(QStringLiteral("calibrate --accountant pld --target-epsilon 1 --epochs 15 --json")));
    QCOMPARE(c.code, 0);
    const QJsonObject cj = QJsonDocument::fromJson(c.out.toUtf8()).object();
    QVERIFY(cj.value(QStringLiteral("epsilon_upper")).toDouble() <= 1.0);
    QVERIFY(cj.value(QStringLiteral("epsilon_lower")).toDouble() <=
            cj.value(QStringLiteral("epsilon_upper")).toDouble());
    QVERIFY(cj.value(QStringLiteral("discretisation")).toDouble() > 0.0);
  }

  // Steinke et al. 2024's last-iterate heuristic: an estimate, below the all-iterates bound.
  // An estimate calibrated to a target says so; an upper bound's σ, typed back in, meets the target.
  void calibrationSaysWhatItGuarantees() {
    const Run estimate = dpxRun(split(QStringLiteral("calibrate --accountant gdp --target-epsilon 2")));
    QCOMPARE(estimate.code, 0);
    QVERIFY2(estimate.out.contains(QStringLiteral("(estimate)")) &&
                 estimate.out.contains(QStringLiteral("an estimate, not a bound")),
             qPrintable(estimate.out));
    for (const char* id : {"rdp", "pld", "sgld"}) {
      const Run c = dpxRun(split(QStringLiteral("calibrate --accountant %1 --target-epsilon 1.3").arg(id)));
      QCOMPARE(c.code, 0);
      QVERIFY2(!c.out.contains(QStringLiteral("estimate")), qPrintable(c.out));
      const QString sigma = c.out.section(QStringLiteral("σ = "), 1).section(QLatin1Char(' '), 0, 0);
      const Run back = dpxRun(split(QStringLiteral("epsilon --accountant %1 --sigma %2 --json").arg(id, sigma)));
      QCOMPARE(back.code, 0);
      const double eps =
          QJsonDocument::fromJson(back.out.toUtf8()).object().value(QStringLiteral("epsilon")).toDouble();
      QVERIFY2(eps <= 1.3,
               qPrintable(QStringLiteral("%1 at the printed σ = %2: ε = %3").arg(id, sigma).arg(eps, 0, 'g', 17)));
    }
    // The step size for a target, typed back in, meets it too (rounded down: a larger η is less private).
    const Run steps = dpxRun(split(QStringLiteral("stepsize --target-epsilon 5 --json")));
    QCOMPARE(steps.code, 0);
    const double eta =
        QJsonDocument::fromJson(steps.out.toUtf8()).object().value(QStringLiteral("exact_fixed")).toDouble();
    const Run atEta = dpxRun(split(QStringLiteral("epsilon --accountant sgmcmc --eta %1 --json").arg(eta, 0, 'g', 10)));
    QCOMPARE(atEta.code, 0);
    QVERIFY(QJsonDocument::fromJson(atEta.out.toUtf8()).object().value(QStringLiteral("epsilon")).toDouble() <= 5.0);
    const Run zero = dpxRun(split(QStringLiteral("delta --accountant rdp --epsilon -0")));
    QCOMPARE(zero.code, 0);
    QVERIFY2(zero.out.contains(QStringLiteral("at ε = 0 ")), qPrintable(zero.out));
  }

  void heuristicLastIterateIsAnEstimate() {
    const Run r = dpxRun(split(QStringLiteral("epsilon --accountant heuristic-last-iterate --json")));
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), QStringLiteral("heuristic-last-iterate"));
    QCOMPARE(o.value(QStringLiteral("bound")).toString(), QStringLiteral("estimate"));
    QVERIFY(o.value(QStringLiteral("alpha")).isNull());
    const QJsonObject native = o.value(QStringLiteral("native")).toObject();
    for (const char* key : {"q", "steps", "sigma", "mu_mean"}) {
      QVERIFY2(native.value(QLatin1String(key)).isDouble(), key);
    }
    const double eps = o.value(QStringLiteral("epsilon")).toDouble();
    const Run rdp = dpxRun(split(QStringLiteral("epsilon --accountant rdp --json")));
    const QJsonObject rdpJson = QJsonDocument::fromJson(rdp.out.toUtf8()).object();
    QVERIFY(eps > 0.0 && eps < rdpJson.value(QStringLiteral("epsilon")).toDouble());
    const Run d = dpxRun(
        split(QStringLiteral("delta --accountant heuristic-last-iterate --epsilon %1 --json").arg(eps, 0, 'g', 17)));
    QCOMPARE(d.code, 0);
    DPX_COMPARE_REL(QJsonDocument::fromJson(d.out.toUtf8()).object().value(QStringLiteral("delta")).toDouble(), 1e-5,
                    1e-6);
  }

  void trainJsonHasTheContractedShape() {
    const Run r =
        dpxRun(split(QStringLiteral("train --data builtin:digits --mechanism dp-sgd --m 64 --eta 2 "
                                    "--epochs 2 --seed 3 --json --quiet")));
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* key : {"mechanism", "epsilon", "delta", "sigma", "epochs", "history", "seconds"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("mechanism")).toString(), QStringLiteral("dp-sgd"));
    const QJsonArray history = o.value(QStringLiteral("history")).toArray();
    QCOMPARE(history.size(), 2);
    for (const char* key : {"epoch", "train_accuracy", "test_accuracy", "loss", "epsilon_spent"}) {
      QVERIFY2(history.first().toObject().contains(QLatin1String(key)), key);
    }
    QVERIFY(o.value(QStringLiteral("epsilon")).toDouble() > 0.0);
    QVERIFY(history.last().toObject().value(QStringLiteral("test_accuracy")).toDouble() > 0.5);

    const Run sgd =
        dpxRun(split(QStringLiteral("train --data builtin:digits --mechanism sgd --epochs 1 --json --quiet")));
    QCOMPARE(sgd.code, 0);
    const QJsonObject s = QJsonDocument::fromJson(sgd.out.toUtf8()).object();
    QVERIFY(s.value(QStringLiteral("epsilon")).isNull());
    QCOMPARE(s.value(QStringLiteral("private")).toBool(), false);
  }

  void trainBadInput_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("no data") << "train --mechanism dp-sgd"
                             << "--data";
    QTest::newRow("unknown mechanism") << "train --data builtin:digits --mechanism magic"
                                       << "--mechanism";
    QTest::newRow("missing file") << "train --data /nonexistent/file.csv"
                                  << "/nonexistent/file.csv";
    QTest::newRow("batch above n") << "train --data builtin:digits --m 100000"
                                   << "exceeds";
    QTest::newRow("dp-sgld without λ") << "train --data builtin:digits --lambda 0"
                                       << "λ > 0";
    QTest::newRow("unknown scaling") << "train --data builtin:digits --scaling pixels"
                                     << "--scaling pixels: must be unit-norm, clip-norm or none";
    QTest::newRow("bad epochs") << "train --data builtin:digits --epochs 0"
                                << "--epochs";
    QTest::newRow("wrong accountant") << "train --data builtin:digits --mechanism dp-sgld --accountant rdp"
                                      << "rdp";
  }
  void trainBadInput() {
    QFETCH(QString, args);
    QFETCH(QString, mustMention);
    const Run r = dpxRun(split(args));
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
  }

  void unreachableCalibrationExitsOne() {
    const Run r = dpxRun(split(QStringLiteral("calibrate --accountant rdp --target-epsilon 1e-6")));
    QCOMPARE(r.code, 1);
    QVERIFY(r.err.contains(QStringLiteral("unreachable")));
  }

  void sigmaFreeCalibrationAndUnlimitedStepSizeSayWhy() {
    // sgmcmc's noise is set by η: calibrating σ is refused with the reason (exit 1, one line).
    Run r = dpxRun(split(QStringLiteral("calibrate --accountant sgmcmc --target-epsilon 1")));
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(QStringLiteral("stepsize")), qPrintable(r.err));
    // A target that never limits the step size: a reason, never a NaN or Inf.
    r = dpxRun(split(QStringLiteral("stepsize --target-epsilon 1e300 --json")));
    QCOMPARE(r.code, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains(QStringLiteral("not limited by privacy")), qPrintable(r.err));
    // One step: the decreasing schedule is the fixed one.
    r = dpxRun(split(QStringLiteral("stepsize --K 1 --target-epsilon 1 --json")));
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    DPX_COMPARE_REL(o.value(QStringLiteral("exact_decreasing_eta1")).toDouble(),
                    o.value(QStringLiteral("exact_fixed")).toDouble(), 1e-8);
  }

  void realBinaryExitCodesAndSingleLine() {
    QProcess p;
    p.start(QStringLiteral(DPX_DPX_BINARY), {QStringLiteral("epsilon"), QStringLiteral("--accountant"),
                                             QStringLiteral("rdp"), QStringLiteral("--sigma"), QStringLiteral("-1")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(err.count(QLatin1Char('\n')), 1);
    QVERIFY(err.contains(QStringLiteral("--sigma")));
    QVERIFY(p.readAllStandardOutput().isEmpty());

    p.start(QStringLiteral(DPX_DPX_BINARY), {QStringLiteral("--help")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardOutput().contains("calibrate"));
  }

  // The binary trains exactly as the commands do in this process, for one seed and thread count.
  void realBinaryTrainsAsInProcess() {
    const QStringList args =
        split(QStringLiteral("train --data builtin:digits --mechanism dp-sgd --epochs 2 --seed 7 "
                             "--threads 2 --json"));
    QProcess p;
    p.start(QStringLiteral(DPX_DPX_BINARY), args);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const Run here = dpxRun(args);
    QCOMPARE(here.code, 0);
    QStringList missing;
    auto withoutTimes = [&missing](const QByteArray& json) {
      QJsonObject o = QJsonDocument::fromJson(json).object();
      for (const QString& key :
           {QStringLiteral("examples_per_second"), QStringLiteral("training_seconds"), QStringLiteral("seconds")}) {
        if (!o.contains(key)) missing << key;
        o.remove(key);
      }
      return o;
    };
    const QJsonObject binary = withoutTimes(p.readAllStandardOutput());
    QVERIFY(binary.value(QStringLiteral("test_accuracy")).toDouble() > 0.5);
    QCOMPARE(binary, withoutTimes(here.out.toUtf8()));
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QLatin1Char(' '))));
  }
};

QTEST_GUILESS_MAIN(TestDpxCli)
#include "tst_dpx_cli.moc"
