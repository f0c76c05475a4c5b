// `cyclic` (Kong & Ribero 2024, Thm 4.3–4.5, with the formulas the paper's text extraction lost restored
// in the specification, ../shared/SPEC.md).
#include <QTest>
#include <cmath>

#include "accounting/cyclic_accountant.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// The specification's unit test of the restored Kong & Ribero 2024 bounds:
// n=60000, b=256, k=235, E=5, T=1175, η=0.1, L=1, σ=1, α=8, w=0.1, M=1.
Params specUnit() {
  Params p;
  p.n = 60000;
  p.m = 256;
  p.K = 1175;
  p.eta = 0.1;
  p.L = 1.0;
  p.sigma = 1.0;
  p.w = 0.1;
  p.M = 1.0;
  return p;
}

}  // namespace

class TestCyclicAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void specUnitValues_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<double>("expected");
    QTest::newRow("Kong & Ribero 2024: headline (Thm 4.5, worst record)") << QString() << 17.32098259;
    QTest::newRow("Kong & Ribero 2024: paper form (Thm 4.5, first batch)")
        << QStringLiteral("first-batch") << 1.651228233;
    QTest::newRow("Kong & Ribero 2024: baseline (all iterates)") << QStringLiteral("baseline") << 80.0;
  }
  void specUnitValues() {
    QFETCH(QString, variant);
    QFETCH(double, expected);
    CyclicAccountant cyclic;
    auto v = cyclic.rdp(specUnit(), 8.0, variant.toStdString());
    QVERIFY(v.isOk());
    DPX_COMPARE_REL(*v, expected, 1e-9);
  }

  void specUnitEpsilonClassic() {
    // (ε, δ = 1e−5), classic conversion over α ∈ {1.01 … 100.99 step 0.01}: 12.15050696.
    CyclicAccountant cyclic;
    EpsilonOptions o;
    o.conversion = Conversion::kClassic;
    for (int i = 101; i <= 10099; ++i) o.orders.push_back(i / 100.0);
    auto e = cyclic.epsilon(specUnit(), o);
    QVERIFY(e.isOk());
    DPX_COMPARE_REL(e->epsilon, 12.15050696, 1e-9);
  }

  void constants() {
    const CyclicConstants c = cyclicConstants(specUnit());
    QCOMPARE(c.batchesPerPass, std::int64_t(235));
    QCOMPARE(c.passes, std::int64_t(5));
    DPX_COMPARE_REL(c.ell, std::sqrt(1 + 2 * 0.1 * 0.1 + 0.1 * 0.01 / 1.1), 1e-15);
    double lambdaK = 0.0;
    for (int i = 0; i < 235; ++i) lambdaK += std::pow(c.ell, -2.0 * i);
    DPX_COMPARE_REL(c.lambdaK, lambdaK, 1e-12);
  }

  void convexLossHasNoContraction() {
    Params p = specUnit();
    p.w = 0.0;
    const CyclicConstants c = cyclicConstants(p);
    QCOMPARE(c.ell, 1.0);
    QCOMPARE(c.lambdaK, 235.0);
  }

  void otherTheorems() {
    CyclicAccountant cyclic;
    const Params p = specUnit();
    const CyclicConstants c = cyclicConstants(p);
    const double s = p.eta * p.sigma * p.L / p.m;
    DPX_COMPARE_REL(*cyclic.rdp(p, 8.0, "bounded-domain"),
                    8.0 * std::pow(c.ell * p.D + 2 * p.eta * p.L / p.m, 2) / (2 * s * s), 1e-13);
    DPX_COMPARE_REL(*cyclic.rdp(p, 8.0, "no-curvature"), 2 * 8.0 * p.eta * p.eta * p.K / (s * s), 1e-13);
    QVERIFY(!cyclic.rdp(p, 8.0, "nonsense").isOk());
  }

  void stepAboveCurvatureLimitIsAViolation() {
    CyclicAccountant cyclic;
    Params p = specUnit();
    QVERIFY(cyclic.check(p).empty());
    p.eta = 2.0;  // > 1/(M + w) = 0.909
    const auto v = cyclic.check(p);
    QCOMPARE(v.size(), std::size_t(1));
    QVERIFY(QString::fromStdString(v.front().reason).contains(QStringLiteral("1/(M + w)")));
    QVERIFY(cyclic.epsilon(p).isOk());
  }

  // The analysis is for a constant η: a decreasing schedule is named, not silently accounted as constant.
  void decreasingScheduleIsAViolation() {
    CyclicAccountant cyclic;
    Params p = specUnit();
    p.schedule = dpx::core::Schedule::kDecreasing;
    const auto v = cyclic.check(p);
    QCOMPARE(v.size(), std::size_t(1));
    QCOMPARE(v.front().assumption, std::string("step-size schedule"));
  }

  void nativeKeys() {
    CyclicAccountant cyclic;
    auto n = cyclic.native(specUnit());
    QVERIFY(n.isOk());
    QCOMPARE(n->at(0).key, std::string("k"));
    QCOMPARE(n->at(1).key, std::string("ell"));
    QCOMPARE(n->at(2).key, std::string("Lambda_k"));
  }
};

QTEST_GUILESS_MAIN(TestCyclicAccountant)
#include "tst_cyclic_accountant.moc"
