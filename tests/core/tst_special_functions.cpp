// Special functions and root finding (core/numerics). Expected values: mpmath at 40 digits.
#include <QTest>
#include <cmath>
#include <limits>

#include "numerics/root_finding.h"
#include "numerics/special_functions.h"
#include "test_util.h"

using namespace dpx::core::numerics;

class TestSpecialFunctions : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cdfAndLogCdf_data() {
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("phi");
    QTest::addColumn<double>("logPhi");
    QTest::newRow("mpmath: x=0") << 0.0 << 0.5 << -0.69314718055994531;
    QTest::newRow("mpmath: x=1.96") << 1.96 << 0.97500210485177956 << -0.025315649164282115;
    QTest::newRow("mpmath: x=-1") << -1.0 << 0.15865525393145705 << -1.8410216450092635;
    QTest::newRow("mpmath: x=-10") << -10.0 << 7.6198530241605261e-24 << -53.231285150512471;
    QTest::newRow("mpmath: x=-37") << -37.0 << 5.7255712225245768e-300 << -689.03058557689059;
    QTest::newRow("mpmath: x=5") << 5.0 << 0.99999971334842812 << -2.8665161296376359e-7;
  }
  void cdfAndLogCdf() {
    QFETCH(double, x);
    QFETCH(double, phi);
    QFETCH(double, logPhi);
    DPX_COMPARE_REL(normalCdf(x), phi, 1e-13);
    DPX_COMPARE_REL(logNormalCdf(x), logPhi, 1e-13);
  }

  void logNormalCdfFarTail_data() {
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("logPhi");
    QTest::newRow("mpmath: x=-40 (Φ underflows)") << -40.0 << -804.60844201375379;
    QTest::newRow("mpmath: x=-100") << -100.0 << -5005.5242086942051;
    QTest::newRow("mpmath: x=8.5 (1 − Φ tiny)") << 8.5 << -9.4795348222033184e-18;
  }
  void logNormalCdfFarTail() {
    QFETCH(double, x);
    QFETCH(double, logPhi);
    DPX_COMPARE_REL(logNormalCdf(x), logPhi, 1e-13);
  }

  void logNormalCdfIsContinuousAtTheSeriesSwitch() {
    // The asymptotic series takes over at x = −30; both sides must agree to rounding.
    const double below = logNormalCdf(std::nextafter(-30.0, -31.0));
    const double above = logNormalCdf(-30.0);
    DPX_COMPARE_REL(below, above, 1e-14);
  }

  void quantile_data() {
    QTest::addColumn<double>("p");
    QTest::addColumn<double>("z");
    QTest::newRow("mpmath: p=1e-300") << 1e-300 << -37.047096299361199;
    QTest::newRow("mpmath: p=1e-10") << 1e-10 << -6.3613409024040562;
    QTest::newRow("mpmath: p=0.025") << 0.025 << -1.9599639845400542;
  }
  void quantile() {
    QFETCH(double, p);
    QFETCH(double, z);
    DPX_COMPARE_REL(normalQuantile(p), z, 1e-13);
    DPX_COMPARE_REL(normalQuantileComplement(p), -z, 1e-13);
  }

  void quantileEdges() {
    QCOMPARE(normalQuantile(0.0), -std::numeric_limits<double>::infinity());
    QCOMPARE(normalQuantile(1.0), std::numeric_limits<double>::infinity());
    QCOMPARE(normalQuantile(0.5), 0.0);
  }

  void logSpaceSums() {
    DPX_COMPARE_REL(logAddExp(1000.0, 999.0), 1000.3132616875182, 1e-15);
    QCOMPARE(logAddExp(-std::numeric_limits<double>::infinity(), 3.0), 3.0);
    const double values[] = {1000.0, 999.0};
    DPX_COMPARE_REL(logSumExp(values), 1000.3132616875182, 1e-15);
    DPX_COMPARE_REL(logSubExp(1000.3132616875182, 999.0), 1000.0, 1e-14);
    DPX_COMPARE_REL(log1mExp(-1e-10), -23.025850929990457, 1e-12);
    QCOMPARE(logSubExp(2.0, 2.0), -std::numeric_limits<double>::infinity());
  }

  void binomials() {
    DPX_COMPARE_REL(logBinomial(1024, 512), 706.09094149735335, 1e-13);
    const SignedLog c = logBinomialSigned(2.5, 4);  // C(2.5, 4) = −0.0390625
    QCOMPARE(c.sign, -1);
    DPX_COMPARE_REL(std::exp(c.logAbs), 0.0390625, 1e-13);
    const SignedLog d = logBinomialSigned(2.5, 3);  // 0.3125
    QCOMPARE(d.sign, 1);
    DPX_COMPARE_REL(std::exp(d.logAbs), 0.3125, 1e-13);
    QCOMPARE(logBinomialSigned(3.0, 5).sign, 0);  // C(3, 5) = 0
  }

  void rootFindingConvergesAndReportsBracket() {
    auto f = [](double x) { return x * x * x - 2.0; };
    auto root = findRootBracket(f, 0.0, 2.0);
    QVERIFY(root.isOk());
    DPX_COMPARE_REL(root->upper, std::cbrt(2.0), 1e-12);
    QVERIFY(f(root->lower) <= 0.0 && f(root->upper) >= 0.0);
  }

  void rootFindingRefusesAnUnbracketedInterval() {
    auto result = findRoot([](double x) { return x * x + 1.0; }, -1.0, 1.0);
    QVERIFY(!result.isOk());
    QVERIFY(QString::fromStdString(result.status().message()).contains(QStringLiteral("does not change sign")));
  }

  void brentFindsTheMinimum() {
    auto m = minimizeBrent([](double x) { return (x - 0.3) * (x - 0.3) + 1.0; }, -2.0, 2.0);
    QVERIFY(m.isOk());
    QVERIFY(std::fabs(m->x - 0.3) < 1e-8);
    DPX_COMPARE_REL(m->value, 1.0, 1e-14);
  }
};

QTEST_GUILESS_MAIN(TestSpecialFunctions)
#include "tst_special_functions.moc"
