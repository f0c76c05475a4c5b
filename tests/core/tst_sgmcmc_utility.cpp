// MSE of private SGLD posterior sampling (Li, Chen, Liu & Carin 2019, Prop. 5 and Lemma 6, with
// the general step-size-weighted form of their supplement's proof) and the step sums behind it.
// Expected values are worked out by hand from the printed formulas; the arithmetic is in each
// row's comment (the long sums with mpmath's Hurwitz ζ).
#include <QTest>
#include <cmath>
#include <limits>

#include "test_util.h"
#include "utility/series.h"
#include "utility/sgmcmc_utility.h"

using namespace dpx::core;
using namespace dpx::core::utility;

namespace {

// MNIST-like: N = 50000, τ = 256, Γ_M = L²/(N − 1) with L = 1, C = 1, so
// (N/τ − 1)N²Γ_M = 194.3125·2.5·10⁹/49999 = 9715819.316386328.
MseProblem mnistProblem() { return {50000, 256, 1.0 / 49999.0, 1.0}; }

// N = 10, τ = 2, Γ_M = 0.5, C = 2: (N/τ − 1)N²Γ_M = 4·100·0.5 = 200.
MseProblem smallProblem() { return {10, 2, 0.5, 2.0}; }

}  // namespace

class TestSgmcmcUtility : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // ---------------------------------------------------------------- step sums
  void powerSums_data() {
    QTest::addColumn<double>("exponent");
    QTest::addColumn<double>("shift");
    QTest::addColumn<double>("first");
    QTest::addColumn<double>("last");
    QTest::addColumn<double>("expected");
    // 1 + 2^{−1/3} + 3^{−1/3} = 1 + 0.7937005260 + 0.6933612744 = 2.487061800.
    QTest::newRow("three terms") << 1.0 / 3.0 << 0.0 << 1.0 << 3.0 << 2.487061800334734;
    // ζ(1/3, 1) − ζ(1/3, 10⁶ + 1) = 14999.03163975137 (mpmath).
    QTest::newRow("t^(-1/3), T = 1e6") << 1.0 / 3.0 << 0.0 << 1.0 << 1e6 << 14999.03163975137;
    // ζ(2/3, 1) − ζ(2/3, 10⁶ + 1) = 297.5524692637608.
    QTest::newRow("t^(-2/3), T = 1e6") << 2.0 / 3.0 << 0.0 << 1.0 << 1e6 << 297.5524692637608;
    // Σ_{t ≤ 10⁹} t⁻² = π²/6 − (10⁻⁹ − 10⁻¹⁸/2 + …) = 1.644934065848226.
    QTest::newRow("t^-2, T = 1e9") << 2.0 << 0.0 << 1.0 << 1e9 << 1.644934065848226;
    // Σ_{k<10⁷} 1/(40 + k) = ψ(40 + 10⁷) − ψ(40) = 12.44177222691568.
    QTest::newRow("1/(40+k), K = 1e7") << 1.0 << 40.0 << 0.0 << 1e7 - 1.0 << 12.44177222691568;
    // After a burn-in of 5000, to T = 10¹²: ζ(1/3, 5001) − ζ(1/3, 10¹² + 1) = 149999561.3681494.
    QTest::newRow("t^(-1/3), 5001..1e12") << 1.0 / 3.0 << 0.0 << 5001.0 << 1e12 << 149999561.3681494;
    QTest::newRow("empty") << 1.0 << 0.0 << 5.0 << 4.0 << 0.0;
  }
  void powerSums() {
    QFETCH(double, exponent);
    QFETCH(double, shift);
    QFETCH(double, first);
    QFETCH(double, last);
    QFETCH(double, expected);
    if (expected == 0.0) {
      QCOMPARE(shiftedPowerSum(exponent, shift, first, last), 0.0);
    } else {
      DPX_COMPARE_REL(shiftedPowerSum(exponent, shift, first, last), expected, 1e-13);
    }
  }

  // Short and long paths agree where they meet, and both agree with a plain loop.
  void powerSumPathsAgree() {
    for (double last : {4095.0, 4096.0, 4097.0, 20000.0}) {
      long double loop = 0.0L;
      for (double t = last; t >= 1.0; t -= 1.0) loop += std::pow(static_cast<long double>(t), -1.0L / 3.0L);
      DPX_COMPARE_REL(shiftedPowerSum(1.0 / 3.0, 0.0, 1.0, last), static_cast<double>(loop), 1e-14);
    }
    // A range far out (t ≈ 2⁶⁰, where t − 1 == t in double and the loop above would not move) is
    // still summed: 2¹⁰ + 1 terms of (2⁶⁰)^{−1/3} = 2⁻²⁰ (varying by 10⁻¹⁵): 1025/1048576.
    const double far = std::ldexp(1.0, 60);
    DPX_COMPARE_REL(shiftedPowerSum(1.0 / 3.0, 0.0, far, far + 1024.0), 1025.0 / 1048576.0, 1e-13);
  }

  // ---------------------------------------------------------------- the general weighted form
  void weightedDecreasingByHand() {
    // T = 3, burn-in B = 1, h₁ = 0.1, h_t = 0.1·t^{−1/3}: samples t = 2, 3 with
    // h₂ = 0.0793700526, h₃ = 0.0693361274; S₁ = 0.1487061800, S₂ = 0.0062996052 + 0.0048074986
    // = 0.0111071038. With C = 2 and (N/τ − 1)N²Γ_M = 200:
    //   gradient noise 2·S₂/S₁²·200 = 200.9105707, bias 2/S₁ = 13.44934017,
    //   discretisation 2·(S₂/S₁)² = 0.01115767283.
    Result<WeightedMse> r = sgldMseWeighted(smallProblem(), {PosteriorSchedule::kDecreasing, 0.1, 3.0, 1.0});
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->samples, 2.0, 0.0);
    DPX_COMPARE_REL(r->sumH, 0.1487061800334734, 1e-14);
    DPX_COMPARE_REL(r->sumH2, 0.01110710381716573, 1e-14);
    DPX_COMPARE_REL(r->terms.gradientNoise, 200.9105707083376, 1e-13);
    DPX_COMPARE_REL(r->terms.bias, 13.44934016561924, 1e-13);
    DPX_COMPARE_REL(r->terms.discretisation, 0.01115767283411761, 1e-13);
    DPX_COMPARE_REL(r->terms.total, 200.9105707083376 + 13.44934016561924 + 0.01115767283411761, 1e-13);
  }

  void weightedConstantIsLemma6() {
    // T = 5, B = 2, h = 0.2: 3 samples, S₁ = 0.6, S₂ = 0.12. C = 2:
    //   2·(0.12/0.36)·200 = 133.3333, 2/0.6 = 3.333333, 2·(0.12/0.6)² = 0.08.
    // Lemma 6 with T = 3 samples and η = 0.2 reads the same: 2·(200/3 + 1/(3·0.2) + 0.04).
    Result<WeightedMse> r = sgldMseWeighted(smallProblem(), {PosteriorSchedule::kConstant, 0.2, 5.0, 2.0});
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->terms.gradientNoise, 400.0 / 3.0, 1e-14);
    DPX_COMPARE_REL(r->terms.bias, 10.0 / 3.0, 1e-14);
    DPX_COMPARE_REL(r->terms.discretisation, 0.08, 1e-14);
    Result<MseTerms> l = liLemma6(smallProblem(), 3.0, 0.2);
    QVERIFY(l.isOk());
    DPX_COMPARE_REL(l->gradientNoise, 400.0 / 3.0, 1e-14);
    DPX_COMPARE_REL(l->bias, 10.0 / 3.0, 1e-14);
    DPX_COMPARE_REL(l->discretisation, 0.08, 1e-14);
  }

  // ---------------------------------------------------------------- the printed statements
  void lemma6Printed() {
    // N = 50000, τ = 256, T = 10⁴, η = 0.1, Γ_M = 1/49999, C = 1:
    //   9715819.316386328/10⁴ = 971.5819316, 1/(10⁴·0.1) = 10⁻³, η² = 0.01.
    Result<MseTerms> r = liLemma6(mnistProblem(), 1e4, 0.1);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->gradientNoise, 971.5819316386328, 1e-13);
    DPX_COMPARE_REL(r->bias, 1e-3, 1e-13);
    DPX_COMPARE_REL(r->discretisation, 0.01, 1e-13);
    DPX_COMPARE_REL(r->total, 971.5819316386328 + 0.011, 1e-13);
  }

  void proposition5Printed() {
    // ε = 0.1, δ = 10⁻⁵, L = 1, c₂ = 2: η̃₀ = 0.01/(4·11.51292546) = 2.171472410·10⁻⁴.
    // T = 10⁴: (2/3)·971.5819316 = 647.7212878, 1/(3η̃₀) = 1535.056729,
    //          2η̃₀²T^{−2/3} = 2·4.715292·10⁻⁸/464.1588834 = 2.031757915·10⁻¹⁰.
    Result<double> eta0 = liEtaTilde0(0.1, 1e-5, 1.0, 2.0);
    QVERIFY(eta0.isOk());
    DPX_COMPARE_REL(*eta0, 2.171472409516259e-4, 1e-13);
    Result<MseTerms> r = liProposition5(mnistProblem(), 1e4, *eta0);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->gradientNoise, 647.7212877590885, 1e-13);
    DPX_COMPARE_REL(r->bias, 1535.056728662697, 1e-13);
    DPX_COMPARE_REL(r->discretisation, 2.03175791493802e-10, 1e-12);
  }

  void lemma6AtTheorem4Printed() {
    // ε = 0.1, δ = 10⁻⁵, L = 1, c = 1.5, N = 50000, T = 10⁴ (Thm 4's η = 0.01·5·10⁴/(2.25·10⁴·11.5129)
    // = 1.930197697·10⁻³): c²L²log(1/δ)/(ε²N) = 2.25·11.51292546/500 = 0.05180816459;
    // ε⁴N²/(c⁴L⁴T²log²(1/δ)) = 10⁻⁴·2.5·10⁹/(5.0625·10⁸·132.5474) = 3.725663151·10⁻⁶ (= η²).
    Result<MseTerms> r = liLemma6AtTheorem4(mnistProblem(), 1e4, 0.1, 1e-5, 1.0, 1.5);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->gradientNoise, 971.5819316386328, 1e-13);
    DPX_COMPARE_REL(r->bias, 0.05180816459236603, 1e-13);
    DPX_COMPARE_REL(r->discretisation, 3.725663150846695e-6, 1e-12);
    DPX_COMPARE_REL(r->discretisation, 1.930197697347786e-3 * 1.930197697347786e-3, 1e-12);
  }

  void lemma6Optimum() {
    // T = 1000: η* = (2T)^{−1/3} = 0.07937005260; 1/(Tη*) + η*² = 0.0125992105 + 0.0062996052
    // = 0.01889881575 = 3·2^{−2/3}·T^{−2/3}; printed T^{−2/3} = 0.01. Gradient term 200/1000·C = 0.4.
    Result<Lemma6Optimum> r = liLemma6Optimum(smallProblem(), 1000.0);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->eta, 0.07937005259840997, 1e-14);
    DPX_COMPARE_REL(r->exact.bias + r->exact.discretisation, 2.0 * 0.0188988157484231, 1e-13);
    DPX_COMPARE_REL(r->printed.bias + r->printed.discretisation, 2.0 * 0.01, 1e-13);
    DPX_COMPARE_REL(r->printed.gradientNoise, 0.4, 1e-14);
    DPX_COMPARE_REL(r->exact.gradientNoise, 0.4, 1e-14);
    // η* minimises Lemma 6 over η.
    for (double eta : {0.05, 0.07, 0.09, 0.2}) QVERIFY(liLemma6(smallProblem(), 1000.0, eta)->total > r->exact.total);
  }

  void gammaMBoundByHand() {
    DPX_COMPARE_REL(*gammaMBound(1.0, 50000), 1.0 / 49999.0, 1e-15);
    DPX_COMPARE_REL(*gammaMBound(4.0, 11), 1.6, 1e-15);  // 16/10
    QCOMPARE(gammaMBound(0.0, 10).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(gammaMBound(1.0, 1).status().code(), StatusCode::kInvalidArgument);
  }

  // The printed Prop. 5 is not what its own eq. 8 gives: with h_t = η̃₀t^{−1/3}T^{−2/3} the exact
  // sums tend to (4/3)(N/τ − 1)N²Γ_M/T, 2/(3η̃₀) and 4η̃₀²/T² (Σt^{−1/3} ≈ (3/2)T^{2/3},
  // Σt^{−2/3} ≈ 3T^{1/3} + ζ(2/3), relative error 0.08 % at T = 10⁹), not to (2/3)…/T, 1/(3η̃₀)
  // and 2η̃₀²T^{−2/3}.
  void proposition5AgainstItsOwnSums() {
    const MseProblem p = mnistProblem();
    const double T = 1e9;
    const double eta0 = 2.171472409516259e-4;
    Result<WeightedMse> exact =
        sgldMseWeighted(p, {PosteriorSchedule::kDecreasing, eta0 * std::pow(T, -2.0 / 3.0), T, 0.0});
    QVERIFY(exact.isOk());
    DPX_COMPARE_REL(exact->terms.gradientNoise, (4.0 / 3.0) * 9715819.316386328 / T, 5e-3);
    DPX_COMPARE_REL(exact->terms.bias, 2.0 / (3.0 * eta0), 5e-3);
    DPX_COMPARE_REL(exact->terms.discretisation, 4.0 * eta0 * eta0 / (T * T), 5e-3);
    Result<MseTerms> printed = liProposition5(p, T, eta0);
    QVERIFY(printed.isOk());
    DPX_COMPARE_REL(exact->terms.gradientNoise / printed->gradientNoise, 2.0, 5e-3);
    DPX_COMPARE_REL(exact->terms.bias / printed->bias, 2.0, 5e-3);
  }

  // ---------------------------------------------------------------- properties
  void boundFallsWithStepsAndRisesWithBurnIn() {
    const MseProblem p = mnistProblem();
    double previous = std::numeric_limits<double>::infinity();
    for (double T : {1e3, 1e4, 1e5, 1e6, 1e7}) {
      Result<WeightedMse> r = sgldMseWeighted(p, {PosteriorSchedule::kDecreasing, 1e-3, T, 0.0});
      QVERIFY(r.isOk());
      QVERIFY(r->terms.gradientNoise + r->terms.bias < previous);
      previous = r->terms.gradientNoise + r->terms.bias;
    }
    previous = 0.0;
    for (double B : {0.0, 100.0, 1000.0, 9000.0, 9999.0}) {
      Result<WeightedMse> r = sgldMseWeighted(p, {PosteriorSchedule::kConstant, 1e-3, 1e4, B});
      QVERIFY(r.isOk());
      QVERIFY(r->terms.total > previous);
      previous = r->terms.total;
    }
    // Larger batches: less gradient noise; τ = N: none.
    double noise = std::numeric_limits<double>::infinity();
    for (std::int64_t tau : {1, 16, 256, 4096, 50000}) {
      MseProblem q = p;
      q.batchSize = tau;
      Result<WeightedMse> r = sgldMseWeighted(q, {PosteriorSchedule::kConstant, 1e-3, 1e4, 0.0});
      QVERIFY(r.isOk());
      QVERIFY(r->terms.gradientNoise < noise);
      noise = r->terms.gradientNoise;
    }
    QCOMPARE(noise, 0.0);
  }

  // Every term scales with C.
  void constantScalesEverything() {
    MseProblem p = smallProblem();
    Result<WeightedMse> a = sgldMseWeighted(p, {PosteriorSchedule::kDecreasing, 0.1, 100.0, 10.0});
    p.constant = 6.0;  // 3× the small problem's C = 2
    Result<WeightedMse> b = sgldMseWeighted(p, {PosteriorSchedule::kDecreasing, 0.1, 100.0, 10.0});
    QVERIFY(a.isOk() && b.isOk());
    DPX_COMPARE_REL(b->terms.total, 3.0 * a->terms.total, 1e-14);
    DPX_COMPARE_REL(b->terms.discretisation, 3.0 * a->terms.discretisation, 1e-14);
  }

  // ---------------------------------------------------------------- errors
  void invalidInputsAreRefused() {
    const PosteriorRun run{PosteriorSchedule::kDecreasing, 0.1, 100.0, 0.0};
    auto status = [&](MseProblem p, PosteriorRun r) { return sgldMseWeighted(p, r).status(); };
    MseProblem p = smallProblem();
    struct Case {
      MseProblem problem;
      PosteriorRun run;
      const char* mention;
    };
    const Case cases[] = {
        {{1, 1, 0.5, 1.0}, run, "n = 1"},
        {{10, 11, 0.5, 1.0}, run, "[1, N = 10]"},
        {{10, 0, 0.5, 1.0}, run, "m = 0"},
        {{10, 2, -1.0, 1.0}, run, "gamma-m = -1"},
        {{10, 2, std::nan(""), 1.0}, run, "gamma-m"},
        {{10, 2, 0.5, 0.0}, run, "mse-constant = 0"},
        {p, {PosteriorSchedule::kDecreasing, 0.0, 100.0, 0.0}, "h1 = 0"},
        {p, {PosteriorSchedule::kDecreasing, 0.1, 0.0, 0.0}, "K = 0"},
        {p, {PosteriorSchedule::kDecreasing, 0.1, 10.5, 0.0}, "K = 10.5"},
        {p, {PosteriorSchedule::kDecreasing, 0.1, 100.0, 100.0}, "[0, 99]"},
        {p, {PosteriorSchedule::kDecreasing, 0.1, 100.0, -1.0}, "burn-in = -1"},
    };
    for (const Case& c : cases) {
      const Status s = status(c.problem, c.run);
      QCOMPARE(s.code(), StatusCode::kInvalidArgument);
      QVERIFY2(s.message().find(c.mention) != std::string::npos, s.message().c_str());
    }
    QCOMPARE(liEtaTilde0(0.0, 1e-5, 1.0, 2.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liEtaTilde0(0.1, 1.0, 1.0, 2.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liEtaTilde0(0.1, 1e-5, 1.0, 0.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liProposition5(p, 100.0, 0.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liLemma6(p, 100.0, -0.1).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liLemma6AtTheorem4(p, 100.0, 0.1, 1e-5, 1.0, 0.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liLemma6AtTheorem4(p, 100.0, 0.1, 1e-5, 0.0, 1.0).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(liLemma6Optimum(p, 0.0).status().code(), StatusCode::kInvalidArgument);
  }

  void extremeInputsStayFinite() {
    // A step of 10⁻³⁰⁰: 1/S₁ overflows; the answer is a status, never inf.
    const MseProblem p = mnistProblem();
    Result<WeightedMse> r = sgldMseWeighted(p, {PosteriorSchedule::kConstant, 1e-310, 10.0, 0.0});
    QCOMPARE(r.status().code(), StatusCode::kNumericalIssue);
    Result<WeightedMse> big = sgldMseWeighted(p, {PosteriorSchedule::kDecreasing, 1e-3, 1e30, 0.0});
    QVERIFY(big.isOk());
    for (double v : {big->terms.gradientNoise, big->terms.bias, big->terms.discretisation}) QVERIFY(std::isfinite(v));
  }
};

QTEST_GUILESS_MAIN(TestSgmcmcUtility)
#include "tst_sgmcmc_utility.moc"
