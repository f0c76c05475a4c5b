// Trade-off functions (Bu, Dong, Long & Su 2020, §2: f_{ε,δ} eq. 2.1, G_μ), the envelope of an RDP
// curve through (ε, δ), and the trade-off curve one Rényi order implies (Balle, Barthe, Gaboardi,
// Hsu & Sato 2020) with its envelope over orders.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>

#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/sgld_accountant.h"
#include "accounting/tradeoff.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// f_2(x) in closed form. At α = 2 the constraints are quadratic in y (E = e^{ε₂}):
//   (1−x)²/y + x²/(1−y) ≤ E   ⇔  E y² − (E + 1 − 2x) y + (1−x)² ≤ 0   (times y(1−y) > 0; x² − (1−x)² = 2x − 1)
//   (1−y)²/x + y²/(1−x) ≤ E   ⇔  y² − 2(1−x) y + (1−x)(1 − Ex) ≤ 0     (times x(1−x) > 0)
// Each holds between its two roots; both upper roots are ≥ 1 − x (y = 1 − x gives 1 ≤ E in the
// first and a negative value, −(E−1)x(1−x), in the second), so f_2(x) = max of the lower roots:
//   y₁ = 2(1−x)² / (E + 1 − 2x + √((E + 1 − 2x)² − 4E(1−x)²))   (the smaller root, written as c/(a·larger)),
//   y₂ = (1−x) − √(x(1−x)(E − 1)), clamped at 0 (y = 0 is allowed by the second constraint once x ≥ 1/E).
// At x = 0 the second constraint reads (1−y)²/0 ≤ E: only y = 1 is allowed, so f_2(0) = 1 — a test
// that never rejects P has type II error 1, whatever ε. (With the first constraint alone it would be
// y ≥ 1/E.)
double renyiTradeoffOrderTwo(double epsilon2, double x) {
  if (x == 0.0) return 1.0;
  const double e = std::exp(epsilon2);
  const double b = e + 1.0 - 2.0 * x;
  const double y1 = 2.0 * (1.0 - x) * (1.0 - x) / (b + std::sqrt(b * b - 4.0 * e * (1.0 - x) * (1.0 - x)));
  const double y2 = (1.0 - x) - std::sqrt(x * (1.0 - x) * (e - 1.0));
  return std::max({0.0, y1, y2});
}

}  // namespace

class TestTradeoff : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void epsilonDeltaTradeoffShape() {
    // f_{ε,δ}(0) = 1 − δ, f(1) = 0, and the kink at x = (1 − δ)/(1 + e^ε).
    QCOMPARE(epsilonDeltaTradeoff(1.0, 0.01, 0.0), 0.99);
    QCOMPARE(epsilonDeltaTradeoff(1.0, 0.01, 1.0), 0.0);
    const double kink = 0.99 / (1 + std::exp(1.0));
    DPX_COMPARE_REL(epsilonDeltaTradeoff(1.0, 0.01, kink), 1 - 0.01 - std::exp(1.0) * kink, 1e-14);
    // (0, 0)-DP is perfect privacy: f(x) = 1 − x.
    for (double x : {0.0, 0.3, 1.0}) DPX_COMPARE_REL(epsilonDeltaTradeoff(0.0, 0.0, x) + 1e-300, 1 - x + 1e-300, 1e-15);
  }

  void gridCoversTheSpecRange() {
    const auto grid = defaultTypeOneGrid(200);
    QCOMPARE(grid.size(), std::size_t(200));
    QCOMPARE(grid.front(), 0.0);
    DPX_COMPARE_REL(grid[1], 1e-6, 1e-12);
    QCOMPARE(grid.back(), 1.0);
    QVERIFY(std::is_sorted(grid.begin(), grid.end()));
  }

  void rdpEnvelopeDominatesEveryEpsilonDeltaCurveAndIsBelowIdentity() {
    RdpAccountant rdp;
    Params p;
    const auto grid = defaultTypeOneGrid(120);
    auto curve = rdp.tradeoff(p, grid);
    QVERIFY(curve.isOk());
    for (double delta : {1e-10, 1e-5, 1e-2}) {
      Params pd = p;
      pd.delta = delta;
      const double eps = rdp.epsilon(pd)->epsilon;
      for (std::size_t i = 0; i < grid.size(); ++i) {
        QVERIFY(curve->typeTwo[i] >= epsilonDeltaTradeoff(eps, delta, grid[i]) - 1e-3);
      }
    }
    for (std::size_t i = 0; i < grid.size(); ++i) {
      QVERIFY(curve->typeTwo[i] <= 1 - grid[i] + 1e-12);
      QVERIFY(curve->typeTwo[i] >= 0.0);
      if (i > 0) QVERIFY(curve->typeTwo[i] <= curve->typeTwo[i - 1] + 1e-15);
    }
  }

  void morePrivacyMeansAHigherCurve() {
    SgldAccountant sgld;
    Params p;
    const auto grid = defaultTypeOneGrid(60);
    auto loose = sgld.tradeoff(p, grid);
    p.sigma *= 4;
    auto tight = sgld.tradeoff(p, grid);
    QVERIFY(loose.isOk() && tight.isOk());
    double area = 0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      QVERIFY(tight->typeTwo[i] >= loose->typeTwo[i] - 1e-12);
      area += tight->typeTwo[i] - loose->typeTwo[i];
    }
    QVERIFY(area > 0);
  }

  void renyiTradeoffAtOrderTwoMatchesTheClosedForm_data() {
    QTest::addColumn<double>("epsilon");
    QTest::addColumn<double>("x");
    for (double eps : {1e-6, 0.1, 1.0, 3.0, 10.0}) {
      for (double x : {0.0, 1e-9, 1e-3, 0.05, 0.2, 0.5, 0.8, 0.99}) {
        QTest::newRow(qPrintable(QStringLiteral("eps=%1 x=%2").arg(eps).arg(x))) << eps << x;
      }
    }
  }
  void renyiTradeoffAtOrderTwoMatchesTheClosedForm() {
    QFETCH(double, epsilon);
    QFETCH(double, x);
    Result<double> f = renyiTradeoff(epsilon, 2.0, x);
    QVERIFY(f.isOk());
    // The closed form's y₂ cancels where it is near 0; an absolute floor covers that.
    const double expected = renyiTradeoffOrderTwo(epsilon, x);
    QVERIFY2(dpx::test::relativelyClose(*f, expected, 1e-12, 1e-15),
             dpx::test::describe(*f, expected, 1e-12).constData());
  }

  void renyiTradeoffReferenceValues_data() {
    QTest::addColumn<double>("epsilon");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("expected");
    // Smallest y meeting both constraints, by 400 bisections at 60 digits (mpmath 1.3), from the
    // same inequalities written with plain powers.
    QTest::newRow("alpha=8 eps=0.5 x=0.05 (second constraint binds)") << 0.5 << 8.0 << 0.05 << 0.88761962962341065877;
    QTest::newRow("alpha=1.5 eps=3 x=0.2") << 3.0 << 1.5 << 0.2 << 0.026554384492620658743;
    QTest::newRow("alpha=32 eps=0.01 x=0.3") << 0.01 << 32.0 << 0.3 << 0.68910207118385748402;
    QTest::newRow("alpha=1024 eps=20 x=1e-6 (powers overflow)") << 20.0 << 1024.0 << 1e-6 << 2.0611515592701234726e-9;
    QTest::newRow("alpha=1024 eps=2 x=0.5") << 2.0 << 1024.0 << 0.5 << 0.067621808042058077544;
    QTest::newRow("alpha=1.01 eps=1e-9 x=0.25 (near the diagonal)") << 1e-9 << 1.01 << 0.25 << 0.74998073102430475926;
    QTest::newRow("alpha=1+1e-7 eps=1e-12 x=0.5 (near the diagonal)")
        << 1e-12 << 1.0000001 << 0.5 << 0.49999929289325416914;
    QTest::newRow("alpha=4 eps=5 x=0.999") << 5.0 << 4.0 << 0.999 << 6.7379476833941195321e-7;
  }
  void renyiTradeoffReferenceValues() {
    QFETCH(double, epsilon);
    QFETCH(double, alpha);
    QFETCH(double, x);
    QFETCH(double, expected);
    Result<double> f = renyiTradeoff(epsilon, alpha, x);
    QVERIFY(f.isOk());
    DPX_COMPARE_REL(*f, expected, 1e-12);
  }

  void renyiTradeoffEdges() {
    for (double alpha : {1.0000001, 1.01, 2.0, 64.0, 1024.0}) {
      for (double eps : {0.0, 1e-300, 1e-12, 0.3, 50.0, 800.0, 1e300}) {
        QCOMPARE(*renyiTradeoff(eps, alpha, 0.0), 1.0);  // f(0) = 1 for every finite ε_α
        QCOMPARE(*renyiTradeoff(eps, alpha, 1.0), 0.0);
        for (double x : {1e-300, 1e-12, 1e-3, 0.3, 0.5, 1.0 - 1e-9}) {
          Result<double> f = renyiTradeoff(eps, alpha, x);
          QVERIFY(f.isOk());
          QVERIFY(std::isfinite(*f));
          QVERIFY(*f >= 0.0 && *f <= 1.0 - x);
        }
      }
      // ε_α = 0: the two outputs have the same law, every test lies on the diagonal.
      for (double x : {0.1, 0.5, 0.9}) QCOMPARE(*renyiTradeoff(0.0, alpha, x), 1.0 - x);
      // ε_α = 1e300: nothing is certified but f(0) = 1.
      QCOMPARE(*renyiTradeoff(1e300, alpha, 1e-300), 0.0);
    }
  }

  void renyiTradeoffIsSymmetricMonotoneAndTightensWithOrder() {
    const auto grid = defaultTypeOneGrid(80);
    for (double alpha : {1.25, 2.0, 8.0, 100.0}) {
      for (double eps : {0.05, 0.7, 4.0}) {
        double previous = 1.0;
        for (double x : grid) {
          const double y = *renyiTradeoff(eps, alpha, x);
          QVERIFY(y <= previous + 1e-15);  // non-increasing in x
          previous = y;
          // The constraint set is symmetric in (x, y) (the second constraint is the first with the
          // roles swapped), so f_α is its own inverse where it is strictly decreasing.
          if (y > 1e-6 && y < 1.0 - 1e-6 && x > 1e-6) {
            const double back = *renyiTradeoff(eps, alpha, y);
            // (y near 1 carries only ~1e−16 absolute precision: 1e−8 relative at x = 1e−6.)
            QVERIFY2(
                std::fabs(back - x) <= 1e-8 * x,
                qPrintable(QStringLiteral("alpha %1 eps %2 x %3: f(f(x)) = %4").arg(alpha).arg(eps).arg(x).arg(back)));
          }
          // A larger ε_α certifies less; the same ε_α at a larger order certifies more (D_α grows with α).
          QVERIFY(*renyiTradeoff(eps * 2.0, alpha, x) <= y + 1e-15);
          QVERIFY(*renyiTradeoff(eps, alpha * 2.0, x) >= y - 1e-15);
        }
      }
    }
  }

  void renyiTradeoffRejectsBadInput() {
    QVERIFY(!renyiTradeoff(1.0, 1.0, 0.5).isOk());
    QVERIFY(!renyiTradeoff(1.0, 0.5, 0.5).isOk());
    QVERIFY(!renyiTradeoff(1.0, std::numeric_limits<double>::quiet_NaN(), 0.5).isOk());
    QVERIFY(!renyiTradeoff(-1e-9, 2.0, 0.5).isOk());
    QVERIFY(!renyiTradeoff(std::numeric_limits<double>::infinity(), 2.0, 0.5).isOk());
    QVERIFY(!renyiTradeoff(1.0, 2.0, -0.1).isOk());
    QVERIFY(!renyiTradeoff(1.0, 2.0, 1.1).isOk());
    const std::vector<double> orders{2.0, 4.0};
    const std::vector<double> oneValue{0.1};
    const std::vector<double> grid{0.0, 0.5, 1.0};
    QVERIFY(!renyiEnvelope(orders, oneValue, grid).isOk());  // one value per order
    QVERIFY(!renyiEnvelope({}, {}, grid).isOk());
    QVERIFY(!renyiEnvelope(orders, std::vector<double>{0.1, -0.2}, grid).isOk());
  }

  void renyiEnvelopeIsTheMaximumOverOrders() {
    const std::vector<double> orders{1.5, 2.0, 8.0, 64.0};
    const std::vector<double> rdp{0.02, 0.05, 0.4, 6.0};
    const auto grid = defaultTypeOneGrid(60);
    auto envelope = renyiEnvelope(orders, rdp, grid);
    QVERIFY(envelope.isOk());
    int won[4] = {0, 0, 0, 0};
    for (std::size_t k = 0; k < grid.size(); ++k) {
      double best = 0.0;
      std::size_t arg = 0;
      for (std::size_t i = 0; i < orders.size(); ++i) {
        const double y = *renyiTradeoff(rdp[i], orders[i], grid[k]);
        if (y > best) {
          best = y;
          arg = i;
        }
      }
      QVERIFY2(dpx::test::relativelyClose(envelope->typeTwo[k], best, 1e-13, 1e-300),
               dpx::test::describe(envelope->typeTwo[k], best, 1e-13).constData());
      if (grid[k] > 0.0 && grid[k] < 1.0) ++won[arg];
    }
    // The pruning must not hide an order: more than one order sets the envelope on this grid.
    QVERIFY(std::count_if(std::begin(won), std::end(won), [](int w) { return w > 0; }) >= 2);
  }

  // The ordering of the trade-off curves: f_α at the user's order ≤ the envelope over every
  // order (what the whole RDP profile certifies) ≤ the exact curve, which the PLD bracket
  // encloses — so the envelope must stay below the optimistic PLD curve. Tolerance 1e−12
  // (absolute): the PLD envelope stops at the ε where its δ falls below 1e−12, so at x = 0 it is
  // 1 − δ ≥ 1 − 1e−12 where the Rényi curve is exactly 1. With q = 1 the mechanism is the
  // Gaussian mechanism with μ = √K/σ and G_μ is exact: the envelope must lie below it too.
  void renyiCurvesAreOrderedBelowTheExactCurve_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("steps");
    QTest::addColumn<double>("alpha");
    auto row = [](const char* name, double sigma, qint64 n, qint64 m, qint64 steps, double alpha) {
      QTest::newRow(name) << sigma << n << m << steps << alpha;
    };
    row("MNIST sigma=1.1 q=256/60000 K=14063 alpha=8", 1.1, 60000, 256, 14063, 8.0);
    row("sigma=0.8 q=0.01 K=1000 alpha=4", 0.8, 10000, 100, 1000, 4.0);
    row("sigma=2 q=0.05 K=100 alpha=32", 2.0, 2000, 100, 100, 32.0);
    row("sigma=1 q=1 K=1 alpha=2 (Gaussian, mu=1)", 1.0, 1000, 1000, 1, 2.0);
    row("sigma=4 q=1 K=16 alpha=1.5 (Gaussian, mu=1)", 4.0, 1000, 1000, 16, 1.5);
    row("sigma=0.6 q=0.001 K=10000 alpha=16", 0.6, 100000, 100, 10000, 16.0);
    row("sigma=5 q=0.1 K=10 alpha=64", 5.0, 1000, 100, 10, 64.0);
    row("sigma=0.5 q=1 K=50 alpha=256 (Gaussian, mu=14)", 0.5, 100, 100, 50, 256.0);
  }
  void renyiCurvesAreOrderedBelowTheExactCurve() {
    QFETCH(double, sigma);
    QFETCH(qint64, n);
    QFETCH(qint64, m);
    QFETCH(qint64, steps);
    QFETCH(double, alpha);
    Params p;
    p.sigma = sigma;
    p.n = n;
    p.m = m;
    p.K = steps;
    p.alpha = alpha;
    const RdpAccountant rdp;
    const PldAccountant pld;
    const auto grid = defaultTypeOneGrid(300);
    Result<double> epsilonAlpha = rdp.rdp(p, alpha);
    QVERIFY(epsilonAlpha.isOk());
    auto envelope = renyiTradeoffCurve(rdp, p, grid);
    EpsilonOptions fixed;
    fixed.fixedAlpha = alpha;
    auto atAlpha = renyiTradeoffCurve(rdp, p, grid, fixed);
    auto viaEpsilonDelta = rdp.tradeoff(p, grid);  // envelope of f_{ε(δ),δ}, improved conversion
    auto pessimistic = pld.tradeoff(p, grid);
    auto optimistic = pld.tradeoffOptimistic(p, grid);
    QVERIFY(envelope.isOk() && atAlpha.isOk() && viaEpsilonDelta.isOk());
    QVERIFY2(pessimistic.isOk() && optimistic.isOk(), pessimistic.status().message().c_str());
    const bool gaussian = n == m;
    const double mu = std::sqrt(static_cast<double>(steps)) / sigma;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const double x = grid[i];
      const double fAlpha = *renyiTradeoff(*epsilonAlpha, alpha, x);
      const QByteArray where = "x = " + QByteArray::number(x, 'g', 6);
      QVERIFY2(std::isfinite(fAlpha) && fAlpha >= 0.0 && fAlpha <= 1.0 - x, where);
      QCOMPARE(atAlpha->typeTwo[i], fAlpha);  // fixedAlpha selects that order alone
      QVERIFY2(fAlpha <= envelope->typeTwo[i], where);
      QVERIFY2(envelope->typeTwo[i] <= optimistic->typeTwo[i] + 1e-12, where);
      QVERIFY2(pessimistic->typeTwo[i] <= optimistic->typeTwo[i] + 1e-12, where);
      if (gaussian) QVERIFY2(envelope->typeTwo[i] <= gaussianTradeoff(mu, x) + 1e-12, where);
      // The improved RDP→(ε,δ) conversion (Balle et al. 2020) is derived from the same testing
      // region, so going through (ε, δ) never certifies more than the Rényi curve itself.
      QVERIFY2(viaEpsilonDelta->typeTwo[i] <= envelope->typeTwo[i] + 1e-12, where);
    }
  }

  void badGrid() {
    QVERIFY(!validateTypeOneGrid(std::vector<double>{-0.1}).isOk());
    QVERIFY(!validateTypeOneGrid(std::vector<double>{}).isOk());
  }
};

QTEST_GUILESS_MAIN(TestTradeoff)
#include "tst_tradeoff.moc"
