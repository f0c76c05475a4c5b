// dpx epsilon | delta --events FILE: a run described by dp_accounting DpEvents gives the knob
// run's numbers to the last printed digit (the knob run in a separate dpx process, so no cache is
// shared), carries its phases in the JSON, orders RDP ≥ PLD upper ≥ PLD lower on a two-phase run,
// and refuses conflicting knob flags, other accountants, unsupported events and malformed files
// with one line naming the flag, the accountant or the place in the file.
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "cli.h"
#include "cli_util.h"

namespace {

using dpx::core::accounting::accountantOf;
using dpx::core::accounting::PldAccountant;
using dpx::core::accounting::RdpAccountant;
using dpx::test::runDpx;

QString pld() { return QString::fromStdString(std::string(accountantOf<PldAccountant>().id())); }
QString rdp() { return QString::fromStdString(std::string(accountantOf<RdpAccountant>().id())); }

QString eventsFile(const char* name) { return QStringLiteral(DPX_TEST_DATA_DIR "/events/") + QLatin1String(name); }

const QString kMnistKnobs = QStringLiteral("--n 60000 --m 256 --sigma 1.1 --K 14063");

// The real dpx binary in its own process: its JSON object.
QJsonObject binaryJson(const QString& line) {
  QProcess p;
  p.start(QStringLiteral(DPX_DPX_BINARY), line.split(QLatin1Char(' '), Qt::SkipEmptyParts));
  if (!p.waitForFinished(60000) || p.exitCode() != 0) {
    qWarning("dpx %s: %s", qPrintable(line), p.readAllStandardError().constData());
    return {};
  }
  return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

QJsonObject inProcessJson(const QString& line) {
  const dpx::test::CliRun r = runDpx(line);
  if (r.code != 0) qWarning("dpx %s: exit %d: %s", qPrintable(line), r.code, qPrintable(r.err));
  return dpx::test::jsonOf(r);
}

}  // namespace

class TstDpxEvents : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { QVERIFY2(QFileInfo::exists(QStringLiteral(DPX_DPX_BINARY)), "build the dpx target first"); }

  // The events file of DP-SGD on MNIST (Abadi et al. 2016: q = 256/60000, σ = 1.1, 14063 steps)
  // gives the knob run's ε, bracket, order and δ exactly.
  void eventsRunIsTheKnobRun_data() {
    QTest::addColumn<QString>("accountant");
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("knobs");
    for (const QString& a : {pld(), rdp()}) {
      QTest::addRow("%s epsilon", qPrintable(a)) << a << "epsilon"
                                                 << "dpsgd_mnist.json" << kMnistKnobs;
      QTest::addRow("%s epsilon at δ = 1e-7", qPrintable(a)) << a << "epsilon --delta 1e-7"
                                                             << "dpsgd_mnist.json" << kMnistKnobs;
      QTest::addRow("%s delta", qPrintable(a)) << a << "delta --epsilon 2"
                                               << "dpsgd_mnist.json" << kMnistKnobs;
      // Two halves of 7031 steps are one phase of 14062.
      QTest::addRow("%s halves", qPrintable(a)) << a << "epsilon"
                                                << "dpsgd_mnist_halves.json"
                                                << "--n 60000 --m 256 --sigma 1.1 --K 14062";
    }
    QTest::addRow("rdp classic conversion") << rdp() << "epsilon --conversion classic"
                                            << "dpsgd_mnist.json" << kMnistKnobs;
    QTest::addRow("rdp legacy orders") << rdp() << "epsilon --alphas 1.5,2,4,8,16,32,64"
                                       << "dpsgd_mnist.json" << kMnistKnobs;
  }
  void eventsRunIsTheKnobRun() {
    QFETCH(QString, accountant);
    QFETCH(QString, command);
    QFETCH(QString, file);
    QFETCH(QString, knobs);
    const QString head = command + QStringLiteral(" --accountant ") + accountant + QStringLiteral(" --json ");
    const QJsonObject knob = binaryJson(head + knobs);
    const QJsonObject events = inProcessJson(head + QStringLiteral("--events ") + eventsFile(qPrintable(file)));
    QVERIFY(!knob.isEmpty() && !events.isEmpty());
    for (const char* key : {"accountant", "epsilon", "delta", "alpha", "conversion", "epsilon_upper", "epsilon_lower",
                            "delta_upper", "delta_lower", "bound"}) {
      QVERIFY2(knob.value(QLatin1String(key)) == events.value(QLatin1String(key)), key);
    }
    QVERIFY(events.value(QStringLiteral("delta")).toDouble() > 0.0);
    const QJsonArray phases = events.value(QStringLiteral("phases")).toArray();
    QCOMPARE(phases.size(), 1);
    const QJsonObject phase = phases.first().toObject();
    QCOMPARE(phase.keys(), (QStringList{QStringLiteral("noise_multiplier"), QStringLiteral("sampling_probability"),
                                        QStringLiteral("steps")}));
    QCOMPARE(phase.value(QStringLiteral("noise_multiplier")).toDouble(), 1.1);
    QCOMPARE(phase.value(QStringLiteral("steps")).toInteger(), knobs.endsWith(QStringLiteral("14062")) ? 14062 : 14063);
    QCOMPARE(phase.value(QStringLiteral("sampling_probability")).toDouble(), 0.004266666667);
  }

  // The epsilon object keeps the knob run's shape: the same keys (native's promised ones
  // included), plus phases.
  void epsilonJsonShape() {
    for (const QString& a : {pld(), rdp()}) {
      const QJsonObject knob = inProcessJson(QStringLiteral("epsilon --json --accountant ") + a + u' ' + kMnistKnobs);
      const QJsonObject events = inProcessJson(QStringLiteral("epsilon --json --accountant ") + a +
                                               QStringLiteral(" --events ") + eventsFile("two_phases.json"));
      QStringList expected = knob.keys();
      expected << QStringLiteral("phases");
      expected.sort();
      QCOMPARE(events.keys(), expected);
      const QJsonObject native = events.value(QStringLiteral("native")).toObject();
      for (const std::string& key :
           (a == pld() ? accountantOf<PldAccountant>()
                       : static_cast<const dpx::core::accounting::Accountant&>(accountantOf<RdpAccountant>()))
               .info()
               .nativeKeys) {
        QVERIFY2(native.contains(QString::fromStdString(key)), key.c_str());
      }
      QCOMPARE(native.value(QStringLiteral("steps")).toInteger(), 6000);
      QVERIFY(native.value(QStringLiteral("q")).isNull() ||
              native.value(QStringLiteral("q")).isUndefined());  // two phases: no one q
      const QJsonArray phases = events.value(QStringLiteral("phases")).toArray();
      QCOMPARE(phases.size(), 2);
      QCOMPARE(phases[0].toObject().value(QStringLiteral("sampling_probability")).toDouble(), 0.01);
      QCOMPARE(phases[1].toObject().value(QStringLiteral("steps")).toInteger(), 5000);
      QCOMPARE(events.value(QStringLiteral("applicable")).toBool(), true);
    }
  }

  // Two phases: the moments accountant's ε is above the exact one's bracket, at every δ; the
  // two-phase run is above either phase alone.
  void twoPhasesAreOrdered() {
    for (const char* delta : {"1e-3", "1e-5", "1e-9"}) {
      const QString tail = QStringLiteral(" --json --delta ") + QLatin1String(delta) + QStringLiteral(" --events ") +
                           eventsFile("two_phases.json");
      const QJsonObject p = inProcessJson(QStringLiteral("epsilon --accountant ") + pld() + tail);
      const QJsonObject r = inProcessJson(QStringLiteral("epsilon --accountant ") + rdp() + tail);
      const double upper = p.value(QStringLiteral("epsilon_upper")).toDouble();
      const double lower = p.value(QStringLiteral("epsilon_lower")).toDouble();
      QVERIFY(lower > 0.0);
      QVERIFY2(r.value(QStringLiteral("epsilon")).toDouble() >= upper, delta);
      QVERIFY2(upper >= lower, delta);
      const QJsonObject second =
          inProcessJson(QStringLiteral("epsilon --json --accountant ") + pld() +
                        QStringLiteral(" --n 60000 --m 256 --sigma 1.1 --K 5000 --delta ") + QLatin1String(delta));
      QVERIFY2(lower > second.value(QStringLiteral("epsilon_upper")).toDouble(), delta);
    }
  }

  void textOutputListsThePhases() {
    const dpx::test::CliRun r =
        runDpx(QStringLiteral("epsilon --accountant ") + pld() + " --events " + eventsFile("two_phases.json"));
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains(QStringLiteral("phase 1: Poisson-subsampled Gaussian, q = 0.01, σ = 1, 1000 steps")),
             qPrintable(r.out));
    QVERIFY(r.out.contains(QStringLiteral("phase 2: ")));
    QVERIFY(r.out.contains(QStringLiteral("bracket [")));
    const dpx::test::CliRun d = runDpx(QStringLiteral("delta --epsilon 1 --accountant ") + rdp() + " --events " +
                                       eventsFile("two_phases.json"));
    QCOMPARE(d.code, 0);
    QVERIFY(d.out.contains(QStringLiteral("phase 2: ")));
  }

  // Refusals: one line on stderr naming what is wrong, nothing on stdout.
  void refusals_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expected");
    const QString mnist = QStringLiteral(" --events ") + eventsFile("dpsgd_mnist.json");
    QTest::newRow("a knob that describes the run")
        << QString("epsilon --accountant " + pld() + mnist + " --sigma 1.1") << 2 << "--sigma conflicts with --events";
    QTest::newRow("several knobs") << QString("delta --epsilon 1 --accountant " + rdp() + mnist +
                                              " --n 100 --m 10 --K 5")
                                   << 2 << "--n, --m, --K conflict with --events";
    QTest::newRow("epochs") << QString("epsilon --accountant " + rdp() + mnist + " --epochs 3") << 2
                            << "--epochs conflicts with --events";
    QTest::newRow("sampling") << QString("epsilon --accountant " + rdp() + mnist + " --sampling shuffle") << 2
                              << "--sampling conflicts with --events";
    QTest::newRow("another accountant") << QString("epsilon --accountant gdp" + mnist) << 2
                                        << "--accountant gdp does not read --events: an events run is accounted by " +
                                               pld() + " and " + rdp();
    QTest::newRow("all accountants") << QString("epsilon --accountant all" + mnist) << 2
                                     << "--accountant all with --events";
    QTest::newRow("unsupported event")
        << QString("epsilon --accountant " + pld() + " --events " + eventsFile("unsupported_sampling.json")) << 2
        << "unsupported_sampling.json: events[2].event: SampledWithoutReplacementDpEvent is not supported";
    QTest::newRow("truncated file")
        << QString("epsilon --accountant " + rdp() + " --events " + eventsFile("truncated.json")) << 2
        << "truncated.json: expected '\"' to close the string opened at byte 278 but the text ends at byte 300";
    QTest::newRow("missing file") << QString("epsilon --accountant " + rdp() + " --events " +
                                             eventsFile("no_such_file.json"))
                                  << 2 << "cannot read events file";
    QTest::newRow("random allocation, rdp")
        << QString("delta --epsilon 1 --accountant " + rdp() + " --events " + eventsFile("random_allocation.json")) << 1
        << "phase 1 (random allocation";
    QTest::newRow("negative epsilon") << QString("delta --epsilon -1 --accountant " + rdp() + mnist) << 2
                                      << "--epsilon -1: ε must be ≥ 0";
    QTest::newRow("delta out of range") << QString("epsilon --accountant " + pld() + mnist + " --delta 2") << 2
                                        << "--delta 2";
  }
  // dp_accounting pull request #414's own test: RandomAllocationDpEvent(Gaussian(2), k = 10 of
  // t = 100 steps), one epoch, ε ≈ 2.4265 at δ = 1e−6 — inside the exact bracket, and the same
  // numbers as the random-allocation accountant's knob run.
  void randomAllocationEventIsAccounted() {
    const dpx::test::CliRun r = runDpx(QString("epsilon --accountant " + pld() + " --delta 1e-6 --json --events " +
                                               eventsFile("random_allocation.json")));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject o = dpx::test::jsonOf(r);
    const double upper = o.value(QStringLiteral("epsilon_upper")).toDouble();
    const double lower = o.value(QStringLiteral("epsilon_lower")).toDouble();
    QVERIFY2(lower <= 2.4265 * 1.005 && upper >= 2.4265 * 0.995, qPrintable(r.out));
    QCOMPARE(o.value(QStringLiteral("phases")).toArray().size(), 1);
    // A bracket wider than asked says why: random allocation's work limit.
    for (const QJsonValue& caveat : o.value(QStringLiteral("caveats")).toArray()) {
      QVERIFY2(caveat.toString().contains(QStringLiteral("work limit")), qPrintable(caveat.toString()));
    }
    const dpx::test::CliRun knobs =
        runDpx(QStringLiteral("epsilon --accountant random-allocation --n 100 --m 1 --K 100 --sigma 2 "
                              "--selections 10 --steps-per-epoch 100 --delta 1e-6 --json"));
    QVERIFY2(knobs.code == 0, qPrintable(knobs.err));
    QCOMPARE(upper, dpx::test::jsonOf(knobs).value(QStringLiteral("epsilon_upper")).toDouble());
  }

  // A warm-up of Poisson-subsampled Gaussian steps, then two epochs of 1-of-50 random allocation:
  // composed on one grid by the exact accountant, less private than the warm-up alone; RDP refuses
  // the allocation phase by name.
  void warmUpThenRandomAllocationIsComposed() {
    const dpx::test::CliRun r = runDpx(QString("epsilon --accountant " + pld() + " --delta 1e-5 --json --events " +
                                               eventsFile("warmup_then_allocation.json")));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject o = dpx::test::jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("phases")).toArray().size(), 2);
    const dpx::test::CliRun warmUp =
        runDpx(QString("epsilon --accountant " + pld() + " --n 10000 --m 100 --K 400 --sigma 1 --delta 1e-5 --json"));
    QVERIFY2(warmUp.code == 0, qPrintable(warmUp.err));
    const double warmUpLower = dpx::test::jsonOf(warmUp).value(QStringLiteral("epsilon_lower")).toDouble();
    QVERIFY2(o.value(QStringLiteral("epsilon_upper")).toDouble() > warmUpLower, qPrintable(r.out));
    const dpx::test::CliRun rdpRun =
        runDpx(QString("epsilon --accountant " + rdp() + " --events " + eventsFile("warmup_then_allocation.json")));
    QCOMPARE(rdpRun.code, 1);
    QVERIFY2(rdpRun.err.contains(QStringLiteral("phase 2 (random allocation")), qPrintable(rdpRun.err));
  }

  void refusals() {
    QFETCH(QString, line);
    QFETCH(int, code);
    QFETCH(QString, expected);
    const dpx::test::CliRun r = runDpx(line);
    QCOMPARE(r.code, code);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(expected), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TstDpxEvents)
#include "tst_dpx_events.moc"
