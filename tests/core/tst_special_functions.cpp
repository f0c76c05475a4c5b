// Special functions and root finding (core/numerics). Expected values: mpmath at 40 digits.
#include <QTest>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

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

  // The vectorised log Φ equals the scalar one on both sides of its asymptotic switch at −30.
  void logNormalCdfOverASpanMatchesTheScalar() {
    std::vector<double> x;
    for (double v = -2000.0; v <= 12.0; v += 0.37) x.push_back(v);
    for (double v : {-30.0, -30.000001, -29.999999, 0.0, -1e-300}) x.push_back(v);
    std::vector<double> out(x.size());
    logNormalCdf(std::span<const double>(x), std::span<double>(out));
    for (std::size_t i = 0; i < x.size(); ++i) {
      QVERIFY2(dpx::test::relativelyClose(out[i], logNormalCdf(x[i]), 4e-15),
               qPrintable(QStringLiteral("x = %1: %2 vs %3")
                              .arg(x[i])
                              .arg(out[i], 0, 'g', 17)
                              .arg(logNormalCdf(x[i]), 0, 'g', 17)));
    }
  }

  // Newton inside a shrinking bracket: the same bracket as TOMS 748 (both ends within the
  // tolerance, opposite signs), in fewer evaluations on a smooth function; a function whose
  // Newton steps leave the bracket (a flat slope) still converges by bisection.
  void newtonBracketsTheRoot() {
    int evaluations = 0;
    const auto fdf = [&](double x) {
      ++evaluations;
      return ValueAndSlope{std::log(x) - 1.0 + 0.1 * x, 1.0 / x + 0.1};
    };
    const auto f = [](double x) { return std::log(x) - 1.0 + 0.1 * x; };
    const RootOptions options{.relativeTolerance = 1e-12};
    auto newton = findRootBracketNewton(fdf, 0.5, f(0.5), 40.0, f(40.0), 40.0, fdf(40.0), options);
    QVERIFY(newton.isOk());
    evaluations -= 1;  // the start's
    QVERIFY(f(newton->lower) <= 0.0 && f(newton->upper) >= 0.0);
    QVERIFY(newton->upper - newton->lower <= 1e-12 * newton->lower);
    int tomsEvaluations = 0;
    auto toms = findRootBracket(
        [&](double x) {
          ++tomsEvaluations;
          return f(x);
        },
        0.5, 40.0, options);
    QVERIFY(toms.isOk());
    QVERIFY(std::fabs(toms->lower - newton->lower) <= 2e-12 * toms->lower);
    QVERIFY2(evaluations < tomsEvaluations,
             qPrintable(QStringLiteral("%1 vs %2").arg(evaluations).arg(tomsEvaluations)));

    // Zero slope everywhere: every step is a bisection.
    const auto flat = [](double x) { return ValueAndSlope{x < 3.0 ? -1.0 : 1.0, 0.0}; };
    auto bisected = findRootBracketNewton(flat, 0.0, -1.0, 10.0, 1.0, 0.0, flat(0.0), options);
    QVERIFY(bisected.isOk());
    QVERIFY(bisected->lower < 3.0 && bisected->upper >= 3.0 && bisected->upper - bisected->lower <= 1e-11);
    // f at its rounding floor above the root (a constant 1e−19 with a tiny slope, as a log-sum of
    // exponentials near its zero): Newton's steps creep by the tolerance, a probe past them stays
    // on the same side, and bisection has to take over.
    const auto floored = [](double x) { return ValueAndSlope{x < 2.0 ? x - 2.0 : 1e-19, 1e-7}; };
    auto creeping = findRootBracketNewton(floored, 0.0, -2.0, 5.0, 1e-19, 5.0, floored(5.0), options);
    QVERIFY2(creeping.isOk(), creeping.status().message().c_str());
    QVERIFY(creeping->lower < 2.0 && creeping->upper >= 2.0 && creeping->upper - creeping->lower <= 3e-12);
    // The signs must differ at the ends.
    QVERIFY(!findRootBracketNewton(flat, 4.0, 1.0, 10.0, 1.0, 4.0, flat(4.0), options).isOk());
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
