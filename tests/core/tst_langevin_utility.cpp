// Utility of DP-SGLD (Ryffel, Bach & Pointcheval 2022, §4: Lemma 4.1, Lemma 4.2, Thm 4.1–4.4,
// Table 4) and the data-dependent inputs for softmax regression (core/utility). Expected values
// are worked out by hand from the printed formulas; the arithmetic is in each row's comment.
#include <QTest>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "synthetic_data.h"
#include "test_util.h"
#include "training/softmax_regression.h"
#include "utility/langevin_utility.h"
#include "utility/series.h"
#include "utility/utility_inputs.h"

using namespace dpx::core;
using namespace dpx::core::utility;

namespace {

// β = 1, λ = 0.125, L = 1, n = 100, d = 10, ξ² = 0.5: binary fractions, so the prescribed K of
// Thm 4.3 lands on a whole number exactly. D₀ = 4L²/λ² = 256.
LangevinProblem smallProblem() {
  LangevinProblem p;
  p.beta = 1.0;
  p.lambda = 0.125;
  p.lipschitz = 1.0;
  p.records = 100;
  p.dimension = 10.0;
  p.xi2 = 0.5;
  return p;
}

// Table 4's CIFAR-10 / ResNet18 setting: β = 55, β/λ = 5.5·10⁴ (λ = 10⁻³), n = 50000, the
// last layer's d = 512·10 + 10 = 5130, L = 1, and ξ² = 1 (≤ L²).
LangevinProblem cifarProblem() {
  LangevinProblem p;
  p.beta = 55.0;
  p.lambda = 1e-3;
  p.lipschitz = 1.0;
  p.records = 50000;
  p.dimension = 5130.0;
  p.xi2 = 1.0;
  return p;
}

// The lemma rows: β = 1, λ = 0.1, d = 3, ξ² = 2, D₀ = 4 given.
LangevinProblem lemmaProblem() {
  LangevinProblem p;
  p.beta = 1.0;
  p.lambda = 0.1;
  p.lipschitz = 1.0;
  p.records = 1000;
  p.dimension = 3.0;
  p.xi2 = 2.0;
  p.initialDistanceSquared = 4.0;
  return p;
}

// D_{k+1} = (1 − η_kλ)D_k + 2η_k²ξ² + 2η_k dσ², run step by step: independent of the telescoped
// closed forms under test.
double recursionByLoop(const LangevinProblem& p, double d0, double sigmaL2, int steps, bool decreasing, double eta) {
  double D = d0;
  for (int k = 0; k < steps; ++k) {
    const double e = decreasing ? 1.0 / (2.0 * p.beta + p.lambda * k / 2.0) : eta;
    D = (1.0 - e * p.lambda) * D + 2.0 * e * e * p.xi2 + 2.0 * e * p.dimension * sigmaL2;
  }
  return 0.5 * p.beta * D;
}

}  // namespace

class TestLangevinUtility : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // ---------------------------------------------------------------- Lemma 4.1
  void lemma41ConstantStep() {
    // η = 0.5 = 1/(2β), K = 2, σ_L² = 0.01, D₀ = 4: ηλ = 0.05, (1 − ηλ)² = 0.9025, Σ_{k<2} 0.95^k = 1.95.
    //   recursion: initial   (β/2)(1 − ηλ)^K D₀ = 0.5·0.9025·4           = 1.805
    //              ξ² term   βη²ξ²·1.95        = 0.25·2·1.95              = 0.975
    //              Langevin  βηdσ²·1.95        = 0.5·3·0.01·1.95          = 0.02925    total 2.80925
    //   closed form: (β/2)D₀e^{−ληK} = 2e^{−0.1} = 1.809674836, βηξ²/λ = 0.5·2/0.1 = 10,
    //                βdσ²/λ = 0.03/0.1 = 0.3                                           total 12.109674836
    //   printed:   ξ² term βηξ²/(2λ) = 5                                               total 7.109674836
    Result<Lemma41Bound> r = lemma41(lemmaProblem(), {LangevinSchedule::kConstant, 0.5, 2.0, 0.01});
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->recursion.initial, 1.805, 1e-13);
    DPX_COMPARE_REL(r->recursion.gradientNoise, 0.975, 1e-13);
    DPX_COMPARE_REL(r->recursion.langevinNoise, 0.02925, 1e-13);
    DPX_COMPARE_REL(r->recursion.total, 2.80925, 1e-13);
    DPX_COMPARE_REL(r->contraction, 0.9025, 1e-14);
    QVERIFY(r->closedForm && r->printed);
    DPX_COMPARE_REL(r->closedForm->initial, 1.809674836071919, 1e-13);
    DPX_COMPARE_REL(r->closedForm->gradientNoise, 10.0, 1e-13);
    DPX_COMPARE_REL(r->closedForm->langevinNoise, 0.3, 1e-13);
    DPX_COMPARE_REL(r->closedForm->total, 12.109674836071919, 1e-13);
    DPX_COMPARE_REL(r->printed->gradientNoise, 5.0, 1e-13);
    DPX_COMPARE_REL(r->printed->total, 7.109674836071919, 1e-13);
    DPX_COMPARE_REL(r->initialDistanceSquared, 4.0, 0.0);
  }

  void lemma41DecreasingStep_data() {
    QTest::addColumn<int>("steps");
    QTest::addColumn<double>("initial");
    QTest::addColumn<double>("gradientNoise");
    QTest::addColumn<double>("langevinNoise");
    // η₀ = 1/2, η₁ = 1/(2 + 0.05) = 0.487804878…: D₁ = 0.95·4 + 2·0.25·2 + 2·0.5·3·0.01 = 4.83;
    // risk (β/2)D₁ = 2.415 = 1.9 + 0.5 + 0.015.
    QTest::newRow("K = 1") << 1 << 1.9 << 0.5 << 0.015;
    // K = 2: (1 − η₁λ) = 0.951219512…; initial 0.5·4·0.95·0.951219512 = 1.807317073,
    // ξ² 0.5·(1·0.951219512 + 4·0.487804878²) = 0.951516954, Langevin 0.5·(0.03·0.951219512 +
    // 0.06·0.487804878) = 0.028902439: total 2.787736466.
    QTest::newRow("K = 2") << 2 << 1.807317073170732 << 0.9515169541939322 << 0.02890243902439024;
  }
  void lemma41DecreasingStep() {
    QFETCH(int, steps);
    QFETCH(double, initial);
    QFETCH(double, gradientNoise);
    QFETCH(double, langevinNoise);
    Result<Lemma41Bound> r = lemma41(lemmaProblem(), {LangevinSchedule::kDecreasing, 0.0, double(steps), 0.01});
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->recursion.initial, initial, 1e-13);
    DPX_COMPARE_REL(r->recursion.gradientNoise, gradientNoise, 1e-13);
    DPX_COMPARE_REL(r->recursion.langevinNoise, langevinNoise, 1e-13);
    DPX_COMPARE_REL(r->recursion.total, initial + gradientNoise + langevinNoise, 1e-13);
    QVERIFY(!r->closedForm && !r->printed);  // the paper gives no closed form for this case
  }

  // The telescoped products against the recursion run step by step.
  void lemma41MatchesTheRecursion_data() {
    QTest::addColumn<bool>("decreasing");
    QTest::addColumn<int>("steps");
    QTest::addColumn<double>("eta");
    for (int steps : {1, 3, 17, 1000, 5000, 40000}) {
      QTest::newRow(qPrintable(QStringLiteral("decreasing K = %1").arg(steps))) << true << steps << 0.0;
      QTest::newRow(qPrintable(QStringLiteral("constant η = 0.3, K = %1").arg(steps))) << false << steps << 0.3;
    }
  }
  void lemma41MatchesTheRecursion() {
    QFETCH(bool, decreasing);
    QFETCH(int, steps);
    QFETCH(double, eta);
    const LangevinProblem p = lemmaProblem();
    const LangevinSchedule schedule = decreasing ? LangevinSchedule::kDecreasing : LangevinSchedule::kConstant;
    Result<Lemma41Bound> r = lemma41(p, {schedule, eta, double(steps), 0.01});
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->recursion.total, recursionByLoop(p, 4.0, 0.01, steps, decreasing, eta), 1e-11);
  }

  // As K → ∞ the decreasing schedule's last iterate keeps only the Langevin floor βdσ_L²/λ
  // (2dσ²/b·K²/2 over K²) and its ξ² term vanishes like 1/K; the constant step keeps βηξ²/λ.
  void lemma41DecreasingLimit() {
    const LangevinProblem p = lemmaProblem();
    Result<Lemma41Bound> r = lemma41(p, {LangevinSchedule::kDecreasing, 0.0, 1e12, 0.01});
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->recursion.langevinNoise, 1.0 * 3.0 * 0.01 / 0.1, 1e-9);  // βdσ²/λ = 0.3
    QVERIFY(r->recursion.gradientNoise < 1e-9);
    Result<Lemma41Bound> c = lemma41(p, {LangevinSchedule::kConstant, 0.5, 1e12, 0.01});
    QVERIFY(c.isOk());
    DPX_COMPARE_REL(c->recursion.gradientNoise, 0.5 * 2.0 / 0.1, 1e-12);  // 2η²ξ²/(ηλ)·β/2 = βηξ²/λ = 10
    QVERIFY(r->recursion.total < c->recursion.total);
  }

  // ---------------------------------------------------------------- Lemma 4.2
  void lemma42SmallRun() {
    // K = 2: Σ_{k<2} η_k = 0.5 + 1/2.05 = 0.987804878…
    //   exact:   (2β − λ/2)D₀/K = 1.95·4/2 = 3.9, 2ξ²Ση/K = 2·2·0.987804878/2 = 1.975609756,
    //            2dσ² = 0.06                                                       total 5.935609756
    //   printed: 2βD₀/K = 4, (4ξ²/(Kλ))log(1 + λK/(4β)) = 40·log(1.05) = 1.951606557, 0.06
    //                                                                              total 6.011606567
    Result<Lemma42Bound> r = lemma42(lemmaProblem(), 2.0, 0.01);
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->sumEta, 0.9878048780487805, 1e-14);
    DPX_COMPARE_REL(r->exactSum.initial, 3.9, 1e-14);
    DPX_COMPARE_REL(r->exactSum.gradientNoise, 1.975609756097561, 1e-14);
    DPX_COMPARE_REL(r->exactSum.langevinNoise, 0.06, 1e-14);
    DPX_COMPARE_REL(r->exactSum.total, 5.935609756097561, 1e-14);
    DPX_COMPARE_REL(r->closedForm.initial, 4.0, 1e-14);
    DPX_COMPARE_REL(r->closedForm.gradientNoise, 40.0 * std::log(1.05), 1e-14);
    DPX_COMPARE_REL(r->closedForm.total, 6.01160656677728, 1e-13);
  }

  // Σ_{k<K} 1/(2β + λk/2) over long runs against the digamma (mpmath: ψ(40 + 10⁷) − ψ(40)).
  void lemma42LongSum() {
    const LangevinProblem p = lemmaProblem();  // x = 4β/λ = 40
    Result<Lemma42Bound> r = lemma42(p, 1e7, 0.0);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->sumEta, 20.0 * 12.44177222691568, 1e-13);  // (2/λ)·Σ 1/(40 + k)
  }

  // ---------------------------------------------------------------- Theorems
  void theorem41Small() {
    // α = 2, ε = 1, m = 10: σ_L² = 4αL²/(ελn²) = 8/(0.125·10⁴) = 0.0064; x = εn²/(αd) = 10⁴/20 = 500;
    // K = (2β/λ)log 500 = 16·6.214608 = 99.4337 → 100; η₀ = 1/2;
    // bound 6αβdL²/(ελ²n²) + ξ²/(4λ) = 120/(10⁴/64) + 0.5/0.5 = 0.768 + 1 = 1.768; corrected
    // 0.768 + ξ²/(2λ) = 2.768; σ = σ_L·m√2/(L√η₀) = 0.08·10·2 = 1.6.
    // Lemma 4.1 at K = 100, σ_L² = 0.0064, D₀ = 256 (ρ = 1 − 1/16): 0.2015290 + 1.9968511 + 0.5111939.
    Result<TheoremPrescription> t = theorem41(smallProblem(), {2.0, 1.0}, 10);
    QVERIFY2(t.isOk(), t.status().message().c_str());
    DPX_COMPARE_REL(t->sigmaL2, 0.0064, 1e-14);
    DPX_COMPARE_REL(t->sigmaL, 0.08, 1e-14);
    DPX_COMPARE_REL(t->stepsFormula, 99.43372957475507, 1e-13);
    QCOMPARE(t->steps, 100.0);
    DPX_COMPARE_REL(t->eta0, 0.5, 0.0);
    DPX_COMPARE_REL(t->statedBound, 1.768, 1e-13);
    DPX_COMPARE_REL(t->correctedBound, 2.768, 1e-13);
    DPX_COMPARE_REL(t->noiseMultiplier, 1.6, 1e-13);
    DPX_COMPARE_REL(t->lemma.initial, 0.2015290277138551, 1e-11);
    DPX_COMPARE_REL(t->lemma.gradientNoise, 1.996851108941971, 1e-11);
    DPX_COMPARE_REL(t->lemma.langevinNoise, 0.5111938838891446, 1e-11);
    DPX_COMPARE_REL(t->lemma.total, 2.709574020544971, 1e-11);
  }

  void theorem42Small() {
    // ε = 1, δ = 0.01 (log(1/δ) = 4.605170186): α = 1 + 2·4.605170186 = 10.21034037, ε_α = 0.5;
    // σ_L² = 8L²(ε + 2log(1/δ))/(ε²λn²) = 8·10.21034037/1250 = 0.06534617838;
    // x = ε²n²/(4log(1/δ)d) = 10⁴/184.2068074 = 54.28681024; K = 16·log x = 63.9085 → 64;
    // bound 48βdL²log(1/δ)/(ε²λ²n²) + ξ²/(4λ) = 48·10·4.605170186·64/10⁴ + 1 = 15.14708281;
    // corrected + 1 more = 16.14708281; σ = √0.06534617838·10·2 = 5.11257972;
    // Lemma 4.1 at K = 64 (mpmath): 9.16915695327272.
    Result<TheoremPrescription> t = theorem42(smallProblem(), 1.0, 0.01, 10);
    QVERIFY2(t.isOk(), t.status().message().c_str());
    DPX_COMPARE_REL(t->rdp.alpha, 10.21034037197618, 1e-13);
    DPX_COMPARE_REL(t->rdp.epsilon, 0.5, 0.0);
    DPX_COMPARE_REL(t->sigmaL2, 0.06534617838064757, 1e-13);
    DPX_COMPARE_REL(t->stepsFormula, 63.90850067286953, 1e-13);
    QCOMPARE(t->steps, 64.0);
    DPX_COMPARE_REL(t->statedBound, 15.14708281135542, 1e-13);
    DPX_COMPARE_REL(t->correctedBound, 16.14708281135542, 1e-13);
    DPX_COMPARE_REL(t->noiseMultiplier, 5.112579715980869, 1e-13);
    DPX_COMPARE_REL(t->lemma.total, 9.16915695327272, 1e-11);
  }

  void theorem43Small() {
    // α = 2, ε = 1: σ_L² = 0.0064 (as Thm 4.1), x = 500, β/λ = 8:
    // K = max(8·500, 500²/8) = max(4000, 31250) = 31250; bound 18αdL²/(ελn²) = 360/1250 = 0.288.
    // Lemma 4.2 at K = 31250: Σ_{k<K}η_k = 16(ψ(31282) − ψ(32)) = 110.4120418717 (mpmath);
    // (2β − λ/2)D₀/K = 1.9375·256/31250 = 0.015872, 2ξ²Ση/K = 0.0035331853, 2dσ² = 0.128.
    Result<TheoremPrescription> t = theorem43(smallProblem(), {2.0, 1.0}, 10);
    QVERIFY2(t.isOk(), t.status().message().c_str());
    DPX_COMPARE_REL(t->sigmaL2, 0.0064, 1e-14);
    DPX_COMPARE_REL(t->stepsFormula, 31250.0, 1e-15);
    QCOMPARE(t->steps, 31250.0);
    DPX_COMPARE_REL(t->statedBound, 0.288, 1e-14);
    DPX_COMPARE_REL(t->correctedBound, 0.288, 1e-14);
    DPX_COMPARE_REL(t->lemma.initial, 0.015872, 1e-13);
    DPX_COMPARE_REL(t->lemma.gradientNoise, 0.003533185339894416, 1e-12);
    DPX_COMPARE_REL(t->lemma.langevinNoise, 0.128, 1e-13);
    DPX_COMPARE_REL(t->lemma.total, 0.1474051853398944, 1e-12);
  }

  void theorem44Small() {
    // ε = 1, δ = 0.01: σ_L² = 0.06534617838 (as Thm 4.2), x = 54.28681024:
    // K = max(8·54.28681024, 54.28681024²/8) = max(434.2945, 368.38) = 434.2945 → 435;
    // bound 144dL²log(1/δ)/(ε²λn²) = 1440·4.605170186/1250 = 5.305156054;
    // Lemma 4.2 at K = 435 (mpmath): 2.546288300715132.
    Result<TheoremPrescription> t = theorem44(smallProblem(), 1.0, 0.01, 10);
    QVERIFY2(t.isOk(), t.status().message().c_str());
    DPX_COMPARE_REL(t->stepsFormula, 434.2944819032518, 1e-13);
    QCOMPARE(t->steps, 435.0);
    DPX_COMPARE_REL(t->statedBound, 5.305156054258281, 1e-13);
    DPX_COMPARE_REL(t->lemma.total, 2.546288300715132, 1e-11);
  }

  // Table 4, CIFAR-10 / ResNet18: β = 55, λ = 10⁻³, L = 1, n = 50000, d = 5130, (ε, δ) = (1, 10⁻⁵).
  void theoremsCifar10() {
    // log(1/δ) = 11.51292546; α = 1 + 2·11.51292546 = 24.02585093, ε_α = 0.5.
    // σ_L² = 8(1 + 23.02585093)/(10⁻³·2.5·10⁹) = 7.688272298·10⁻⁵ (Thm 4.1 at (α, ε_α) gives the same);
    // σ = σ_L·256·√2·√110 = 33.29397767.
    // Thm 4.1: x = 0.5·2.5·10⁹/(24.02585093·5130) = 10141.77263, K = 1.1·10⁵·log x = 1014685.989,
    //          bound 6αβd/(ε_αλ²n²) + ξ²/(4λ) = 32538.69043 + 250 = 32788.69043.
    // Thm 4.2: x = 2.5·10⁹/(4·11.51292546·5130) = 10582.22422, K = 1.1·10⁵·log x = 1019362.400,
    //          bound 48βd·11.51292546/(λ²n²) + 250 = 62618.74086.
    // Thm 4.3: K = max(5.5·10⁴x, x²/5.5·10⁴) = 5.5·10⁴·10141.77263 = 557797494.6, bound 18αd/(ε_αλn²) = 1.774837660.
    // Thm 4.4: K = 5.5·10⁴·10582.22422 = 582022332.0, bound 144d·11.51292546/(λn²) = 3.401931320.
    const LangevinProblem p = cifarProblem();
    Result<RdpPair> rdp = rdpPairForDp(1.0, 1e-5);
    QVERIFY(rdp.isOk());
    DPX_COMPARE_REL(rdp->alpha, 24.02585092994046, 1e-14);
    DPX_COMPARE_REL(rdp->epsilon, 0.5, 0.0);
    Result<TheoremPrescription> t1 = theorem41(p, *rdp, 256);
    Result<TheoremPrescription> t2 = theorem42(p, 1.0, 1e-5, 256);
    Result<TheoremPrescription> t3 = theorem43(p, *rdp, 256);
    Result<TheoremPrescription> t4 = theorem44(p, 1.0, 1e-5, 256);
    QVERIFY(t1.isOk() && t2.isOk() && t3.isOk() && t4.isOk());
    for (const auto* t : {&*t1, &*t2, &*t3, &*t4}) {
      DPX_COMPARE_REL(t->sigmaL2, 7.688272297580946e-5, 1e-13);
      DPX_COMPARE_REL(t->noiseMultiplier, 33.29397767235664, 1e-13);
    }
    DPX_COMPARE_REL(t1->stepsFormula, 1014685.988508145, 1e-13);
    DPX_COMPARE_REL(t1->statedBound, 32788.69043143696, 1e-13);
    DPX_COMPARE_REL(t2->stepsFormula, 1019362.400303918, 1e-13);
    DPX_COMPARE_REL(t2->statedBound, 62618.74086287392, 1e-13);
    DPX_COMPARE_REL(t3->stepsFormula, 557797494.5932226, 1e-13);
    DPX_COMPARE_REL(t3->statedBound, 1.774837659896561, 1e-13);
    DPX_COMPARE_REL(t4->stepsFormula, 582022331.9853521, 1e-13);
    DPX_COMPARE_REL(t4->statedBound, 3.401931319793123, 1e-13);
    // The decreasing schedule's bound is smaller by about β/λ (the paper's remark after Thm 4.3):
    // 6αβd/(ελ²n²) against 18αd/(ελn²) is a factor β/(3λ).
    QVERIFY(t3->statedBound * 1000.0 < t1->statedBound);
  }

  // ---------------------------------------------------------------- Table 4
  void table4Ratio_data() {
    QTest::addColumn<double>("beta");
    QTest::addColumn<double>("lambda");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<double>("d");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("epsilon");
    QTest::addColumn<double>("ratio");
    QTest::addColumn<bool>("quartic");
    // x = εn²/(αd) = 10⁴/20 = 500, (β/λ)² = 64: 7.8125 > 1, the n⁴ branch.
    QTest::newRow("small, n = 100") << 1.0 << 0.125 << qint64(100) << 10.0 << 2.0 << 1.0 << 7.8125 << true;
    // n = 20: x = 400/20 = 20, 20/64 = 0.3125 < 1, the n² branch.
    QTest::newRow("small, n = 20") << 1.0 << 0.125 << qint64(20) << 10.0 << 2.0 << 1.0 << 0.3125 << false;
    // CIFAR-10 with d = 5130 and Thm 4.2's (α, ε_α) = (24.02585093, 0.5):
    // 10141.77263/(5.5·10⁴)² = 3.352652109·10⁻⁶.
    QTest::newRow("CIFAR-10, d = 5130") << 55.0 << 1e-3 << qint64(50000) << 5130.0 << 24.02585092994046 << 0.5
                                        << 3.352652108749647e-6 << false;
    // Table 4's printed AlexNet value 1.5·10⁻⁴ comes out with d = 10 (the classes), ε = 1 and
    // α = 24.02585093: 2.5·10⁹/(240.2585093)/(2.6·10⁵)² = 1.539269041·10⁻⁴.
    QTest::newRow("Table 4 AlexNet as printed")
        << 260.0 << 1e-3 << qint64(50000) << 10.0 << 24.02585092994046 << 1.0 << 1.539269041023793e-4 << false;
  }
  void table4Ratio() {
    QFETCH(double, beta);
    QFETCH(double, lambda);
    QFETCH(qint64, n);
    QFETCH(double, d);
    QFETCH(double, alpha);
    QFETCH(double, epsilon);
    QFETCH(double, ratio);
    QFETCH(bool, quartic);
    Result<IterationRegime> r = utility::table4Ratio(beta, lambda, n, d, {alpha, epsilon});
    QVERIFY2(r.isOk(), r.status().message().c_str());
    DPX_COMPARE_REL(r->ratio, ratio, 1e-13);
    QCOMPARE(r->quartic, quartic);
    QCOMPARE(QString::fromStdString(r->verdict),
             quartic ? QStringLiteral("K grows like n⁴") : QStringLiteral("K grows like n²"));
    DPX_COMPARE_REL(r->conditionNumber, beta / lambda, 1e-15);
  }

  void table4RatioDp() {
    // Thm 4.4's x = ε²n²/(4log(1/δ)d) = 54.28681024 for the small problem at (1, 0.01): 54.28681024/64.
    Result<IterationRegime> r = utility::table4RatioDp(1.0, 0.125, 100, 10.0, 1.0, 0.01);
    QVERIFY(r.isOk());
    DPX_COMPARE_REL(r->ratio, 0.8482314099672887, 1e-13);
    QVERIFY(!r->quartic);
    // CIFAR-10: 10582.22422/3.025·10⁹ = 3.498255940·10⁻⁶.
    Result<IterationRegime> c = utility::table4RatioDp(55.0, 1e-3, 50000, 5130.0, 1.0, 1e-5);
    QVERIFY(c.isOk());
    DPX_COMPARE_REL(c->ratio, 3.498255939806775e-6, 1e-13);
  }

  // ---------------------------------------------------------------- properties
  void boundFallsWithNAndRisesWithD() {
    double previousBound = std::numeric_limits<double>::infinity();
    double previousLemma = previousBound;
    double previousDecreasing = previousBound;
    for (qint64 n : {1000, 3000, 10000, 100000, 1000000}) {
      LangevinProblem p = smallProblem();
      p.records = n;
      Result<TheoremPrescription> t2 = theorem42(p, 1.0, 1e-5, 10);
      Result<TheoremPrescription> t4 = theorem44(p, 1.0, 1e-5, 10);
      QVERIFY(t2.isOk() && t4.isOk());
      QVERIFY(t2->correctedBound < previousBound);
      QVERIFY(t2->lemma.total < previousLemma);
      QVERIFY(t4->statedBound < previousDecreasing);
      previousBound = t2->correctedBound;
      previousLemma = t2->lemma.total;
      previousDecreasing = t4->statedBound;
      // With more data the privacy part vanishes and Lemma 4.1's ξ² floor βηξ²/λ = ξ²/(2λ) = 2 stays.
      QVERIFY(t2->lemma.total > 2.0);
    }
    double previous = 0.0;
    for (double d : {1.0, 10.0, 100.0, 1000.0}) {
      LangevinProblem p = smallProblem();
      p.records = 100000;
      p.dimension = d;
      Result<TheoremPrescription> t1 = theorem41(p, {8.0, 1.0}, 10);
      Result<TheoremPrescription> t3 = theorem43(p, {8.0, 1.0}, 10);
      QVERIFY(t1.isOk() && t3.isOk());
      QVERIFY(t1->statedBound > previous);
      QVERIFY(t3->lemma.total > 0.0);
      previous = t1->statedBound;
    }
  }

  // The closed forms bound the exact sums: Lemma 4.1's recursion ≤ its closed form (always), and
  // Lemma 4.2's exact sum ≤ its printed form when ξ² ≤ βλD₀/2 (here D₀ = 4L²/λ², ξ² ≤ L²).
  void exactSumsBelowClosedForms_data() {
    QTest::addColumn<double>("beta");
    QTest::addColumn<double>("lambda");
    QTest::addColumn<double>("xi2");
    QTest::addColumn<double>("steps");
    for (double beta : {1.0, 55.0}) {
      for (double lambda : {1e-3, 0.1}) {
        for (double xi2 : {0.0, 0.3, 1.0}) {
          for (double steps : {1.0, 10.0, 1e3, 1e6}) {
            QTest::newRow(qPrintable(QStringLiteral("β %1 λ %2 ξ² %3 K %4").arg(beta).arg(lambda).arg(xi2).arg(steps)))
                << beta << lambda << xi2 << steps;
          }
        }
      }
    }
  }
  void exactSumsBelowClosedForms() {
    QFETCH(double, beta);
    QFETCH(double, lambda);
    QFETCH(double, xi2);
    QFETCH(double, steps);
    LangevinProblem p = smallProblem();
    p.beta = beta;
    p.lambda = lambda;
    p.xi2 = xi2;
    for (double eta : {1.0 / (2.0 * beta), 0.1 / beta}) {
      Result<Lemma41Bound> r = lemma41(p, {LangevinSchedule::kConstant, eta, steps, 1e-3});
      QVERIFY(r.isOk());
      QVERIFY(r->recursion.total <= r->closedForm->total * (1.0 + 1e-14));
      QVERIFY(r->printed->total <= r->closedForm->total);
      QVERIFY(r->recursion.initial <= r->closedForm->initial * (1.0 + 1e-14));
    }
    Result<Lemma42Bound> l = lemma42(p, steps, 1e-3);
    QVERIFY(l.isOk());
    QVERIFY(l->exactSum.total <= l->closedForm.total);
    QVERIFY(l->exactSum.gradientNoise <= l->closedForm.gradientNoise + 2.0 * xi2 / (2.0 * beta) / steps);
  }

  // Lemma 4.2 (decreasing step, average) against Lemma 4.1 (constant η = 1/(2β), last iterate):
  // its ξ² part vanishes with K like log(K)/K while the constant step keeps βηξ²/λ.
  void decreasingRemovesTheGradientNoiseFloor() {
    const LangevinProblem p = smallProblem();
    double previous = std::numeric_limits<double>::infinity();
    for (double steps : {1e2, 1e4, 1e6, 1e8}) {
      Result<Lemma42Bound> dec = lemma42(p, steps, 1e-4);
      Result<Lemma41Bound> con = lemma41(p, {LangevinSchedule::kConstant, 0.5, steps, 1e-4});
      QVERIFY(dec.isOk() && con.isOk());
      QVERIFY(dec->exactSum.gradientNoise < previous);
      previous = dec->exactSum.gradientNoise;
      if (steps >= 1e4) QVERIFY(dec->exactSum.gradientNoise < con->recursion.gradientNoise);
    }
    QVERIFY(previous < 1e-5);
  }

  // ---------------------------------------------------------------- errors
  void invalidInputsAreRefused_data() {
    QTest::addColumn<int>("field");
    QTest::addColumn<double>("value");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mention");
    const int invalid = int(StatusCode::kInvalidArgument);
    const int notApplicable = int(StatusCode::kNotApplicable);
    QTest::newRow("λ = 0") << 1 << 0.0 << notApplicable << "λ = 0";
    QTest::newRow("λ < 0") << 1 << -0.5 << invalid << "lambda = -0.5";
    QTest::newRow("λ > β") << 1 << 2.0 << invalid << "exceeds beta";
    QTest::newRow("β = 0") << 0 << 0.0 << invalid << "beta = 0";
    QTest::newRow("β NaN") << 0 << std::nan("") << invalid << "beta";
    QTest::newRow("L = 0") << 2 << 0.0 << invalid << "L = 0";
    QTest::newRow("n = 0") << 3 << 0.0 << invalid << "n = 0";
    QTest::newRow("d = 0") << 4 << 0.0 << invalid << "d = 0";
    QTest::newRow("d fractional") << 4 << 2.5 << invalid << "whole number";
    QTest::newRow("ξ² < 0") << 5 << -1.0 << invalid << "xi2 = -1";
    QTest::newRow("ξ² infinite") << 5 << std::numeric_limits<double>::infinity() << invalid << "xi2";
    QTest::newRow("D₀ < 0") << 6 << -1.0 << invalid << "init-distance2";
  }
  void invalidInputsAreRefused() {
    QFETCH(int, field);
    QFETCH(double, value);
    QFETCH(int, code);
    QFETCH(QString, mention);
    LangevinProblem p = smallProblem();
    switch (field) {
      case 0:
        p.beta = value;
        break;
      case 1:
        p.lambda = value;
        break;
      case 2:
        p.lipschitz = value;
        break;
      case 3:
        p.records = static_cast<std::int64_t>(value);
        break;
      case 4:
        p.dimension = value;
        break;
      case 5:
        p.xi2 = value;
        break;
      default:
        p.initialDistanceSquared = value;
        break;
    }
    const Status statuses[] = {lemma41(p, {LangevinSchedule::kConstant, 0.1, 10.0, 0.01}).status(),
                               lemma42(p, 10.0, 0.01).status(),
                               theorem41(p, {2.0, 1.0}, 1).status(),
                               theorem42(p, 1.0, 1e-5, 1).status(),
                               theorem43(p, {2.0, 1.0}, 1).status(),
                               theorem44(p, 1.0, 1e-5, 1).status()};
    for (const Status& s : statuses) {
      QCOMPARE(int(s.code()), code);
      QVERIFY2(QString::fromStdString(s.message()).contains(mention), s.message().c_str());
    }
  }

  void statementsThatDoNotApply() {
    const LangevinProblem p = smallProblem();
    // η > 1/(2β): Lemma 4.1's proof needs 2η(ηβ − 1) ≤ −η.
    Result<Lemma41Bound> big = lemma41(p, {LangevinSchedule::kConstant, 0.6, 10.0, 0.01});
    QCOMPARE(big.status().code(), StatusCode::kNotApplicable);
    QVERIFY2(big.status().message().find("1/(2β) = 0.5") != std::string::npos, big.status().message().c_str());
    // η = 1/(2β) exactly is allowed (Thm 4.1's step).
    QVERIFY(lemma41(p, {LangevinSchedule::kConstant, 0.5, 10.0, 0.01}).isOk());
    // ε > 2log(1/δ) = 2log(100) = 9.21: Thm 4.2 and 4.4 do not apply.
    for (const Status& s : {theorem42(p, 9.3, 0.01, 10).status(), theorem44(p, 9.3, 0.01, 10).status()}) {
      QCOMPARE(s.code(), StatusCode::kNotApplicable);
      QVERIFY2(s.message().find("2·log(1/δ) = 9.21034037") != std::string::npos, s.message().c_str());
    }
    QVERIFY(theorem42(p, 9.2, 0.01, 10).isOk());
    // εn²/(αd) ≤ 1: Thm 4.1's K = (2β/λ)log(·) is not positive. n = 4, d = 10, α = 2: 16/20.
    LangevinProblem tiny = p;
    tiny.records = 4;
    Result<TheoremPrescription> t = theorem41(tiny, {2.0, 1.0}, 1);
    QCOMPARE(t.status().code(), StatusCode::kNotApplicable);
    QVERIFY2(t.status().message().find("log(0.8)") != std::string::npos, t.status().message().c_str());
    // Thm 4.3 has no such limit: K = max((β/λ)x, (λ/β)x²) = 8·0.8 = 6.4 → 7.
    Result<TheoremPrescription> t3 = theorem43(tiny, {2.0, 1.0}, 1);
    QVERIFY(t3.isOk());
    QCOMPARE(t3->steps, 7.0);
  }

  void invalidRunsAndTargets() {
    const LangevinProblem p = smallProblem();
    auto code = [](const Status& s) { return s.code(); };
    QCOMPARE(code(lemma41(p, {LangevinSchedule::kConstant, 0.1, 0.0, 0.01}).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(lemma41(p, {LangevinSchedule::kConstant, 0.1, 2.5, 0.01}).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(lemma41(p, {LangevinSchedule::kConstant, 0.0, 10.0, 0.01}).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(lemma41(p, {LangevinSchedule::kConstant, 0.1, 10.0, -1.0}).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(lemma42(p, 0.0, 0.01).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(theorem41(p, {1.0, 1.0}, 10).status()), StatusCode::kInvalidArgument);   // α ≤ 1
    QCOMPARE(code(theorem41(p, {2.0, 0.0}, 10).status()), StatusCode::kInvalidArgument);   // ε ≤ 0
    QCOMPARE(code(theorem41(p, {2.0, 1.0}, 101).status()), StatusCode::kInvalidArgument);  // m > n
    QCOMPARE(code(theorem42(p, 1.0, 0.0, 10).status()), StatusCode::kInvalidArgument);     // δ = 0
    QCOMPARE(code(theorem42(p, 1.0, 1.0, 10).status()), StatusCode::kInvalidArgument);     // δ = 1
    QCOMPARE(code(theorem44(p, -1.0, 0.01, 10).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(rdpPairForDp(1.0, 2.0).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(noiseMultiplierForLangevin(0.1, 1.0, 0, 0.5).status()), StatusCode::kInvalidArgument);
    QCOMPARE(code(utility::table4Ratio(1.0, 0.0, 100, 10.0, {2.0, 1.0}).status()), StatusCode::kNotApplicable);
    const Status s = lemma41(p, {LangevinSchedule::kConstant, 0.1, 0.0, 0.01}).status();
    QVERIFY2(s.message().find("K = 0") != std::string::npos && s.message().find("≥ 1") != std::string::npos,
             s.message().c_str());
  }

  // Nothing non-finite leaves: extreme inputs give a value or a status.
  void extremeInputsStayFinite() {
    LangevinProblem p = smallProblem();
    p.lambda = 1e-300;
    p.beta = 1e300;
    p.records = std::int64_t{1} << 62;
    p.dimension = 1.0;
    for (const Status& s : {theorem41(p, {2.0, 1.0}, 1).status(), theorem43(p, {2.0, 1.0}, 1).status(),
                            theorem42(p, 1.0, 1e-5, 1).status(), lemma42(p, 1e18, 1e-300).status(),
                            lemma41(p, {LangevinSchedule::kDecreasing, 0.0, 1e18, 1.0}).status()}) {
      QVERIFY(s.isOk() || s.code() == StatusCode::kNumericalIssue || s.code() == StatusCode::kNotApplicable);
    }
    Result<TheoremPrescription> t = theorem43(p, {2.0, 1.0}, 1);
    if (t.isOk()) {
      for (double v : {t->sigmaL2, t->steps, t->statedBound, t->lemma.total}) QVERIFY(std::isfinite(v));
    }
  }

  // ---------------------------------------------------------------- data-dependent inputs
  void batchSecondMomentByHand() {
    // ‖ḡ‖² = 0.25, v = 2, n = 10: m = 3: 0.25 + (7/(3·9))·2 = 0.7685185185; m = 1: ‖ḡ‖² + v = 2.25;
    // m = n: 0.25 (no sampling noise).
    DPX_COMPARE_REL(*batchGradientSecondMoment(0.25, 2.0, 10, 3), 0.7685185185185185, 1e-15);
    DPX_COMPARE_REL(*batchGradientSecondMoment(0.25, 2.0, 10, 1), 2.25, 1e-15);
    DPX_COMPARE_REL(*batchGradientSecondMoment(0.25, 2.0, 10, 10), 0.25, 0.0);
    QCOMPARE(batchGradientSecondMoment(0.25, 2.0, 10, 11).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(batchGradientSecondMoment(-0.25, 2.0, 10, 2).status().code(), StatusCode::kInvalidArgument);
  }

  // ξ² of estimateUtilityInputs against the expectation enumerated over every batch, with the
  // per-record gradients taken one record at a time.
  void xi2MatchesEveryBatch() {
    const training::Dataset data = dpx::test::clusters(7, 3, 3, 11);
    const double lambda = 0.05;
    UtilityInputOptions options;
    options.optimum.lambda = lambda;
    options.optimum.gradientTolerance = 1e-5;
    options.batchSize = 3;
    Result<UtilityInputs> in = estimateUtilityInputs(data, options);
    QVERIFY2(in.isOk(), in.status().message().c_str());
    QCOMPARE(in->dimension, 12.0);  // (3 + 1)·3
    QCOMPARE(in->records, std::int64_t{7});
    const training::SoftmaxModel& model = in->optimum.model;
    const std::vector<float> norms = training::squaredRowNorms(data.features);
    training::GradientWorkspace ws;
    std::vector<Eigen::VectorXd> g;
    for (std::int64_t i = 0; i < 7; ++i) {
      Eigen::VectorXf one;
      const std::int64_t batch[] = {i};
      training::clippedGradientSum(model, data, norms, batch, std::numeric_limits<double>::infinity(), ws, one);
      g.push_back(one.cast<double>() + lambda * model.parameters().cast<double>());
    }
    double sum = 0.0;
    int batches = 0;
    for (int a = 0; a < 7; ++a) {
      for (int b = a + 1; b < 7; ++b) {
        for (int c = b + 1; c < 7; ++c) {
          sum += ((g[a] + g[b] + g[c]) / 3.0).squaredNorm();
          ++batches;
        }
      }
    }
    QCOMPARE(batches, 35);
    DPX_COMPARE_REL(in->xi2, sum / batches, 1e-5);
  }

  void fitCertifiesTheOptimum() {
    const training::Dataset data = dpx::test::clusters(400, 8, 4, 5);
    OptimumOptions o;
    o.lambda = 0.01;
    o.gradientTolerance = 1e-5;
    Result<FittedOptimum> f = fitOptimum(data, o);
    QVERIFY2(f.isOk(), f.status().message().c_str());
    QVERIFY(f->converged);
    QVERIFY(f->gradientNorm <= 1e-5);
    DPX_COMPARE_REL(f->objectiveAtZero, std::log(4.0), 1e-6);  // F(0) = log C
    QVERIFY(f->objective < f->objectiveAtZero);
    DPX_COMPARE_REL(f->distanceBound, f->gradientNorm / 0.01, 1e-12);
    // ‖θ*‖ ≤ L/λ for the data part's Lipschitz constant √2·√(R² + 1) = 2 at unit-norm rows.
    QVERIFY(f->optimumNormBound <= 2.0 / 0.01);
    // The first-order condition at θ*: λθ* = −(1/n)Σ∇CEᵢ, so ‖θ̂‖ ≈ ‖mean data gradient‖/λ.
    Result<GradientSpread> s = gradientSpread(data, f->model, 0.01);
    QVERIFY(s.isOk());
    QVERIFY(s->meanSquaredNorm <= 4e-10);  // ‖∇F(θ̂)‖² at the tolerance 10⁻⁵
    QVERIFY(s->variance > 0.0 && s->variance <= 2.0 * 2.0);
    // Clipping at a small norm shrinks the spread.
    Result<GradientSpread> clipped = gradientSpread(data, f->model, 0.01, 0.05);
    QVERIFY(clipped.isOk());
    QVERIFY(clipped->variance <= 0.05 * 0.05);
    QVERIFY(clipped->variance < s->variance);
    QCOMPARE(fitOptimum(data, {0.0, 100, 1e-6}).status().code(), StatusCode::kNotApplicable);
    QCOMPARE(fitOptimum(data, {-1.0, 100, 1e-6}).status().code(), StatusCode::kInvalidArgument);
    QCOMPARE(fitOptimum(data, {0.1, 0, 1e-6}).status().code(), StatusCode::kInvalidArgument);
  }

  void initialDistanceFromTheOptimum() {
    // R = L/λ = 8; θ₀ spread 2dσ²/λ = 2·10·0.0064/0.125 = 1.024 < R² = 64; ‖θ*‖ ≤ 3:
    // D₀ = 1.024 + 9 = 10.024 (against the worst case 4R² = 256).
    LangevinProblem p = smallProblem();
    p.optimumNorm = 3.0;
    DPX_COMPARE_REL(*initialDistanceSquared(p, 0.0064), 10.024, 1e-14);
    // A bound above R is capped at R, a spread above R² at R²: 64 + 64.
    p.optimumNorm = 100.0;
    DPX_COMPARE_REL(*initialDistanceSquared(p, 1e3), 128.0, 1e-14);
    p.optimumNorm.reset();
    DPX_COMPARE_REL(*initialDistanceSquared(p, 1e3), 256.0, 1e-14);
    p.initialDistanceSquared = 7.0;
    DPX_COMPARE_REL(*initialDistanceSquared(p, 1e3), 7.0, 0.0);
  }
};

QTEST_GUILESS_MAIN(TestLangevinUtility)
#include "tst_langevin_utility.moc"
