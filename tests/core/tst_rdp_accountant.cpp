// `rdp` (Abadi et al. 2016; Mironov, Talwar & Zhang 2019): RDP of the Poisson-subsampled Gaussian
// and its (ε, δ) conversions. Expected values: ../shared/reference/dpsgd_mnist.json (Opacus RDP, the
// legacy TF Privacy recipe behind Bu, Dong, Long & Su 2020, Table 1) and mpmath quadrature of the
// defining integral.
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>

#include "accounting/rdp_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/subsampled_gaussian_rdp.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

Params mnist(double sigma, double epochs) {
  Params p;
  p.n = 60000;
  p.m = 256;
  p.sigma = sigma;
  p.K = *stepsForEpochs(epochs, p.n, p.m);
  p.delta = 1e-5;
  return p;
}

EpsilonOptions legacy(Conversion conversion) {
  EpsilonOptions o;
  o.conversion = conversion;
  o.orders.assign(legacyOrders().begin(), legacyOrders().end());
  return o;
}

// A_α = E_{x~N(0,σ²)}[(1 − q + q e^{(2x−1)/(2σ²)})^α] by adaptive Gauss–Kronrod, for orders
// where the integrand is smooth and moderate.
double rdpByQuadrature(double q, double sigma, double alpha) {
  auto f = [&](double x) {
    const double ratio = 1.0 - q + q * std::exp((2.0 * x - 1.0) / (2.0 * sigma * sigma));
    return std::exp(-x * x / (2.0 * sigma * sigma)) / (sigma * std::sqrt(2.0 * M_PI)) * std::pow(ratio, alpha);
  };
  const double lo = -40.0 * sigma;
  const double hi = 40.0 * sigma + alpha;
  double total = 0.0;
  const int pieces = 400;
  for (int i = 0; i < pieces; ++i) {
    const double a = lo + (hi - lo) * i / pieces;
    const double b = lo + (hi - lo) * (i + 1) / pieces;
    total += boost::math::quadrature::gauss_kronrod<double, 31>::integrate(f, a, b, 5, 1e-14);
  }
  return std::log(total) / (alpha - 1.0);
}

}  // namespace

class TestRdpAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The suite reads a copy of ../shared/reference/dpsgd_mnist.json so it runs without shared/;
  // where shared/ is beside the checkout (CI), the copy must not have drifted from it.
  void referenceCopyMatchesShared() {
    QFile shared(QStringLiteral(DPX_TEST_DATA_DIR "/../../../shared/reference/dpsgd_mnist.json"));
    if (!shared.open(QIODevice::ReadOnly)) QSKIP("../shared/reference is not beside this checkout");
    QFile copy(QStringLiteral(DPX_TEST_DATA_DIR "/dpsgd_mnist.json"));
    QVERIFY(copy.open(QIODevice::ReadOnly));
    QVERIFY2(copy.readAll() == shared.readAll(),
             "tests/data/dpsgd_mnist.json differs from ../shared/reference/dpsgd_mnist.json: copy it again");
  }

  void referenceCases_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("epochs");
    QTest::addColumn<double>("maLegacy");
    QTest::addColumn<double>("maLegacyOrder");
    QTest::addColumn<double>("rdpImproved");
    QTest::addColumn<double>("rdpImprovedOrder");
    QTest::addColumn<double>("published");
    QTest::addColumn<qint64>("steps");
    const QJsonObject ref = dpx::test::loadJson(QStringLiteral("dpsgd_mnist.json"));
    const QJsonArray cases = ref.value(QStringLiteral("cases")).toArray();
    QVERIFY2(cases.size() == 6, "tests/data/dpsgd_mnist.json is missing");
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      const QJsonValue pub =
          c.value(QStringLiteral("published")).toObject().value(QStringLiteral("eps_moments_accountant"));
      QTest::newRow(qPrintable(QStringLiteral("reference %1").arg(c.value(QStringLiteral("id")).toString())))
          << c.value(QStringLiteral("sigma")).toDouble() << c.value(QStringLiteral("epochs")).toDouble()
          << c.value(QStringLiteral("eps_ma_legacy")).toDouble()
          << c.value(QStringLiteral("eps_ma_legacy_order")).toDouble()
          << c.value(QStringLiteral("eps_rdp_improved")).toDouble()
          << c.value(QStringLiteral("eps_rdp_improved_order")).toDouble() << (pub.isNull() ? -1.0 : pub.toDouble())
          << qint64(c.value(QStringLiteral("steps")).toInt());
    }
  }
  void referenceCases() {
    QFETCH(double, sigma);
    QFETCH(double, epochs);
    QFETCH(double, maLegacy);
    QFETCH(double, maLegacyOrder);
    QFETCH(double, rdpImproved);
    QFETCH(double, rdpImprovedOrder);
    QFETCH(double, published);
    QFETCH(qint64, steps);
    const Params p = mnist(sigma, epochs);
    QCOMPARE(qint64(p.K), steps);
    RdpAccountant rdp;
    auto classic = rdp.epsilon(p, legacy(Conversion::kClassic));
    QVERIFY(classic.isOk());
    DPX_COMPARE_REL(classic->epsilon, maLegacy, 1e-6);
    QCOMPARE(*classic->alpha, maLegacyOrder);
    QCOMPARE(*classic->conversion, Conversion::kClassic);
    if (published > 0) QCOMPARE(dpx::test::roundTo(classic->epsilon, 2), published);  // Bu et al. 2020 Table 1, MA ε
    auto improved = rdp.epsilon(p, legacy(Conversion::kImproved));
    QVERIFY(improved.isOk());
    DPX_COMPARE_REL(improved->epsilon, rdpImproved, 1e-6);
    QCOMPARE(*improved->alpha, rdpImprovedOrder);
    QCOMPARE(improved->bound, BoundKind::kUpper);
    // The default order grid is a superset in the region that matters except for 8.1/8.8-type orders:
    // its ε can differ, but never by much, and the improved conversion is never worse.
    auto defaults = rdp.epsilon(p);
    QVERIFY(defaults.isOk());
    QVERIFY(std::fabs(defaults->epsilon - rdpImproved) < 0.02 * rdpImproved);
    QVERIFY(improved->epsilon <= classic->epsilon);
  }

  void fractionalOrdersMatchQuadrature_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("expected");
    // mpmath.quad of the defining integral at 30 digits.
    QTest::newRow("mpmath: MNIST q, σ=1.1, α=8.1") << 256.0 / 60000 << 1.1 << 8.1 << 9.9659727619340876e-5;
    QTest::newRow("mpmath: MNIST q, σ=0.7, α=3.8") << 256.0 / 60000 << 0.7 << 3.8 << 0.00028337845977328849;
    QTest::newRow("mpmath: q=0.01, σ=0.5, α=1.5") << 0.01 << 0.5 << 1.5 << 0.002629891208161243;
    QTest::newRow("mpmath: q=0.1, σ=2, α=2.5") << 0.1 << 2.0 << 2.5 << 0.0035940771994132743;
    QTest::newRow("mpmath: q=0.5, σ=1, α=1.01") << 0.5 << 1.0 << 1.01 << 0.14029743611126404;
    QTest::newRow("mpmath: q=0.004, σ=1, α=20.5") << 0.004 << 1.0 << 20.5 << 4.4453881297702876;
  }
  void fractionalOrdersMatchQuadrature() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(double, alpha);
    QFETCH(double, expected);
    auto v = subsampledGaussianRdp(q, sigma, alpha);
    QVERIFY(v.isOk());
    DPX_COMPARE_REL(*v, expected, 1e-8);
  }

  void seriesMatchBoostQuadratureOnAGrid() {
    for (double q : {0.001, 0.01, 0.1}) {
      for (double sigma : {0.8, 1.5, 4.0}) {
        for (double alpha : {1.3, 2.0, 3.0, 4.5, 7.0}) {
          auto v = subsampledGaussianRdp(q, sigma, alpha);
          QVERIFY(v.isOk());
          const double reference = rdpByQuadrature(q, sigma, alpha);
          QVERIFY2(dpx::test::relativelyClose(*v, reference, 1e-7),
                   qPrintable(QStringLiteral("q=%1 σ=%2 α=%3: %4 vs %5")
                                  .arg(q)
                                  .arg(sigma)
                                  .arg(alpha)
                                  .arg(*v, 0, 'g', 12)
                                  .arg(reference, 0, 'g', 12)));
        }
      }
    }
  }

  void fullBatchIsTheGaussianMechanism() {
    for (double alpha : {1.5, 2.0, 32.0, 1024.0}) {
      auto v = subsampledGaussianRdp(1.0, 0.8, alpha);
      QVERIFY(v.isOk());
      DPX_COMPARE_REL(*v, alpha / (2.0 * 0.64), 1e-15);
    }
  }

  void tinyRdpKeepsItsDigits() {
    // Leading order for q → 0: ε_α ≈ α q² (e^{1/σ²} − 1)/2 (Mironov et al. 2019, §3.3).
    const double q = 1e-7;
    const double sigma = 100.0;
    for (double alpha : {2.0, 10.0, 256.0}) {
      auto v = subsampledGaussianRdp(q, sigma, alpha);
      QVERIFY(v.isOk());
      DPX_COMPARE_REL(*v, alpha * q * q * std::expm1(1.0 / (sigma * sigma)) / 2.0, 1e-5);
    }
  }

  // The fractional-order series where A_α − 1 is ~1e−12 of the sum: its digits come from the
  // series' first terms, kept in log form (mpmath at 80 digits, the series to 1e−60).
  void tinyFractionalRdpKeepsItsDigits() {
    struct Case {
      double q, sigma, alpha, expected;
    };
    for (const Case& c : {Case{1e-5, 5.0, 1.5, 3.0608074313635218e-12}, Case{1e-5, 5.0, 2.5, 5.1013478291376247e-12},
                          Case{1e-5, 20.0, 10.5, 1.3141422728773583e-12}, Case{1e-4, 5.0, 63.5, 1.2960717965989379e-8},
                          Case{1e-6, 2.0, 1.25, 1.7751584403554502e-13}}) {
      auto v = subsampledGaussianRdp(c.q, c.sigma, c.alpha);
      QVERIFY(v.isOk());
      QVERIFY2(dpx::test::relativelyClose(*v, c.expected, 1e-6), qPrintable(QStringLiteral("q=%1 σ=%2 α=%3: %4 vs %5")
                                                                                .arg(c.q)
                                                                                .arg(c.sigma)
                                                                                .arg(c.alpha)
                                                                                .arg(*v, 0, 'g', 12)
                                                                                .arg(c.expected, 0, 'g', 12)));
    }
  }

  void hugeOrdersStayFinite() {
    auto v = subsampledGaussianRdp(0.9, 0.05, 1024.0);
    QVERIFY(v.isOk());
    QVERIFY(std::isfinite(*v) && *v > 1e4);
    Params p;
    p.n = 10;
    p.m = 10;
    p.sigma = 0.05;
    p.K = 10000000;
    RdpAccountant rdp;
    auto e = rdp.epsilon(p);
    QVERIFY(e.isOk());
    QVERIFY(std::isfinite(e->epsilon));
  }

  void rdpIsNonDecreasingInOrder() {
    for (double q : {1e-4, 0.004, 0.1, 0.7}) {
      for (double sigma : {0.3, 1.0, 5.0}) {
        double previous = 0.0;
        for (double alpha : defaultOrders()) {
          auto v = subsampledGaussianRdp(q, sigma, alpha);
          QVERIFY(v.isOk());
          QVERIFY2(*v >= previous * (1.0 - 1e-9) - 1e-15,
                   qPrintable(QStringLiteral("q=%1 σ=%2 α=%3").arg(q).arg(sigma).arg(alpha)));
          previous = *v;
        }
      }
    }
  }

  void branchAndBoundFindsTheGridMinimum() {
    RdpAccountant rdp;
    for (double sigma : {0.5, 0.9, 2.0, 8.0}) {
      for (qint64 K : {10, 1000, 100000}) {
        Params p;
        p.sigma = sigma;
        p.K = K;
        auto e = rdp.epsilon(p);
        QVERIFY(e.isOk());
        double best = 1e300;
        for (double alpha : defaultOrders()) {
          const double value = *rdp.rdp(p, alpha) + conversionOffset(alpha, p.delta, Conversion::kImproved);
          best = std::min(best, value);
        }
        DPX_COMPARE_REL(e->epsilon, std::max(0.0, best), 1e-12);
      }
    }
  }

  void fixedAlphaUsesThatOrderOnly() {
    RdpAccountant rdp;
    Params p;
    EpsilonOptions o;
    o.fixedAlpha = 4.0;
    auto e = rdp.epsilon(p, o);
    QVERIFY(e.isOk());
    QCOMPARE(*e->alpha, 4.0);
    DPX_COMPARE_REL(e->epsilon, *rdp.rdp(p, 4.0) + conversionOffset(4.0, p.delta, Conversion::kImproved), 1e-14);
  }

  void nativeValues() {
    RdpAccountant rdp;
    const Params p = mnist(1.1, 60);
    auto native = rdp.native(p);
    QVERIFY(native.isOk());
    QCOMPARE(native->at(0).key, std::string("q"));
    DPX_COMPARE_REL(native->at(0).value, 256.0 / 60000.0, 1e-15);
    QCOMPARE(native->at(2).value, 14063.0);
  }

  void assumptionsAndViolations() {
    RdpAccountant rdp;
    QCOMPARE(rdp.assumptions().sampling, Sampling::kPoisson);
    QCOMPARE(rdp.assumptions().neighbouring, Neighbouring::kAddRemove);
    QVERIFY(rdp.check(Params{}).empty());
    Params shuffled;
    shuffled.sampling = Sampling::kShuffle;
    const auto v = rdp.check(shuffled);
    QCOMPARE(v.size(), std::size_t(1));
    QCOMPARE(v.front().assumption, std::string("sampling"));
    Params bad;
    bad.sigma = -1;
    QCOMPARE(rdp.check(bad).front().assumption, std::string("parameters"));
    QVERIFY(!rdp.epsilon(bad).isOk());
    QVERIFY(!rdp.rdp(Params{}, 0.5).isOk());
  }

  void deltaInvertsEpsilon() {
    RdpAccountant rdp;
    const Params p = mnist(1.1, 60);
    auto e = rdp.epsilon(p);
    QVERIFY(e.isOk());
    auto d = rdp.delta(p, e->epsilon);
    QVERIFY(d.isOk());
    QVERIFY(*d <= p.delta * (1 + 1e-9));
    QVERIFY(*d > p.delta * 0.5);
    QVERIFY(*rdp.delta(p, e->epsilon * 1.2) < *d);
  }
};

QTEST_GUILESS_MAIN(TestRdpAccountant)
#include "tst_rdp_accountant.moc"
