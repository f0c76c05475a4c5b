// Trade-off functions (seed 003 §2: f_{ε,δ} eq. 2.1, G_μ) and the envelope of an RDP curve.
#include <cmath>

#include <QTest>

#include "accounting/rdp_accountant.h"
#include "accounting/sgld_accountant.h"
#include "accounting/tradeoff.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

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

  void badGrid() {
    QVERIFY(!validateTypeOneGrid(std::vector<double>{-0.1}).isOk());
    QVERIFY(!validateTypeOneGrid(std::vector<double>{}).isOk());
  }
};

QTEST_GUILESS_MAIN(TestTradeoff)
#include "tst_tradeoff.moc"
