// `shuffle` (Chua et al. 2024: a lower bound for shuffled batches by the max-of-coordinates test,
// composed over passes). Expected values: tests/data/shuffle_reference.json, computed independently
// by scripts/reference/shuffle_reference.py (mpmath at 40 digits for one pass; an exact enumeration
// of every pair of slices for two passes). Orderings: below the exact deterministic bound (a shuffle
// is a fixed order on a permuted dataset), above the Poisson PLD upper bound where Chua et al. report
// that Poisson accounting under-reports shuffled pipelines, below it where it must not (q = 1/T large).
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <atomic>
#include <cmath>
#include <vector>

#include "accounting/deterministic_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/shuffle_accountant.h"
#include "accounting/tradeoff.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// T batches of ten records each, E whole passes: q = 1/T for the Poisson comparison.
Params passesRun(double sigma, std::int64_t steps, std::int64_t epochs, double delta) {
  Params p;
  p.n = 10 * steps;
  p.m = 10;
  p.K = steps * epochs;
  p.sigma = sigma;
  p.delta = delta;
  return p;
}

double epsilonOf(const Accountant& a, const Params& p) {
  const auto e = a.epsilon(p);
  if (!e) qFatal("%s: %s", std::string(a.id()).c_str(), e.status().message().c_str());
  return e->epsilon;
}

}  // namespace

class TestShuffleAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void onePassMatchesHighPrecisionReference_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<int>("steps");
    QTest::addColumn<double>("expected");
    QTest::addColumn<double>("threshold");
    const QJsonArray cases =
        dpx::test::loadJson(QStringLiteral("shuffle_reference.json")).value(QStringLiteral("one_epoch")).toArray();
    QCOMPARE(cases.size(), 9);  // σ ∈ {0.5, 1, 2} × T ∈ {10, 100, 1000}, δ = 1e−6
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      const double sigma = c.value(QStringLiteral("sigma")).toDouble();
      const int steps = c.value(QStringLiteral("steps_per_epoch")).toInt();
      QTest::newRow(qPrintable(QStringLiteral("sigma=%1 T=%2").arg(sigma).arg(steps)))
          << sigma << steps << c.value(QStringLiteral("epsilon")).toDouble()
          << c.value(QStringLiteral("threshold")).toDouble();
    }
  }
  void onePassMatchesHighPrecisionReference() {
    QFETCH(double, sigma);
    QFETCH(int, steps);
    QFETCH(double, expected);
    QFETCH(double, threshold);
    const ShuffleMaxStatistic statistic(sigma, steps, steps);
    const ShuffleThreshold best = shuffleThresholdEpsilon(statistic, 1e-6);
    DPX_COMPARE_REL(best.value, expected, 1e-8);
    DPX_COMPARE_REL(best.threshold, threshold, 1e-3);  // a flat maximum: C to 3 digits
    // Through the accountant (which also composes the sliced pass and keeps the larger value).
    const double eps = epsilonOf(ShuffleAccountant(), passesRun(sigma, steps, 1, 1e-6));
    DPX_COMPARE_REL(eps, expected, 1e-8);
    // δ(ε) at the reference ε gives back δ.
    DPX_COMPARE_REL(shuffleThresholdDelta(statistic, expected).value, 1e-6, 1e-6);
  }

  void twoPassesMatchExactEnumeration_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<int>("steps");
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<int>("slices");
    QTest::addColumn<double>("expected");
    const QJsonArray cases = dpx::test::loadJson(QStringLiteral("shuffle_reference.json"))
                                 .value(QStringLiteral("two_epochs_sliced"))
                                 .toArray();
    QCOMPARE(cases.size(), 2);
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      const QJsonObject s = c.value(QStringLiteral("slices")).toObject();
      QTest::newRow(qPrintable(QStringLiteral("sigma=%1 T=%2 E=2")
                                   .arg(c.value(QStringLiteral("sigma")).toDouble())
                                   .arg(c.value(QStringLiteral("steps_per_epoch")).toInt())))
          << c.value(QStringLiteral("sigma")).toDouble() << c.value(QStringLiteral("steps_per_epoch")).toInt()
          << s.value(QStringLiteral("lo")).toDouble() << s.value(QStringLiteral("hi")).toDouble()
          << s.value(QStringLiteral("count")).toInt() << c.value(QStringLiteral("epsilon")).toDouble();
    }
  }
  // The same 300 slices composed by FFT on a loss grid: never above the exact enumeration (the grid
  // only merges slices, a post-processing), and within 0.5 % of it.
  void twoPassesMatchExactEnumeration() {
    QFETCH(double, sigma);
    QFETCH(int, steps);
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(int, slices);
    QFETCH(double, expected);
    ShuffleRunOptions options;
    options.slicing = ShuffleSlicing{lo, hi, slices};
    options.interval = 1e-4;
    const auto bound = shuffleLowerBound(sigma, steps, 2, 0, options);
    QVERIFY2(bound.isOk(), bound.status().message().c_str());
    QCOMPARE(bound->epochsComposed, 2);
    const auto eps = bound->composed->epsilon(1e-6);
    QVERIFY(eps.isOk());
    QVERIFY2(*eps <= expected * (1 + 1e-9), qPrintable(QStringLiteral("%1 > %2").arg(*eps).arg(expected)));
    DPX_COMPARE_REL(*eps, expected, 5e-3);
  }

  // Shuffling is a fixed order applied to a permuted dataset, so its true ε is at most the exact
  // deterministic ε: the lower bound must never exceed it. One batch per pass (T = 1) is the
  // deterministic mechanism itself, where the bound must be nearly tight.
  void neverAboveTheDeterministicBound() {
    const ShuffleAccountant shuffle;
    const DeterministicAccountant deterministic;
    for (double sigma : {0.3, 0.5, 1.0, 2.0, 5.0}) {
      for (std::int64_t steps : {1, 10, 100, 1000}) {
        for (std::int64_t epochs : {1, 2, 5, 20}) {
          const Params p = passesRun(sigma, steps, epochs, 1e-5);
          const double lower = epsilonOf(shuffle, p);
          const double upper = epsilonOf(deterministic, p);
          QVERIFY2(
              lower <= upper * (1 + 1e-9),
              qPrintable(
                  QStringLiteral("σ=%1 T=%2 E=%3: %4 > %5").arg(sigma).arg(steps).arg(epochs).arg(lower).arg(upper)));
          if (steps == 1) DPX_COMPARE_REL(lower, upper, 2e-3);
        }
      }
    }
  }

  // Chua et al. 2024: with Poisson accounting a shuffled pipeline under-reports — the shuffle
  // lower bound exceeds the Poisson PLD upper bound at q = 1/T — for σ ≥ 1 at any T here and for
  // σ = 0.5 once T ≥ 100. At σ = 0.5 and T = 10 (q = 0.1) it must lie below: Poisson
  // subsampling then amplifies nothing and its ε exceeds even the deterministic one.
  void againstThePoissonUpperBound_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<int>("steps");
    QTest::addColumn<int>("epochs");
    QTest::addColumn<bool>("exceedsPoisson");
    QTest::newRow("sigma=0.5 T=10") << 0.5 << 10 << 1 << false;
    QTest::newRow("sigma=0.5 T=100") << 0.5 << 100 << 1 << true;
    QTest::newRow("sigma=0.5 T=1000") << 0.5 << 1000 << 1 << true;
    QTest::newRow("sigma=1 T=10") << 1.0 << 10 << 1 << true;
    QTest::newRow("sigma=1 T=1000") << 1.0 << 1000 << 1 << true;
    QTest::newRow("sigma=2 T=1000") << 2.0 << 1000 << 1 << true;
    QTest::newRow("sigma=1.1 T=235 E=10") << 1.1 << 235 << 10 << true;
  }
  void againstThePoissonUpperBound() {
    QFETCH(double, sigma);
    QFETCH(int, steps);
    QFETCH(int, epochs);
    QFETCH(bool, exceedsPoisson);
    const Params p = passesRun(sigma, steps, epochs, 1e-6);
    const auto poisson = PldAccountant().epsilon(p);
    QVERIFY(poisson.isOk());
    const double lower = epsilonOf(ShuffleAccountant(), p);
    if (exceedsPoisson) {
      QVERIFY2(lower > *poisson->epsilonUpper, qPrintable(QStringLiteral("%1 ≤ %2").arg(lower).arg(poisson->epsilon)));
    } else {
      QVERIFY2(lower < *poisson->epsilonLower, qPrintable(QStringLiteral("%1 ≥ %2").arg(lower).arg(poisson->epsilon)));
    }
  }

  // More passes never lower the bound; more noise never raises it; δ(ε) falls with ε.
  void monotoneInPassesNoiseAndEpsilon() {
    const ShuffleAccountant shuffle;
    for (double sigma : {0.5, 1.0, 3.0}) {
      double previous = 0.0;
      for (std::int64_t epochs : {1, 2, 4, 8, 16, 64}) {
        const double eps = epsilonOf(shuffle, passesRun(sigma, 100, epochs, 1e-5));
        QVERIFY2(eps >= previous * (1 - 1e-9), qPrintable(QStringLiteral("σ=%1 E=%2").arg(sigma).arg(epochs)));
        previous = eps;
      }
    }
    double previous = 1e300;
    for (double sigma : {0.3, 0.6, 1.0, 2.0, 4.0, 10.0}) {
      const double eps = epsilonOf(shuffle, passesRun(sigma, 100, 4, 1e-5));
      QVERIFY(eps <= previous * (1 + 1e-9));
      previous = eps;
    }
    const Params p = passesRun(1.0, 100, 4, 1e-5);
    double delta = 1.0;
    for (double eps : {0.0, 0.5, 1.0, 2.0, 4.0, 8.0}) {
      const auto d = shuffle.delta(p, eps);
      QVERIFY(d.isOk());
      QVERIFY(*d <= delta);
      delta = *d;
    }
  }

  // An unfinished pass of r of T batches: the record sits in an unrun batch with probability
  // 1 − r/T, so the bound grows with r and is at most a whole pass's.
  void unfinishedPassGrowsWithItsBatches() {
    double previous = 0.0;
    for (std::int64_t visible : {1, 10, 50, 99}) {
      const auto b = shuffleLowerBound(1.0, 100, 0, visible);
      QVERIFY(b.isOk());
      const auto eps = b->epsilon(1e-5);
      QVERIFY(eps.isOk());
      QVERIFY(*eps >= previous);
      previous = *eps;
    }
    const auto whole = shuffleLowerBound(1.0, 100, 1, 0);
    QVERIFY(previous <= *whole->epsilon(1e-5));
  }

  // The trade-off curve: tests at least this powerful exist, so it lies on or above the exact
  // deterministic curve G_μ (the shuffled mechanism is more private) and below 1 − x.
  void tradeoffBetweenDeterministicAndIdentity() {
    const Params p = passesRun(1.0, 100, 4, 1e-5);
    std::vector<double> xs;
    for (int i = 0; i <= 100; ++i) xs.push_back(i / 100.0);
    const auto curve = ShuffleAccountant().tradeoff(p, xs);
    QVERIFY(curve.isOk());
    const auto exact = DeterministicAccountant().tradeoff(p, xs);
    QVERIFY(exact.isOk());
    bool informative = false;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      QVERIFY(curve->typeTwo[i] >= exact->typeTwo[i] - 1e-9);
      QVERIFY(curve->typeTwo[i] <= 1.0 - xs[i] + 1e-12);
      informative = informative || curve->typeTwo[i] < 1.0 - xs[i] - 0.05;
    }
    QVERIFY(informative);
  }

  // The slider corners answer quickly: σ = 0.05 with K = 10⁷ (10⁷ passes of one batch, or 0.1
  // of a pass of 10⁸), δ = 1e−15; the lower bound stays below the deterministic one.
  void sliderCornersAnswer() {
    for (const auto& [n, m, sigma, delta] : std::vector<std::tuple<std::int64_t, std::int64_t, double, double>>{
             {10, 10, 0.05, 1e-5}, {100'000'000, 1, 0.05, 1e-5}, {1000, 10, 100.0, 1e-15}, {60000, 256, 1.0, 1e-15}}) {
      Params p;
      p.n = n;
      p.m = m;
      p.K = 10'000'000;
      p.sigma = sigma;
      p.delta = delta;
      const double lower = epsilonOf(ShuffleAccountant(), p);
      const double upper = epsilonOf(DeterministicAccountant(), p);
      QVERIFY(lower > 0.0 && lower <= upper * (1 + 1e-9));
    }
  }

  // The GUI cancels a bound whose knobs are gone: the slicing (tens of milliseconds at a new σ)
  // stops with kCancelled and leaves nothing behind, so the next request slices afresh and gets
  // the uncancelled answer.
  void cancelledSlicingLeavesNothingBehind() {
    const ShuffleMaxStatistic statistic(0.8731, 200, 200);  // a σ no other test slices
    std::atomic<bool> cancel{true};
    const Result<pld::DiscretePld> stopped = slicedPassPld(statistic, 1e-3, std::nullopt, &cancel);
    QVERIFY(!stopped.isOk());
    QCOMPARE(stopped.status().code(), StatusCode::kCancelled);
    cancel = false;
    const Result<pld::DiscretePld> later = slicedPassPld(statistic, 1e-3, std::nullopt, &cancel);
    const Result<pld::DiscretePld> plain = slicedPassPld(statistic, 1e-3);
    QVERIFY2(later.isOk(), later.status().message().c_str());
    QVERIFY(plain.isOk());
    QCOMPARE(later->masses().size(), plain->masses().size());
    QVERIFY(later->masses() == plain->masses());
    QVERIFY(later->delta(0.5) > 0.0);
  }
};

QTEST_APPLESS_MAIN(TestShuffleAccountant)
#include "tst_shuffle_accountant.moc"
