// `sgld` (Ryffel, Bach & Pointcheval 2022, Thm 3.1, Cor. 3.2–3.3 and the Discussion's limits).
#include <QTest>
#include <cmath>
#include <limits>

#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

Params convexRun() {
  Params p;
  p.n = 10000;
  p.m = 100;
  p.sigma = 1.0;
  p.L = 1.0;
  p.beta = 2.0;
  p.lambda = 1e-3;
  p.eta = 1.0 / (2.0 * p.beta);  // the Discussion's η = 1/(2β)
  return p;
}

}  // namespace

class TestSgldAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void smallKLimit_data() {
    QTest::addColumn<int>("schedule");
    QTest::newRow("Ryffel et al. 2022 Discussion, constant η = 1/(2β), K ≪ β/λ") << int(Schedule::kConstant);
    QTest::newRow("Ryffel et al. 2022 Discussion, η_k = 1/(2β+λk/2), K ≪ β/λ") << int(Schedule::kDecreasing);
  }
  void smallKLimit() {
    QFETCH(int, schedule);
    Params p = convexRun();
    p.schedule = static_cast<Schedule>(schedule);
    p.K = 2;  // β/λ = 2000
    SgldAccountant sgld;
    const double alpha = 8.0;
    const double sigmaL = sgldSchedule(p).sigmaL;
    const double limit = alpha * p.L * p.L * p.K / (p.beta * p.n * p.n * sigmaL * sigmaL);
    DPX_COMPARE_REL(*sgld.rdp(p, alpha), limit, 2e-3);
    // "reaches the baseline composition analysis up to a factor 2"
    DPX_COMPARE_REL(*sgld.rdp(p, alpha) / *sgld.rdp(p, alpha, "baseline"), 2.0, 2e-3);
  }

  void largeKLimit() {
    Params p = convexRun();
    p.K = 10000000;  // ≫ β/λ
    SgldAccountant sgld;
    const double alpha = 8.0;
    const double sigmaL = sgldSchedule(p).sigmaL;
    const double limit = 4.0 * alpha * p.L * p.L / (p.lambda * p.n * p.n * sigmaL * sigmaL);
    DPX_COMPARE_REL(*sgld.rdp(p, alpha), limit, 1e-12);
  }

  void exactSumOfTheDecreasingSchedule() {
    Params p = convexRun();
    p.schedule = Schedule::kDecreasing;
    p.K = 5000;
    double sum = 0.0;
    for (int k = 0; k < p.K; ++k) sum += 1.0 / (2.0 * p.beta + p.lambda * k / 2.0);
    DPX_COMPARE_REL(sgldSchedule(p).sumEta, sum, 1e-12);
    DPX_COMPARE_REL(sgldSchedule(p).eta0, 1.0 / (2.0 * p.beta), 1e-15);
  }

  void closedFormVariantIsCorollary33() {
    Params p = convexRun();
    p.schedule = Schedule::kDecreasing;
    p.K = 50000;
    SgldAccountant sgld;
    const double alpha = 4.0;
    const double sigmaL = sgldSchedule(p).sigmaL;
    const double corollary = 4 * alpha * p.L * p.L / (p.lambda * p.n * p.n * sigmaL * sigmaL) * p.lambda * p.K /
                             (4 * p.beta + p.lambda * p.K);
    DPX_COMPARE_REL(*sgld.rdp(p, alpha, "closed-form"), corollary, 1e-13);
    // The integral closed form and the exact sum agree to within the integral's error.
    DPX_COMPARE_REL(*sgld.rdp(p, alpha, "closed-form"), *sgld.rdp(p, alpha), 0.05);
  }

  void constantScheduleIsCorollary32() {
    Params p = convexRun();
    p.K = 1234;
    SgldAccountant sgld;
    const double sigmaL = sgldSchedule(p).sigmaL;
    const double expected =
        4 * 3.0 * p.L * p.L / (p.lambda * p.n * p.n * sigmaL * sigmaL) * (1 - std::exp(-p.lambda * p.eta * p.K / 2));
    DPX_COMPARE_REL(*sgld.rdp(p, 3.0), expected, 1e-12);
  }

  void knobMappingMatchesDpSgdNoise() {
    // √(2η)σ_L = ησL/m: the same per-step noise as DP-SGD at noise multiplier σ.
    Params p = convexRun();
    const double sigmaL = sgldSchedule(p).sigmaL;
    DPX_COMPARE_REL(std::sqrt(2.0 * p.eta) * sigmaL, p.eta * p.sigma * p.L / p.m, 1e-14);
  }

  void stepSizeAboveOneOverBetaIsAViolationNotAnError() {
    Params p = convexRun();
    p.eta = 1.0 / p.beta;
    SgldAccountant sgld;
    const auto violations = sgld.check(p);
    QCOMPARE(violations.size(), std::size_t(1));
    QCOMPARE(violations.front().assumption, std::string("step size"));
    QVERIFY(QString::fromStdString(violations.front().reason).contains(QStringLiteral("1/β")));
    QVERIFY(sgld.epsilon(p).isOk());
  }

  void zeroLambdaGivesTheLimitAndAViolation() {
    Params p = convexRun();
    p.lambda = 0.0;
    p.K = 100;
    SgldAccountant sgld;
    QVERIFY(!sgld.check(p).empty());
    auto r = sgld.rdp(p, 2.0);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(*r, 2.0 * *sgld.rdp(p, 2.0, "baseline"), 1e-12);  // limit λ → 0
  }

  void epsilonSaturatesInK() {
    SgldAccountant sgld;
    Params p = convexRun();
    p.K = 100000;
    const double a = sgld.epsilon(p)->epsilon;
    p.K = 10000000;
    const double b = sgld.epsilon(p)->epsilon;
    QVERIFY(b >= a);
    QVERIFY(b < 1.2 * a);
  }

  // The utility bound of the same paper (Lemma 4.1) is utility::lemma41, tested in
  // tst_langevin_utility with hand values.
  void native() {
    SgldAccountant sgld;
    Params p = convexRun();
    auto native = sgld.native(p);
    QVERIFY(native.isOk());
    QCOMPARE(native->at(0).key, std::string("sigma_L"));
    QCOMPARE(native->at(1).key, std::string("sum_eta"));
  }

  // Found by tst_sweep: β at the bottom of its range (the smallest positive double) makes the
  // decreasing schedule's η₀ = 1/(2β) overflow, and tiny λ put Boost's digamma at its pole (it
  // threw). Now: a status naming β, and exact sums where they are finite.
  void extremeBetaAndLambdaGiveAStatusNotAnException() {
    Params p;
    p.schedule = Schedule::kDecreasing;
    p.beta = std::numeric_limits<double>::denorm_min();
    p.lambda = 1e-11;
    const Accountant& a = *findAccountant("sgld");
    const Result<EpsilonResult> e = a.epsilon(p);
    QVERIFY(!e.isOk());
    QVERIFY2(QString::fromStdString(e.status().message()).contains(QStringLiteral("β = ")),
             e.status().message().c_str());
    QVERIFY(!a.native(p).isOk());
    QVERIFY(!a.check(p).empty());
    // Tiny λ/β with a normal β: the sum is K·η₀ to rounding, and finite.
    p.beta = 1e-300;
    p.lambda = 1e-320;
    p.K = 1000;
    const SgldSchedule s = sgldSchedule(p);
    DPX_COMPARE_REL(s.sumEta, 1000.0 * s.eta0, 1e-12);
    // The digamma branch against the plain sum: λ at its maximum, β small, so a/b = 4β/λ = 4e-7.
    p.beta = 1e-6;
    p.lambda = 10.0;
    p.K = 50;
    double direct = 0.0;
    for (int k = 0; k < 50; ++k) direct += 1.0 / (2.0 * p.beta + p.lambda * k / 2.0);
    DPX_COMPARE_REL(sgldSchedule(p).sumEta, direct, 1e-12);
  }
};

QTEST_GUILESS_MAIN(TestSgldAccountant)
#include "tst_sgld_accountant.moc"
