// Step-size bounds (SPEC §2.7, §2.8; seed 004 §3.1 worked example, Wang et al. 2015).
#include <cmath>

#include <QTest>

#include "accounting/rdp_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/stepsize_analysis.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// Seed 004 §3.1: MNIST with N = 50000, ε = 0.1, δ = 1e−5, T = 10000, L = 1.
Params seed004Example() {
  Params p;
  p.n = 50000;
  p.m = 500;
  p.K = 10000;
  p.L = 1.0;
  p.delta = 1e-5;
  return p;
}

}  // namespace

class TestStepsizeAnalysis : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void wangFormulaValue() {
    // Seed 004 prints 1.54e−6; the formula as printed gives 1.479e−6 (SPEC §2.7).
    DPX_COMPARE_REL(wangStepSize(seed004Example(), 0.1), 1.478889506e-6, 1e-8);
  }

  void exactBoundsAreConservativeAndTheClosedFormsMatchThem() {
    const Params p = seed004Example();
    auto a = analyzeStepSize(p, 0.1);
    QVERIFY(a.isOk());
    DPX_COMPARE_REL(a->liFixed, a->exactFixed, 1e-12);
    DPX_COMPARE_REL(a->liDecreasingT1, a->exactDecreasingEta1, 1e-12);
    // The fixed step really is private: run the rdp accountant at σ = τ/(L√(ηN)).
    Params run = p;
    run.sigma = p.m / (p.L * std::sqrt(a->exactFixed * p.n));
    QVERIFY(RdpAccountant().epsilon(run)->epsilon <= 0.1);
    // A decreasing schedule may start larger than any fixed step.
    QVERIFY(a->exactDecreasingEta1 > a->exactFixed);
    // Both far above Wang et al.
    QVERIFY(a->exactFixed > 100 * a->wang);
    QVERIFY(a->c > 0 && a->c2 > 0);
  }

  void largerTargetsAllowLargerSteps() {
    const Params p = seed004Example();
    const std::vector<double> eps{0.05, 0.2, 1.0};
    auto curves = stepSizeCurves(p, eps, 0.2);
    QVERIFY(curves.isOk());
    QCOMPARE(curves->epsilon.size(), std::size_t(3));
    for (std::size_t i = 1; i < 3; ++i) {
      QVERIFY(curves->exactFixed[i] > curves->exactFixed[i - 1]);
      QVERIFY(curves->exactDecreasing[i] > curves->exactDecreasing[i - 1]);
      QVERIFY(curves->wang[i] > curves->wang[i - 1]);
    }
    DPX_COMPARE_REL(curves->liFixed[1], curves->exactFixed[1], 1e-9);  // c held at ε = 0.2
  }

  void smoothnessLimits() {
    Params p;
    p.beta = 4.0;
    p.lambda = 0.5;
    p.M = 1.0;
    p.w = 0.25;
    const auto limits = stepSizeLimits(p);
    auto find = [&](const std::string& id) {
      for (const auto& l : limits) {
        if (l.id == id) return l.eta;
      }
      return -1.0;
    };
    QCOMPARE(find("sgld_lsi"), 0.25);
    QCOMPARE(find("sgld_utility"), 0.125);
    QCOMPARE(find("cyclic"), 0.8);
    QCOMPARE(find("outpert"), 0.5);
    DPX_COMPARE_REL(find("outpert_optimal"), 2.0 / 4.5, 1e-15);
    QCOMPARE(find("sgmcmc_upper"), double(p.n));
  }

  void exactStepsAreTheLargest_data() {
    QTest::addColumn<qint64>("steps");
    QTest::addColumn<double>("target");
    for (qint64 K : {1, 2, 5, 40, 10000}) {
      for (double target : {0.1, 1.0}) {
        QTest::newRow(qPrintable(QStringLiteral("K=%1 eps=%2").arg(K).arg(target))) << K << target;
      }
    }
  }
  void exactStepsAreTheLargest() {
    QFETCH(qint64, steps);
    QFETCH(double, target);
    Params p = seed004Example();
    p.K = steps;
    auto a = analyzeStepSize(p, target);
    QVERIFY2(a.isOk(), a.status().message().c_str());
    const SgmcmcAccountant accountant;
    for (Schedule schedule : {Schedule::kConstant, Schedule::kDecreasing}) {
      Params run = p;
      run.schedule = schedule;
      run.eta = schedule == Schedule::kConstant ? a->exactFixed : a->exactDecreasingEta1;
      QVERIFY(accountant.epsilon(run)->epsilon <= target);
      run.eta *= 1.001;  // a step 0.1 % larger breaks the target: the answer is the largest
      QVERIFY2(accountant.epsilon(run)->epsilon > target, qPrintable(QStringLiteral("schedule %1").arg(int(schedule))));
    }
    // σ_t = σ₁t^{1/6} ≥ σ₁: the decreasing schedule may start at least as large; one step is the same run.
    QVERIFY(a->exactDecreasingEta1 >= a->exactFixed * (1 - 1e-9));
    if (steps == 1) DPX_COMPARE_REL(a->exactDecreasingEta1, a->exactFixed, 1e-8);
  }

  void moreStepsAllowSmallerSteps() {
    Params p = seed004Example();
    double lastFixed = INFINITY, lastDecreasing = INFINITY;
    for (std::int64_t K : {1, 2, 5, 10, 100, 1000, 100000}) {
      p.K = K;
      auto a = analyzeStepSize(p, 1.0);
      QVERIFY2(a.isOk(), a.status().message().c_str());
      QVERIFY(a->exactFixed < lastFixed);
      QVERIFY(a->exactDecreasingEta1 < lastDecreasing);
      lastFixed = a->exactFixed;
      lastDecreasing = a->exactDecreasingEta1;
    }
  }

  void aTargetThatDoesNotLimitTheStepSaysSo() {
    // ε = 1e300 is met at any σ searched: no finite "largest η" exists, and nothing non-finite
    // may come out.
    auto a = analyzeStepSize(seed004Example(), 1e300);
    QVERIFY(!a.isOk());
    QVERIFY(QString::fromStdString(a.status().message()).contains(QStringLiteral("not limited by privacy")));
  }

  void badTargets() {
    QVERIFY(!analyzeStepSize(seed004Example(), 0.0).isOk());
    QVERIFY(!analyzeStepSize(seed004Example(), -1.0).isOk());
  }
};

QTEST_GUILESS_MAIN(TestStepsizeAnalysis)
#include "tst_stepsize_analysis.moc"
