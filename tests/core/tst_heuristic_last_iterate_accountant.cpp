// `heuristic-last-iterate` (Steinke, Nasr, Ganesh, Balle, Choquette-Choo, Jagielski, Hayes, Thakurta,
// Smith & Terzis 2024, Thm 1 for linear losses used as a heuristic). Expected values:
// tests/data/heuristic_last_iterate_reference.json, computed independently by
// scripts/reference/heuristic_last_iterate_reference.py (mpmath at 40 digits: every atom within 15
// standard deviations, the divergences integrated between the density crossings it finds). Orderings:
// below the exact all-iterates PLD bound (for linear losses the last iterate is a post-processing of
// all iterates), equal to the one-step subsampled Gaussian at K = 1, monotone where it must be.
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "accounting/curves.h"
#include "accounting/heuristic_last_iterate_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "numerics/special_functions.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// A run with sampling rate q = m/n (n = 10⁶ so q down to 1e−6 is a whole batch).
Params run(double q, double sigma, std::int64_t steps, double delta) {
  Params p;
  p.n = 1'000'000;
  p.m = static_cast<std::int64_t>(std::llround(q * 1e6));
  p.sigma = sigma;
  p.K = steps;
  p.delta = delta;
  return p;
}

LastIterateHeuristicEpsilon heuristic(double q, double sigma, std::int64_t steps, double delta,
                                      const LastIterateHeuristicOptions& options = {}) {
  const auto e = lastIterateHeuristicEpsilon(q, sigma, steps, delta, options);
  if (!e) qFatal("q = %g, σ = %g, K = %lld: %s", q, sigma, static_cast<long long>(steps), e.status().message().c_str());
  return *e;
}

}  // namespace

class TestHeuristicLastIterateAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matchesHighPrecisionReference_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("steps");
    QTest::addColumn<double>("delta");
    QTest::addColumn<double>("expected");
    const QJsonArray cases = dpx::test::loadJson(QStringLiteral("heuristic_last_iterate_reference.json"))
                                 .value(QStringLiteral("points"))
                                 .toArray();
    QCOMPARE(cases.size(), 14);
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      const double q = c.value(QStringLiteral("q")).toDouble();
      const double sigma = c.value(QStringLiteral("sigma")).toDouble();
      const auto steps = static_cast<qint64>(c.value(QStringLiteral("steps")).toDouble());
      const double delta = c.value(QStringLiteral("delta")).toDouble();
      QTest::newRow(
          qPrintable(QStringLiteral("mpmath q=%1 sigma=%2 K=%3 delta=%4").arg(q).arg(sigma).arg(steps).arg(delta)))
          << q << sigma << steps << delta << c.value(QStringLiteral("epsilon")).toDouble();
    }
  }
  void matchesHighPrecisionReference() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(qint64, steps);
    QFETCH(double, delta);
    QFETCH(double, expected);
    const LastIterateHeuristicEpsilon e = heuristic(q, sigma, steps, delta);
    // The contract is 1 % in ε; unmerged atoms agree to rounding, merged ones within the bracket.
    DPX_COMPARE_REL(e.epsilon, expected, e.groupWidth == 1 ? 1e-8 : 1e-2);
    QVERIFY2(e.epsilonLower <= expected * (1.0 + 1e-9) && expected <= e.epsilon * (1.0 + 1e-9),
             qPrintable(QStringLiteral("[%1, %2] ∌ %3")
                            .arg(e.epsilonLower, 0, 'g', 12)
                            .arg(e.epsilon, 0, 'g', 12)
                            .arg(expected, 0, 'g', 12)));
    // Through the accountant, and δ(ε) at the reference ε gives back δ.
    const auto viaAccountant = HeuristicLastIterateAccountant().epsilon(run(q, sigma, steps, delta));
    QVERIFY(viaAccountant.isOk());
    QCOMPARE(viaAccountant->epsilon, e.epsilon);
    QCOMPARE(viaAccountant->bound, BoundKind::kEstimate);
    const auto back = lastIterateHeuristicDelta(q, sigma, steps, expected);
    QVERIFY(back.isOk());
    if (e.groupWidth == 1) {
      DPX_COMPARE_REL(*back, delta, 1e-6);
    } else {
      QVERIFY(*back >= delta * (1.0 - 1e-9));  // δ_up at an ε ≤ ε_up
    }
  }

  void deltaOfEpsilonRoundTrips_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("steps");
    QTest::newRow("defaults q=256/60000 sigma=1.1 K=14063") << 256.0 / 60000.0 << 1.1 << qint64{14063};
    QTest::newRow("one step q=0.01 sigma=0.7") << 0.01 << 0.7 << qint64{1};
    QTest::newRow("full batch q=1 sigma=4 K=300") << 1.0 << 4.0 << qint64{300};
    QTest::newRow("large q=0.5 sigma=2 K=1e5 (atoms merged)") << 0.5 << 2.0 << qint64{100000};
  }
  void deltaOfEpsilonRoundTrips() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(qint64, steps);
    for (double delta : {1e-12, 1e-8, 1e-5, 1e-3, 0.05}) {
      const LastIterateHeuristicEpsilon e = heuristic(q, sigma, steps, delta);
      if (e.epsilon == 0.0) continue;
      const auto back = lastIterateHeuristicDelta(q, sigma, steps, e.epsilon);
      QVERIFY(back.isOk());
      DPX_COMPARE_REL(*back, delta, 1e-6);
    }
  }

  // More noise is a post-processing of less (add independent Gaussian noise to both outputs).
  void epsilonFallsWithSigma() {
    for (double q : {1e-4, 0.004, 0.1, 1.0}) {
      for (std::int64_t steps : {1, 100, 100000}) {
        double previous = std::numeric_limits<double>::infinity();
        for (double sigma : {0.5, 0.8, 1.0, 1.5, 3.0, 7.0, 20.0}) {
          const double eps = heuristic(q, sigma, steps, 1e-6).epsilon;
          QVERIFY2(eps <= previous * (1.0 + 1e-12), qPrintable(QStringLiteral("q = %1, K = %2, σ = %3: %4 > %5")
                                                                   .arg(q)
                                                                   .arg(steps)
                                                                   .arg(sigma)
                                                                   .arg(eps)
                                                                   .arg(previous)));
          previous = eps;
        }
      }
    }
  }

  void epsilonGrowsWithSamplingRate() {
    for (double sigma : {0.5, 1.0, 3.0, 20.0}) {
      for (std::int64_t steps : {1, 10, 1000, 100000, 10000000}) {
        double previous = 0.0;
        for (int i = 0; i <= 16; ++i) {
          const double q = std::pow(10.0, -4.0 + 4.0 * i / 16);
          const double eps = heuristic(q, sigma, steps, 1e-6).epsilon;
          QVERIFY2(eps >= previous * (1.0 - 1e-12), qPrintable(QStringLiteral("σ = %1, K = %2, q = %3: %4 < %5")
                                                                   .arg(sigma)
                                                                   .arg(steps)
                                                                   .arg(q)
                                                                   .arg(eps)
                                                                   .arg(previous)));
          previous = eps;
        }
      }
    }
  }

  // Where the signal Kq dominates, more steps leak more. (Not everywhere: see the next test.)
  void epsilonGrowsWithSteps_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("from");
    QTest::newRow("defaults q=256/60000 sigma=1.1, K >= 2") << 256.0 / 60000.0 << 1.1 << qint64{2};
    QTest::newRow("q=0.01 sigma=1, K >= 3") << 0.01 << 1.0 << qint64{3};
    QTest::newRow("q=0.1 sigma=0.6, K >= 4") << 0.1 << 0.6 << qint64{4};
    QTest::newRow("q=0.5 sigma=0.5") << 0.5 << 0.5 << qint64{1};
    QTest::newRow("full batch q=1 sigma=20") << 1.0 << 20.0 << qint64{1};
  }
  void epsilonGrowsWithSteps() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(qint64, from);
    double previous = 0.0;
    for (int i = 0; i <= 60; ++i) {
      const auto steps = std::max<std::int64_t>(from, std::llround(std::pow(10.0, 7.0 * i / 60)));
      const double eps = heuristic(q, sigma, steps, 1e-5).epsilon;
      QVERIFY2(eps >= previous * (1.0 - 1e-9),
               qPrintable(QStringLiteral("K = %1: %2 < %3").arg(steps).arg(eps, 0, 'g', 12).arg(previous, 0, 'g', 12)));
      previous = eps;
    }
  }

  // The heuristic is not monotone in K: at a small q and σ one step with the record in the batch
  // is a spike the Gaussian barely hides, and every further step adds noise σ²·1 while the record's
  // expected signal grows by only q. The GUI's ε-vs-K curve shows the dip; pinned so a change is
  // noticed.
  void dipsAtFewStepsOfASmallRate() {
    const double one = heuristic(1e-4, 0.5, 1, 1e-10).epsilon;
    const double two = heuristic(1e-4, 0.5, 2, 1e-10).epsilon;
    const double ten = heuristic(1e-4, 0.5, 10, 1e-10).epsilon;
    QVERIFY2(two < 0.5 * one && ten < two, qPrintable(QStringLiteral("%1 %2 %3").arg(one).arg(two).arg(ten)));
  }

  // For linear losses the last iterate is the sum of the noisy gradients, a post-processing of the
  // sequence of iterates, so it leaks at most what the composition of all K steps leaks: the
  // heuristic's ε is at most the exact PLD's upper bound.
  void belowTheAllIteratesPldBound_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("steps");
    QTest::addColumn<double>("delta");
    QTest::newRow("defaults K=1000") << 256.0 / 60000.0 << 1.1 << qint64{1000} << 1e-5;
    QTest::newRow("q=0.01 sigma=0.8 K=300") << 0.01 << 0.8 << qint64{300} << 1e-6;
    QTest::newRow("q=0.1 sigma=2 K=50") << 0.1 << 2.0 << qint64{50} << 1e-8;
    QTest::newRow("q=1 sigma=5 K=20 (both are mu-GDP, mu=sqrt(K)/sigma)") << 1.0 << 5.0 << qint64{20} << 1e-5;
    QTest::newRow("q=0.001 sigma=1 K=10000") << 0.001 << 1.0 << qint64{10000} << 1e-5;
  }
  void belowTheAllIteratesPldBound() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(qint64, steps);
    QFETCH(double, delta);
    const Params p = run(q, sigma, steps, delta);
    const auto pld = PldAccountant().epsilon(p);
    QVERIFY2(pld.isOk(), pld.status().message().c_str());
    const double eps = heuristic(q, sigma, steps, delta).epsilon;
    QVERIFY2(eps <= *pld->epsilonUpper,
             qPrintable(QStringLiteral("heuristic %1 > pld upper %2").arg(eps, 0, 'g', 12).arg(*pld->epsilonUpper)));
    if (q == 1.0) {
      // Full batches: the sum of K Gaussian releases is exactly as private as all of them.
      QVERIFY(eps >= *pld->epsilonLower * (1.0 - 1e-9));
    }
  }

  // K = 1: the last iterate is the only iterate, the subsampled Gaussian pair itself. (pld's one-step
  // bracket can be narrower than its own error: at q = 0.004, σ = 0.8, δ = 1e−8 it is
  // [1.00193117593, 1.00193117593] while mpmath gives 1.00193115565, so the ends get 1e−6 of room.)
  void oneStepIsTheSubsampledGaussian_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("delta");
    QTest::newRow("q=0.01 sigma=1") << 0.01 << 1.0 << 1e-5;
    QTest::newRow("q=0.1 sigma=0.6") << 0.1 << 0.6 << 1e-6;
    QTest::newRow("q=0.5 sigma=2") << 0.5 << 2.0 << 1e-3;
    QTest::newRow("q=0.004 sigma=0.8") << 0.004 << 0.8 << 1e-8;
  }
  void oneStepIsTheSubsampledGaussian() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(double, delta);
    const Params p = run(q, sigma, 1, delta);
    EpsilonOptions fine;
    fine.exact.accuracy = 0.002;
    const auto pld = PldAccountant().epsilon(p, fine);
    QVERIFY2(pld.isOk(), pld.status().message().c_str());
    const double eps = heuristic(q, sigma, 1, delta).epsilon;
    QVERIFY2(*pld->epsilonLower * (1.0 - 1e-6) <= eps && eps <= *pld->epsilonUpper * (1.0 + 1e-6),
             qPrintable(QStringLiteral("[%1, %2] ∌ %3")
                            .arg(*pld->epsilonLower, 0, 'g', 12)
                            .arg(*pld->epsilonUpper, 0, 'g', 12)
                            .arg(eps, 0, 'g', 12)));
  }

  // One step is the Poisson-subsampled Gaussian, whose δ(ε) (remove direction; the add
  // direction is 0 once ε > −log(1 − q)) has the closed form
  //   δ = q·H_γ(N(μ, 1)‖N(0, 1)),  γ = 1 + (e^ε − 1)/q,  μ = 1/σ,
  //   H_γ = Φ(μ/2 − log γ/μ) − γ·Φ(−μ/2 − log γ/μ) (Balle & Wang 2018, Thm 8).
  // From δ = 1e−3 down to 1e−280, where the tails no longer fit a double and are summed in logs.
  void oneStepDeltaMatchesTheClosedFormIntoTheFarTail() {
    const double q = 0.01, sigma = 0.5, mu = 1.0 / sigma;
    for (double epsilon : {1.0, 5.0, 10.0, 30.0, 50.0, 68.6}) {
      const double logGamma = std::log1p(std::expm1(epsilon) / q);
      const double logDelta =
          std::log(q) +
          dpx::core::numerics::logSubExp(dpx::core::numerics::logNormalCdf(mu / 2.0 - logGamma / mu),
                                         logGamma + dpx::core::numerics::logNormalCdf(-mu / 2.0 - logGamma / mu));
      const auto delta = lastIterateHeuristicDelta(q, sigma, 1, epsilon);
      QVERIFY(delta.isOk());
      QVERIFY2(*delta > 0.0 && std::fabs(std::log(*delta) - logDelta) <= 1e-9 * std::fabs(logDelta) + 1e-12,
               qPrintable(QStringLiteral("ε = %1: log δ %2 vs %3")
                              .arg(epsilon)
                              .arg(std::log(*delta), 0, 'g', 15)
                              .arg(logDelta, 0, 'g', 15)));
      if (epsilon == 68.6) QVERIFY(logDelta < std::log(1e-270));
    }
    // ε at δ = 1e−300: the root search steps through z where the tails are e^{−800}.
    const LastIterateHeuristicEpsilon e = heuristic(q, sigma, 1, 1e-300);
    const double logGamma = std::log1p(std::expm1(e.epsilon) / q);
    const double logDelta = std::log(q) + dpx::core::numerics::logSubExp(
                                              dpx::core::numerics::logNormalCdf(mu / 2.0 - logGamma / mu),
                                              logGamma + dpx::core::numerics::logNormalCdf(-mu / 2.0 - logGamma / mu));
    DPX_COMPARE_REL(logDelta, std::log(1e-300), 1e-9);
  }

  // Merged atoms: the certified bracket holds the unmerged value and is within the tolerance.
  void mergedAtomsBracketTheExactValue_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("steps");
    QTest::newRow("q=0.3 sigma=1 K=1e5") << 0.3 << 1.0 << qint64{100000};
    QTest::newRow("defaults q=256/60000 sigma=1.1 K=1e6") << 256.0 / 60000.0 << 1.1 << qint64{1000000};
    QTest::newRow("q=0.5 sigma=0.5 K=1e6") << 0.5 << 0.5 << qint64{1000000};
  }
  void mergedAtomsBracketTheExactValue() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(qint64, steps);
    const LastIterateHeuristicOptions options;
    const LastIterateHeuristicEpsilon merged = heuristic(q, sigma, steps, 1e-6, options);
    const LastIterateHeuristicEpsilon exact =
        heuristic(q, sigma, steps, 1e-6, {.tolerance = options.tolerance, .maxGroups = 1'000'000});
    QVERIFY(merged.groupWidth > 1);
    QVERIFY(merged.groups < exact.groups);
    QVERIFY(merged.epsilonLower >= merged.epsilon * (1.0 - options.tolerance) * (1.0 - 1e-12));
    QCOMPARE(exact.groupWidth, std::int64_t{1});
    QVERIFY2(merged.epsilonLower <= exact.epsilon && exact.epsilon <= merged.epsilon * (1.0 + 1e-12),
             qPrintable(QStringLiteral("[%1, %2] ∌ %3")
                            .arg(merged.epsilonLower, 0, 'g', 12)
                            .arg(merged.epsilon, 0, 'g', 12)
                            .arg(exact.epsilon, 0, 'g', 12)));
  }

  // The GUI draws ε over 300 K up to 10⁷ on every slider move: every point has a value.
  void curveToTenMillionStepsCompletes() {
    const Accountant* a = findAccountant("heuristic-last-iterate");
    QVERIFY(a != nullptr);
    const Result<std::vector<double>> xs = curveAxis({CurveVariable::kSteps, 1.0, 1e7, 300, true});
    QVERIFY(xs.isOk());
    for (double sigma : {0.5, 1.1, 20.0}) {
      Params base;
      base.sigma = sigma;
      const AccountantCurve curve = epsilonCurve(*a, base, CurveVariable::kSteps, *xs);
      QCOMPARE(curve.epsilon.size(), xs->size());
      for (std::size_t i = 0; i < curve.epsilon.size(); ++i) {
        QVERIFY2(curve.epsilon[i].has_value() && std::isfinite(*curve.epsilon[i]) && *curve.epsilon[i] >= 0.0,
                 qPrintable(QStringLiteral("σ = %1, K = %2: %3")
                                .arg(sigma)
                                .arg((*xs)[i])
                                .arg(QString::fromStdString(curve.firstError.message()))));
      }
    }
  }

  void describesItselfAsAnEstimate() {
    const Accountant* a = findAccountant("heuristic-last-iterate");
    QVERIFY(a != nullptr);
    QCOMPARE(a->boundKind(), BoundKind::kEstimate);
    QCOMPARE(a->assumptions().release, Release::kLastIterate);
    QCOMPARE(a->assumptions().sampling, Sampling::kPoisson);
    QVERIFY(!a->hasRdp());
    QVERIFY(!a->rdp(Params{}, 8.0).isOk());
    QVERIFY(a->citation().find("2024") != std::string_view::npos);
    const auto native = a->native(Params{});
    QVERIFY(native.isOk());
    for (const std::string& key : a->info().nativeKeys) {
      QVERIFY2(std::any_of(native->begin(), native->end(), [&](const NativeValue& v) { return v.key == key; }),
               key.c_str());
    }
    // Shuffled batches are not what the heuristic models.
    Params shuffled;
    shuffled.sampling = Sampling::kShuffle;
    QVERIFY(!a->check(shuffled).empty());
  }

  void tradeoffIsAValidCurve() {
    const Accountant* a = findAccountant("heuristic-last-iterate");
    const std::vector<double> grid = defaultTypeOneGrid(41);
    Params p;
    p.K = 2000;
    const auto curve = a->tradeoff(p, grid);
    QVERIFY2(curve.isOk(), curve.status().message().c_str());
    QCOMPARE(curve->typeTwo.size(), grid.size());
    double previous = 1.0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const double y = curve->typeTwo[i];
      QVERIFY(y >= 0.0 && y <= 1.0 - grid[i] + 1e-12);
      QVERIFY(y <= previous + 1e-12);
      previous = y;
    }
    // Not the trivial curve: the run leaks something.
    const std::size_t mid = static_cast<std::size_t>(std::lower_bound(grid.begin(), grid.end(), 0.3) - grid.begin());
    QVERIFY(curve->typeTwo[mid] < 1.0 - grid[mid] - 0.01);
  }

  void rejectsBadInput() {
    QCOMPARE(lastIterateHeuristicEpsilon(0.0, 1.0, 10, 1e-5).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(lastIterateHeuristicEpsilon(1.5, 1.0, 10, 1e-5).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(lastIterateHeuristicEpsilon(0.1, 0.0, 10, 1e-5).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(lastIterateHeuristicEpsilon(0.1, 1.0, 0, 1e-5).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(lastIterateHeuristicEpsilon(0.1, 1.0, 10, 0.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(lastIterateHeuristicEpsilon(0.1, 1.0, 10, 1.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(lastIterateHeuristicDelta(0.1, 1.0, 10, -1.0).status().code(), StatusCode::kInvalidArgument);
    const auto message = lastIterateHeuristicEpsilon(0.1, 1.0, 10, 2.0).status().message();
    QVERIFY2(message.find("delta = 2") != std::string::npos, message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestHeuristicLastIterateAccountant)
#include "tst_heuristic_last_iterate_accountant.moc"
