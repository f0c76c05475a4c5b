// The GUI's slow `pld` view (ui/compute/slow_analytics): its ε-vs-K bracket is core's
// pldEpsilonCurve turned into plot data, so it shows what `dpx curve --accountant pld --vary K`
// prints for the same knobs and K.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include "accounting/curves.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/registry.h"
#include "compute/slow_analytics.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

struct CliCurve {
  std::vector<double> x, upper, lower;
  double discretisation = 0.0;
};

// `dpx curve … --json` through the real binary (the ui tests do not link the CLI library).
QString runDpx(const QStringList& args, CliCurve& out) {
  const QString binary = QStringLiteral(DPX_DPX_BINARY);
  if (!QFile::exists(binary)) return QStringLiteral("no dpx binary at %1: build the dpx target first").arg(binary);
  QProcess process;
  process.start(binary, args);
  if (!process.waitForFinished(600000) || process.exitCode() != 0) {
    return QStringLiteral("dpx failed: ") + QString::fromUtf8(process.readAllStandardError());
  }
  const QJsonObject o = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
  const QJsonObject c = o.value(QStringLiteral("curves")).toArray().at(0).toObject();
  if (c.value(QStringLiteral("accountant")).toString() != QStringLiteral("pld")) return QStringLiteral("no pld curve");
  for (const QJsonValue& v : o.value(QStringLiteral("x")).toArray()) out.x.push_back(v.toDouble(-1));
  for (const QJsonValue& v : c.value(QStringLiteral("epsilon")).toArray()) out.upper.push_back(v.toDouble(-1));
  for (const QJsonValue& v : c.value(QStringLiteral("epsilon_lower")).toArray()) out.lower.push_back(v.toDouble(-1));
  out.discretisation = c.value(QStringLiteral("discretisation")).toDouble(-1);
  if (out.upper.size() != out.x.size() || out.lower.size() != out.x.size()) return QStringLiteral("ragged pld curve");
  return {};
}

}  // namespace

class TestSlowAnalytics : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void axisIsTheAnalyticCurvesAxisWithoutRepeats() {
    const std::vector<std::int64_t> steps = dpx::ui::pldCurveSteps(Params{});  // K = 14063: up to 140630
    QCOMPARE(steps.size(), std::size_t(dpx::ui::kPldCurvePoints));
    QCOMPARE(steps.front(), std::int64_t(1));
    QCOMPARE(steps.back(), std::int64_t(140630));
    Params small;
    small.K = 5;  // the axis' floor, 100: rounding repeats 1, 1, 2, 2, …
    const std::vector<std::int64_t> few = dpx::ui::pldCurveSteps(small);
    QCOMPARE(few.back(), std::int64_t(100));
    QVERIFY(std::adjacent_find(few.begin(), few.end(), [](auto a, auto b) { return a >= b; }) == few.end());
  }

  void guiCurveIsCoresCurve() {
    // computePld only copies pldEpsilonCurve's points into plot data (x = K, or epochs K·m/n).
    Params p;
    p.sigma = 0.8;
    p.K = 3000;
    std::atomic<bool> cancel{false};
    const auto s = dpx::ui::computePld(p, false, cancel, [](double) {});
    QVERIFY(s.has_value());
    QVERIFY2(s->error.empty(), s->error.c_str());
    QCOMPARE(s->epsilonUpper.id, std::string("pld"));
    QCOMPARE(s->epsilonLower.id, std::string("pld:lower"));
    const std::vector<std::int64_t> steps = dpx::ui::pldCurveSteps(p);
    auto curve = pldEpsilonCurve(p, steps);
    QVERIFY(curve.isOk());
    QCOMPARE(s->epsilonUpper.x.size(), steps.size());
    QCOMPARE(s->epsilonLower.x.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      QCOMPARE(s->epsilonUpper.x[i], static_cast<double>(steps[i]));
      QCOMPARE(s->epsilonUpper.y[i], *curve->points[i].epsilonUpper);
      QCOMPARE(s->epsilonLower.y[i], *curve->points[i].epsilonLower);
      if (i > 0) QVERIFY(s->epsilonUpper.y[i] >= s->epsilonUpper.y[i - 1]);
    }
    QVERIFY(QString::fromStdString(s->epsilonUpper.tooltip).contains(QStringLiteral("one loss grid")));
    const auto epochs = dpx::ui::computePld(p, true, cancel, [](double) {});
    QVERIFY(epochs.has_value());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      DPX_COMPARE_REL(epochs->epsilonUpper.x[i], static_cast<double>(steps[i]) * p.m / p.n, 1e-15);
      QCOMPARE(epochs->epsilonUpper.y[i], s->epsilonUpper.y[i]);
    }
  }

  void guiAndCliGiveTheSameNumbers() {
    // The default knobs: the GUI's ε-vs-K bracket and `dpx curve --accountant pld --vary K` on the
    // same 24 log-spaced K. The CLI prints 10 significant digits, hence the tolerance 1e−9.
    const Params p;
    std::atomic<bool> cancel{false};
    const auto start = std::chrono::steady_clock::now();
    const auto s = dpx::ui::computePld(p, false, cancel, [](double) {});
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    QVERIFY(s.has_value());
    qInfo("computePld at the default knobs (bracket at K, trade-off, 24-point curve): %.0f ms", ms);
    const std::int64_t maxK = dpx::ui::epsilonAxisMaxSteps(p);
    CliCurve cli;
    const QString problem = runDpx(
        {QStringLiteral("curve"), QStringLiteral("--accountant"), QStringLiteral("pld"), QStringLiteral("--vary"),
         QStringLiteral("K"), QStringLiteral("--from"), QStringLiteral("1"), QStringLiteral("--to"),
         QString::number(maxK), QStringLiteral("--points"), QString::number(dpx::ui::kPldCurvePoints),
         QStringLiteral("--spacing"), QStringLiteral("log"), QStringLiteral("--json")},
        cli);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(s->epsilonUpper.x.size(), cli.x.size());  // no repeats on this axis
    for (std::size_t i = 0; i < cli.x.size(); ++i) {
      QCOMPARE(s->epsilonUpper.x[i], cli.x[i]);
      DPX_COMPARE_REL(s->epsilonUpper.y[i], cli.upper[i], 1e-9);
      DPX_COMPARE_REL(s->epsilonLower.y[i], cli.lower[i], 1e-9);
    }
    auto curve = pldEpsilonCurve(p, dpx::ui::pldCurveSteps(p));
    QVERIFY(curve.isOk());
    DPX_COMPARE_REL(cli.discretisation, curve->discretisation, 1e-9);
  }

  // A pipeline that batches without Poisson sampling gets the random-allocation upper bound
  // beside Poisson's bracket and the shuffle lower bound: its row at the run, the same ε as the
  // accountant's, and a curve along K that grows with whole epochs. Unset sampling leaves it out
  // and says why.
  void randomAllocationBesidePoissonAndShuffle() {
    Params p;
    p.n = 1000;
    p.m = 100;  // t = 10 batches per epoch
    p.sigma = 1.0;
    p.K = 50;  // 5 epochs
    p.sampling = Sampling::kBallsInBins;
    std::atomic<bool> cancel{false};
    const auto s = dpx::ui::computePld(p, false, cancel, [](double) {});
    QVERIFY(s.has_value());
    QVERIFY(s->shuffleDone);
    QVERIFY2(s->randomAllocation.epsilon.has_value(), s->randomAllocation.error.c_str());
    const RandomAllocationAccountant& ra = accountantOf<RandomAllocationAccountant>();
    const auto direct = ra.epsilon(p);
    QVERIFY(direct.isOk());
    QCOMPARE(s->randomAllocation.epsilon->epsilon, direct->epsilon);
    QCOMPARE(s->randomAllocationCurve.id, dpx::ui::randomAllocationCurveId());
    const std::vector<double>& y = s->randomAllocationCurve.y;
    QVERIFY(y.size() >= 3);
    QVERIFY(std::is_sorted(y.begin(), y.end()));
    QVERIFY(y.back() > y.front());
    QVERIFY(!s->shuffleCurve.y.empty());  // the lower bound beside it
    QVERIFY(!s->epsilonUpper.y.empty());  // and Poisson's bracket
    QVERIFY2(s->samplerNote.find("balls-in-bins batches: ε ≤ ") != std::string::npos, s->samplerNote.c_str());

    p.sampling.reset();
    const auto unset = dpx::ui::computePld(p, false, cancel, [](double) {});
    QVERIFY(unset.has_value());
    QVERIFY(!unset->randomAllocation.epsilon.has_value());
    QVERIFY(unset->randomAllocationCurve.y.empty());
    QVERIFY2(unset->randomAllocation.error.find("Sampling knob") != std::string::npos,
             unset->randomAllocation.error.c_str());
  }

  void cancelledComputationReturnsNothing() {
    Params p;
    p.sigma = 0.77;  // nothing cached
    std::atomic<bool> cancel{false};
    const auto s = dpx::ui::computePld(p, false, cancel, [&](double f) {
      if (f > 0.5) cancel = true;  // half-way through the curve
    });
    QVERIFY(!s.has_value());
  }
};

QTEST_MAIN(TestSlowAnalytics)
#include "tst_slow_analytics.moc"
