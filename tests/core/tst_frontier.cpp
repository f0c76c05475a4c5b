// The privacy–utility frontier on the embedded digits: every point's reported ε is at most its
// target, the mean accuracy rises with ε (within the spread of three seeds), the non-private
// ceiling sits above the private points, points stream as they finish, a cancel stops the
// frontier, and the result does not depend on the number of threads.
#include <QTest>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "test_util.h"
#include "training/dataset_cache.h"
#include "training/frontier.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

std::shared_ptr<const TrainTestSplit> digits() {
  static DatasetCache cache;
  DatasetKey key;
  key.source = "builtin:digits";
  return cache.get(key)->data;
}

// The digits setting of `dpx frontier`'s help: batch 64, η = 0.5, λ = 1e−3, 30 epochs.
FrontierRequest digitsRequest() {
  FrontierRequest r;
  r.mechanisms = {Mechanism::kDpSgld, Mechanism::kDpSgd};
  r.base.knobs.m = 64;
  r.base.knobs.eta = 0.5;
  r.base.knobs.lambda = 1e-3;
  r.base.epochs = 30;
  r.base.seed = 1;
  r.seeds = 3;
  r.epsilons = frontierEpsilonGrid(1.0, 10);
  return r;
}

}  // namespace

class TestFrontier : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gridsSpanTheRange() {
    const std::vector<double> e = frontierEpsilonGrid(2.0, 10);
    QCOMPARE(e.size(), std::size_t(10));
    DPX_COMPARE_REL(e.front(), 0.25, 1e-12);
    DPX_COMPARE_REL(e.back(), 16.0, 1e-12);
    for (std::size_t i = 1; i < e.size(); ++i) DPX_COMPARE_REL(e[i] / e[i - 1], std::pow(64.0, 1.0 / 9.0), 1e-12);
    const std::vector<double> epochs = frontierEpochsGrid(20, 8);
    QCOMPARE(epochs.front(), std::round(2.5));  // 20/8, rounded to a whole epoch
    QCOMPARE(epochs.back(), 160.0);
    for (std::size_t i = 1; i < epochs.size(); ++i)
      QVERIFY(epochs[i] > epochs[i - 1] && epochs[i] == std::round(epochs[i]));
    QVERIFY(frontierEpsilonGrid(0.0, 10).empty());
    QVERIFY(frontierEpsilonGrid(1.0, 1).empty());
  }

  // The frontier the issue asks for: 2 mechanisms × 10 targets × 3 seeds on digits.
  void digitsFrontierIsPrivateAndRisesWithEpsilon() {
    std::mutex mutex;
    int streamed = 0;
    FrontierCallbacks callbacks;
    callbacks.pointDone = [&](std::size_t, std::size_t, const FrontierPoint&) {
      std::lock_guard lock(mutex);
      ++streamed;
    };
    auto result = computeFrontier(digitsRequest(), digits(), callbacks);
    QVERIFY2(result.isOk(), result.status().message().c_str());
    qInfo("digits frontier: %lld runs in %.2f s", static_cast<long long>(result->runs), result->seconds);
    QCOMPARE(streamed, 20);
    QCOMPARE(result->runs, std::int64_t(63));  // 60 private runs + 3 for the ceiling
    QVERIFY(result->nonPrivateAccuracy.has_value());
    for (const FrontierSeries& s : result->series) {
      QCOMPARE(s.points.size(), std::size_t(10));
      for (const FrontierPoint& p : s.points) {
        QVERIFY2(p.ok(), p.error.c_str());
        QCOMPARE(p.seeds, 3);
        QVERIFY2(p.epsilon && *p.epsilon <= p.targetEpsilon, mechanismId(s.mechanism).data());
        QVERIFY(*p.epsilon > 0.9 * p.targetEpsilon);  // calibrated, not needlessly private
        QVERIFY(p.accuracyMin <= p.accuracyMean && p.accuracyMean <= p.accuracyMax);
        QVERIFY(p.accuracyMax <= *result->nonPrivateAccuracy + 0.03);
      }
      // Rises with ε: no step down by more than the seed spread allows (3 points of accuracy on
      // 360 test images), and a clear rise from the first to the last point.
      for (std::size_t i = 1; i < s.points.size(); ++i) {
        QVERIFY2(s.points[i].accuracyMean >= s.points[i - 1].accuracyMean - 0.03,
                 qPrintable(QStringLiteral("%1: %2 then %3")
                                .arg(mechanismId(s.mechanism).data())
                                .arg(s.points[i - 1].accuracyMean)
                                .arg(s.points[i].accuracyMean)));
      }
      QVERIFY(s.points.back().accuracyMean - s.points.front().accuracyMean > 0.2);
      // More ε, less noise.
      QVERIFY(s.points.back().sigma < s.points.front().sigma);
    }
  }

  void resultDoesNotDependOnTheThreads() {
    FrontierRequest r = digitsRequest();
    r.epsilons = {0.5, 2.0};
    r.seeds = 2;
    r.base.threads = 1;
    auto one = computeFrontier(r, digits());
    r.base.threads = 2;
    auto two = computeFrontier(r, digits());
    QVERIFY(one.isOk() && two.isOk());
    for (std::size_t s = 0; s < one->series.size(); ++s) {
      for (std::size_t i = 0; i < one->series[s].points.size(); ++i) {
        QCOMPARE(one->series[s].points[i].accuracyMean, two->series[s].points[i].accuracyMean);
        QCOMPARE(one->series[s].points[i].sigma, two->series[s].points[i].sigma);
      }
    }
    QCOMPARE(*one->nonPrivateAccuracy, *two->nonPrivateAccuracy);
  }

  // At one ε, each number of epochs recalibrated: once λΣη_k ≫ 1 DP-SGLD's noise barely grows
  // with the epochs (its Langevin bound saturates in K: ε ∝ 1 − exp(−λΣη/2)), DP-SGD's grows
  // with √K. λ = 0.01, η = 0.5 and 64-record batches of 1438: λΣη/2 ≈ 1.1 after 20 epochs.
  void epochsModeRecalibratesEachPoint() {
    FrontierRequest r = digitsRequest();
    r.base.knobs.lambda = 0.01;
    r.vary = FrontierVary::kEpochs;
    r.epsilons = {1.0};
    r.epochsList = {20, 80, 320};
    r.seeds = 1;
    auto result = computeFrontier(r, digits());
    QVERIFY2(result.isOk(), result.status().message().c_str());
    QCOMPARE(result->nonPrivateByEpochs.size(), std::size_t(3));
    for (const FrontierSeries& s : result->series) {
      for (const FrontierPoint& p : s.points) QVERIFY(p.ok() && *p.epsilon <= 1.0);
    }
    const FrontierSeries& sgld = result->series[0];
    const FrontierSeries& sgd = result->series[1];
    QCOMPARE(sgld.mechanism, Mechanism::kDpSgld);
    const double sgldGrowth = sgld.points.back().sigma / sgld.points.front().sigma;
    const double sgdGrowth = sgd.points.back().sigma / sgd.points.front().sigma;
    qInfo("σ from 20 to 320 epochs at ε = 1: dp-sgld ×%.3f, dp-sgd ×%.3f", sgldGrowth, sgdGrowth);
    QVERIFY(sgdGrowth > 2.5);   // ~√16 = 4 for the composed Gaussian
    QVERIFY(sgldGrowth < 1.3);  // √((1 − e^{−18})/(1 − e^{−1.1})) ≈ 1.2: saturated
  }

  void cancelStopsTheFrontier() {
    FrontierRequest r = digitsRequest();
    r.base.epochs = 400;
    std::atomic<bool> cancel{false};
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      cancel = true;
    });
    const auto start = std::chrono::steady_clock::now();
    auto result = computeFrontier(r, digits(), {}, &cancel);
    stopper.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY(result.isOk());
    QVERIFY(result->cancelled);
    QVERIFY2(seconds < 5.0, qPrintable(QString::number(seconds)));
    QVERIFY(result->runs < 63);
  }

  void invalidRequestsAreRefused_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("message");
    QTest::newRow("no mechanism") << 0 << "at least one private mechanism";
    QTest::newRow("sgd is the ceiling") << 1 << "not private";
    QTest::newRow("zero seeds") << 2 << "seeds";
    QTest::newRow("negative target") << 3 << "target ε";
    QTest::newRow("epochs mode without epochs") << 4 << "epochs";
  }
  void invalidRequestsAreRefused() {
    QFETCH(int, which);
    QFETCH(QString, message);
    FrontierRequest r = digitsRequest();
    if (which == 0) r.mechanisms.clear();
    if (which == 1) r.mechanisms.push_back(Mechanism::kSgd);
    if (which == 2) r.seeds = 0;
    if (which == 3) r.epsilons = {1.0, -2.0};
    if (which == 4) r.vary = FrontierVary::kEpochs;
    auto result = computeFrontier(r, digits());
    QVERIFY(!result.isOk());
    QVERIFY2(QString::fromStdString(result.status().message()).contains(message), result.status().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestFrontier)
#include "tst_frontier.moc"
