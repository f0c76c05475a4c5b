// `gdp` (Bu, Dong, Long & Su 2020, the Gaussian-DP central limit theorem): the CLT μ, δ(ε; μ), ε(δ)
// and G_μ. Expected values: their Table 1 (printed digits) and tests/data/dpsgd_mnist.json (mu_clt, eps_clt).
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <cmath>

#include "accounting/gdp_accountant.h"
#include "accounting/tradeoff.h"
#include "numerics/special_functions.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestGdpAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void bu2020Table1_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("epochs");
    QTest::addColumn<double>("muPrinted");
    QTest::addColumn<double>("epsPrinted");
    QTest::addColumn<double>("muReference");
    QTest::addColumn<double>("epsReference");
    const QJsonArray cases =
        dpx::test::loadJson(QStringLiteral("dpsgd_mnist.json")).value(QStringLiteral("cases")).toArray();
    QVERIFY(cases.size() == 6);
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      const QJsonObject pub = c.value(QStringLiteral("published")).toObject();
      QTest::newRow(qPrintable(
          QStringLiteral("Bu et al. 2020 Table 1 / reference %1").arg(c.value(QStringLiteral("id")).toString())))
          << c.value(QStringLiteral("sigma")).toDouble() << c.value(QStringLiteral("epochs")).toDouble()
          << pub.value(QStringLiteral("mu_clt")).toDouble() << pub.value(QStringLiteral("eps_clt")).toDouble()
          << c.value(QStringLiteral("mu_clt")).toDouble() << c.value(QStringLiteral("eps_clt")).toDouble();
    }
  }
  void bu2020Table1() {
    QFETCH(double, sigma);
    QFETCH(double, epochs);
    QFETCH(double, muPrinted);
    QFETCH(double, epsPrinted);
    QFETCH(double, muReference);
    QFETCH(double, epsReference);
    const double q = 256.0 / 60000.0;
    // The published code used the non-integer T = epochs/q.
    auto mu = gdpMu(q, sigma, epochs / q);
    QVERIFY(mu.isOk());
    DPX_COMPARE_REL(*mu, muReference, 1e-8);
    auto eps = gdpEpsilon(*mu, 1e-5);
    QVERIFY(eps.isOk());
    DPX_COMPARE_REL(*eps, epsReference, 1e-7);
    // Through the accountant, with K = ⌈epochs·n/m⌉: the printed digits still hold.
    Params p;
    p.sigma = sigma;
    p.K = *stepsForEpochs(epochs, p.n, p.m);
    GdpAccountant gdp;
    auto e = gdp.epsilon(p);
    QVERIFY(e.isOk());
    QCOMPARE(dpx::test::roundTo(e->epsilon, 2), epsPrinted);
    QCOMPARE(dpx::test::roundTo(gdp.native(p)->front().value, 2), muPrinted);
    QCOMPARE(e->bound, BoundKind::kEstimate);
  }

  void deltaIsTheDualityFormula() {
    // δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) evaluated directly where it is well conditioned.
    for (double mu : {0.3, 1.0, 2.5}) {
      for (double eps : {0.0, 0.5, 2.0}) {
        const double direct =
            numerics::normalCdf(-eps / mu + mu / 2) - std::exp(eps) * numerics::normalCdf(-eps / mu - mu / 2);
        DPX_COMPARE_REL(gdpDelta(mu, eps), direct, 1e-12);
      }
    }
  }

  void epsilonAndDeltaInvertEachOther() {
    for (double mu : {0.05, 0.5, 1.0, 4.0, 30.0}) {
      for (double delta : {1e-15, 1e-10, 1e-5, 1e-2}) {
        auto eps = gdpEpsilon(mu, delta);
        QVERIFY(eps.isOk());
        if (*eps == 0.0) {
          QVERIFY(gdpDelta(mu, 0.0) <= delta);
          continue;
        }
        DPX_COMPARE_REL(gdpDelta(mu, *eps), delta, 1e-8);
      }
    }
  }

  void deltaDecreasesInEpsilon() {
    double previous = 1.0;
    for (double eps = 0.0; eps < 20.0; eps += 0.25) {
      const double d = gdpDelta(2.0, eps);
      QVERIFY(d < previous);
      QVERIFY(d >= 0.0);
      previous = d;
    }
  }

  void hugeMuStaysFinite() {
    auto eps = gdpEpsilon(1e6, 1e-15);
    QVERIFY(eps.isOk());
    QVERIFY(std::isfinite(*eps) && *eps > 1e11);
  }

  void gaussianTradeoffIsSymmetric() {
    // G_μ is symmetric: G_μ(G_μ(x)) = x (Dong, Roth & Su 2019).
    for (double mu : {0.5, 1.0, 3.0}) {
      for (double x : {1e-6, 1e-3, 0.1, 0.5, 0.9}) {
        DPX_COMPARE_REL(gaussianTradeoff(mu, gaussianTradeoff(mu, x)), x, 1e-9);
      }
    }
    QCOMPARE(gaussianTradeoff(1.0, 0.0), 1.0);
    QCOMPARE(gaussianTradeoff(1.0, 1.0), 0.0);
    DPX_COMPARE_REL(gaussianTradeoff(1.0, 0.05), numerics::normalCdf(1.6448536269514722 - 1.0), 1e-12);
  }

  void tradeoffThroughTheAccountant() {
    GdpAccountant gdp;
    Params p;
    const std::vector<double> grid = defaultTypeOneGrid(100);
    auto curve = gdp.tradeoff(p, grid);
    QVERIFY(curve.isOk());
    QCOMPARE(curve->typeTwo.size(), grid.size());
    for (std::size_t i = 1; i < grid.size(); ++i) QVERIFY(curve->typeTwo[i] <= curve->typeTwo[i - 1]);
    QVERIFY(!gdp.tradeoff(p, std::vector<double>{1.5}).isOk());
  }

  void cltRegimeViolations() {
    GdpAccountant gdp;
    Params p;
    QVERIFY(gdp.check(p).empty());
    p.K = 10;
    QCOMPARE(gdp.check(p).size(), std::size_t(1));
    p.m = 30000;
    QCOMPARE(gdp.check(p).size(), std::size_t(2));
    QVERIFY(gdp.epsilon(p).isOk());  // a violation, not an error
    QVERIFY(!gdp.hasRdp());
    QVERIFY(!gdp.rdp(p, 2.0).isOk());
  }
};

QTEST_GUILESS_MAIN(TestGdpAccountant)
#include "tst_gdp_accountant.moc"
