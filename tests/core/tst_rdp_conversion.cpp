// RDP → (ε, δ) conversions and the order grids (classic, Mironov 2017; improved,
// Balle et al. 2020 Thm 21).
#include <QTest>
#include <cmath>
#include <random>

#include "accounting/rdp_conversion.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestRdpConversion : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaultGridIsTheSpecUnion() {
    const auto orders = defaultOrders();
    QCOMPARE(orders.size(), std::size_t(99 + 125 + 192 + 2));
    QCOMPARE(orders.front(), 1.01);
    QCOMPARE(orders.back(), 1024.0);
    for (double a : {1.25, 1.5, 1.75, 2.0, 2.5, 63.5, 64.0, 65.0, 256.0, 512.0}) {
      QVERIFY2(std::binary_search(orders.begin(), orders.end(), a), qPrintable(QString::number(a)));
    }
    QVERIFY(std::is_sorted(orders.begin(), orders.end()));
    QCOMPARE(legacyOrders().size(), std::size_t(99 + 52));
    QCOMPARE(legacyOrders().front(), 1.1);
    QCOMPARE(legacyOrders().back(), 63.0);
  }

  void conversionFormulas() {
    const double alpha = 8.0;
    const double delta = 1e-5;
    DPX_COMPARE_REL(conversionOffset(alpha, delta, Conversion::kClassic), std::log(1 / delta) / (alpha - 1), 1e-15);
    DPX_COMPARE_REL(conversionOffset(alpha, delta, Conversion::kImproved),
                    std::log((alpha - 1) / alpha) - (std::log(delta) + std::log(alpha)) / (alpha - 1), 1e-15);
    QVERIFY(conversionOffset(alpha, delta, Conversion::kImproved) <
            conversionOffset(alpha, delta, Conversion::kClassic));
    // δ from RDP is the exact inverse of the conversion at a fixed order.
    for (Conversion c : {Conversion::kClassic, Conversion::kImproved}) {
      const double eps = 0.7 + conversionOffset(alpha, delta, c);
      DPX_COMPARE_REL(std::exp(logDeltaFromRdp(0.7, alpha, eps, c)), delta, 1e-12);
    }
  }

  void branchAndBoundEqualsBruteForce() {
    // Random monotone RDP profiles: the pruned search must return the exact grid minimum.
    std::mt19937_64 rng(20261122);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const auto orders = defaultOrders();
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<double> profile(orders.size());
      double value = u(rng) * 1e-3;
      for (std::size_t i = 0; i < orders.size(); ++i) {
        value += u(rng) * u(rng) * 0.05 * (trial % 7 + 1);
        profile[i] = value;
      }
      const double delta = std::pow(10.0, -1.0 - 14.0 * u(rng));
      for (Conversion c : {Conversion::kClassic, Conversion::kImproved}) {
        int evaluations = 0;
        auto at = [&](std::size_t i) -> Result<double> {
          ++evaluations;
          return profile[i];
        };
        auto pruned = minimizeOverOrders(orders, at, delta, c, true);
        auto brute = minimizeOverOrders(orders, at, delta, c, false);
        QVERIFY(pruned.isOk() && brute.isOk());
        QCOMPARE(pruned->epsilon, brute->epsilon);
        QCOMPARE(pruned->alpha, brute->alpha);
        std::optional<double> hint = 3.0 + 50 * u(rng);
        auto hinted = minimizeOverOrders(orders, at, delta, c, true, hint);
        QCOMPARE(hinted->epsilon, brute->epsilon);
      }
    }
  }

  void epsilonIsNeverNegative() {
    const std::vector<double> orders{512.0, 1024.0};
    auto zero = [](std::size_t) -> Result<double> { return 0.0; };
    auto r = minimizeOverOrders(orders, zero, 0.1, Conversion::kImproved, true);
    QVERIFY(r.isOk());
    QCOMPARE(r->epsilon, 0.0);
  }

  void normalizeRejectsBadOrders() {
    QVERIFY(!normalizeOrders({0.5}).isOk());
    QVERIFY(QString::fromStdString(normalizeOrders({0.5}).status().message()).contains(QStringLiteral("[1.01, 1024]")));
    QVERIFY(!normalizeOrders({}).isOk());
    QVERIFY(!normalizeOrders({2.0, std::nan("")}).isOk());
    auto ok = normalizeOrders({8.0, 2.0, 8.0});
    QVERIFY(ok.isOk());
    QCOMPARE(ok->size(), std::size_t(2));
    QCOMPARE(ok->front(), 2.0);
  }

  void deltaOverOrdersIsCappedAtOne() {
    const std::vector<double> orders{2.0, 4.0};
    const std::vector<double> profile{10.0, 20.0};
    auto d = deltaOverOrders(orders, profile, 0.0, Conversion::kClassic);
    QVERIFY(d.isOk());
    QCOMPARE(*d, 1.0);
  }
};

QTEST_GUILESS_MAIN(TestRdpConversion)
#include "tst_rdp_conversion.moc"
