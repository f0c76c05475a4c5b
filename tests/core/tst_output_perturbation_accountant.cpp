// `outpert` (Chen, Lee & Kifer 2019, Prop. 2 and Prop. 3).
#include <QTest>
#include <cmath>

#include "accounting/output_perturbation_accountant.h"
#include "numerics/special_functions.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestOutputPerturbationAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void fullBatchAtOptimalStepIsProp2ClosedForm() {
    // Chen, Lee & Kifer 2019, Prop. 2: m = n (one batch), η = 2/(β+λ) gives Δ = 2L/(nλ).
    Params p;
    p.n = 5000;
    p.m = 5000;
    p.lambda = 0.1;
    p.beta = 2.0;
    p.L = 1.5;
    p.eta = 2.0 / (p.beta + p.lambda);
    p.K = 1000000;  // many epochs: Δ_E → Δ_∞
    auto c = outputPerturbationConstants(p);
    QVERIFY(c.isOk());
    DPX_COMPARE_REL(*c->sensitivityLimit, 2.0 * p.L / (p.n * p.lambda), 1e-12);
    DPX_COMPARE_REL(c->sensitivity, 2.0 * p.L / (p.n * p.lambda), 1e-12);
    DPX_COMPARE_REL(c->rho, (p.beta - p.lambda) / (p.beta + p.lambda), 1e-14);
  }

  void sensitivityAfterEEpochs() {
    Params p;
    p.n = 1000;
    p.m = 100;
    p.lambda = 0.05;
    p.beta = 1.0;
    p.eta = 0.5;
    p.K = 35;  // k = 10 → E = 4
    auto c = outputPerturbationConstants(p);
    QVERIFY(c.isOk());
    QCOMPARE(c->epochs, std::int64_t(4));
    double sum = 0.0;
    for (int e = 0; e < 4; ++e) sum += std::pow(c->rho, 10.0 * e);
    DPX_COMPARE_REL(c->sensitivity, 2 * p.eta * p.L / p.m * sum, 1e-12);
    QVERIFY(c->sensitivity < *c->sensitivityLimit);
  }

  void plainReleaseIsTheGaussianMechanism() {
    OutputPerturbationAccountant o;
    Params p;
    p.sigma = 2.0;
    DPX_COMPARE_REL(*o.rdp(p, 5.0), 5.0 / 8.0, 1e-15);
  }

  void averagedReleaseIsProp3() {
    OutputPerturbationAccountant o;
    Params p;
    p.n = 1000;
    p.m = 100;
    p.sigma = 1.0;
    p.lambda = 0.1;
    p.beta = 1.0;
    p.eta = 1.0;
    p.averaged = true;
    auto c = outputPerturbationConstants(p);
    const double alpha = 3.0;
    std::vector<double> terms;
    for (int j = 1; j <= 10; ++j) {
      terms.push_back(alpha * (alpha - 1) * std::pow(c->rho, 2.0 * (10 - j)) / 2.0);
    }
    const double expected = (numerics::logSumExp(terms) - std::log(10.0)) / (alpha - 1);
    DPX_COMPARE_REL(*o.rdp(p, alpha), expected, 1e-12);
    p.averaged = false;
    QVERIFY(*o.rdp(p, alpha) >= expected);
  }

  void geometricSumIsExactThenAnUpperBound() {
    // Exact for k ≤ 256 terms; beyond, never below the brute-force sum and close to it.
    for (double r : {0.5, 0.99, 0.9999}) {
      for (std::int64_t k : {1, 10, 256, 5000, 200000}) {
        std::vector<double> terms;
        for (std::int64_t i = 0; i < k; ++i) terms.push_back(20.0 * std::pow(r, static_cast<double>(i)));
        const double brute = numerics::logSumExp(terms);
        const double fast = logSumExpGeometric(20.0, r, k);
        QVERIFY2(fast >= brute - 1e-9, qPrintable(QStringLiteral("r=%1 k=%2").arg(r).arg(k)));
        QVERIFY2(fast <= brute + 1e-3,
                 qPrintable(QStringLiteral("r=%1 k=%2 %3 vs %4").arg(r).arg(k).arg(fast).arg(brute)));
      }
    }
  }

  void noContractionIsAViolation() {
    OutputPerturbationAccountant o;
    Params p;
    p.lambda = 0.0;
    const auto v = o.check(p);
    QVERIFY(!v.empty());
    QCOMPARE(v.front().assumption, std::string("contraction"));
    QVERIFY(o.epsilon(p).isOk());
    auto native = o.native(p);
    QVERIFY(native.isOk());
    for (const NativeValue& n : *native) QVERIFY(n.key != "Delta_inf");  // undefined without contraction
    p.lambda = 0.01;
    p.eta = 2.5;  // > 2/β
    QVERIFY(!o.check(p).empty());
  }

  // The sensitivity recursion is for a constant η: a decreasing schedule is named.
  void decreasingScheduleIsAViolation() {
    OutputPerturbationAccountant o;
    Params p;
    QVERIFY(o.check(p).empty());
    p.schedule = dpx::core::Schedule::kDecreasing;
    const auto v = o.check(p);
    QCOMPARE(v.size(), std::size_t(1));
    QCOMPARE(v.front().assumption, std::string("step-size schedule"));
  }

  void expansionThatOverflowsIsAStatus() {
    Params p;
    p.n = 100;
    p.m = 1;
    p.beta = 1e6;
    p.eta = 10;
    p.K = 10000000;
    OutputPerturbationAccountant o;
    QVERIFY(!o.native(p).isOk());
    QVERIFY(QString::fromStdString(o.native(p).status().message()).contains(QStringLiteral("1e300")));
    QVERIFY(!o.check(p).empty());
  }
};

QTEST_GUILESS_MAIN(TestOutputPerturbationAccountant)
#include "tst_output_perturbation_accountant.moc"
