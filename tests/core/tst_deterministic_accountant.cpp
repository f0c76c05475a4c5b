// `deterministic` (fixed-order batches, Chua et al. 2024): E passes are the E-fold Gaussian
// mechanism, μ = √E/σ. Expected values: the Gaussian mechanism's exact δ(ε) (Balle & Wang 2018,
// Thm 8) written out independently here, and how K splits into passes (batch_passes).
#include <QTest>
#include <cmath>

#include "accounting/batch_passes.h"
#include "accounting/deterministic_accountant.h"
#include "numerics/special_functions.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestDeterministicAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // δ(ε) = Φ(1/(2s) − sε) − e^ε Φ(−1/(2s) − sε) with s = σ/√E, at the ε the accountant returns.
  void epsilonSolvesTheGaussianMechanismsDelta() {
    const DeterministicAccountant a;
    for (double sigma : {0.5, 1.0, 2.0, 8.0}) {
      for (int epochs : {1, 3, 30}) {
        Params p;
        p.n = 60000;
        p.m = 256;
        p.sigma = sigma;
        p.delta = 1e-6;
        p.K = *stepsForEpochs(epochs, p.n, p.m);
        const auto e = a.epsilon(p);
        QVERIFY(e.isOk());
        QCOMPARE(e->bound, BoundKind::kUpper);
        const double s = sigma / std::sqrt(static_cast<double>(epochs));
        const double eps = e->epsilon;
        const double delta = numerics::normalCdf(1.0 / (2 * s) - s * eps) -
                             std::exp(eps) * numerics::normalCdf(-1.0 / (2 * s) - s * eps);
        DPX_COMPARE_REL(delta, 1e-6, 1e-6);
        DPX_COMPARE_REL(*a.delta(p, eps), 1e-6, 1e-6);
      }
    }
  }

  // Whole epochs stay whole passes (K = ⌈E·n/m⌉ need not be E·⌈n/m⌉); any other K is ⌊K/T⌋
  // passes and a remainder, charged as one more pass.
  void stepsSplitIntoPasses() {
    Params p;
    p.n = 60000;
    p.m = 256;
    p.K = *stepsForEpochs(15, p.n, p.m);  // 3516, while 15 passes of T = 235 are 3525 steps
    BatchPasses b = batchPasses(p);
    QCOMPARE(b.stepsPerEpoch, 235);
    QCOMPARE(b.fullEpochs, 15);
    QCOMPARE(b.partialSteps, 0);
    p.K = 500;
    b = batchPasses(p);
    QCOMPARE(b.fullEpochs, 2);
    QCOMPARE(b.partialSteps, 30);
    QCOMPARE(b.participations(), 3);
    DPX_COMPARE_REL(b.epochs(), 2.0 + 30.0 / 235.0, 1e-12);
    const auto native = DeterministicAccountant().native(p);
    QVERIFY(native.isOk());
    DPX_COMPARE_REL(native->front().value, std::sqrt(3.0) / p.sigma, 1e-12);
  }

  // The bound covers shuffled batches too (no violation), but not Poisson sampling.
  void coversShuffledButNotPoissonBatches() {
    Params p;
    p.sampling = Sampling::kShuffle;
    QVERIFY(DeterministicAccountant().check(p).empty());
    p.sampling = Sampling::kCyclic;
    QVERIFY(DeterministicAccountant().check(p).empty());
    p.sampling = Sampling::kPoisson;
    QCOMPARE(DeterministicAccountant().check(p).size(), std::size_t{1});
  }

  // ε grows with the passes and falls with σ, across the slider range.
  void monotone() {
    const DeterministicAccountant a;
    Params p;
    double previous = 0.0;
    for (std::int64_t K : {1, 235, 2350, 23500, 235000, 10'000'000}) {
      p.K = K;
      const double eps = a.epsilon(p)->epsilon;
      QVERIFY(eps >= previous);
      previous = eps;
    }
    previous = 1e300;
    for (double sigma : {0.05, 0.1, 1.0, 10.0, 100.0}) {
      p.sigma = sigma;
      const double eps = a.epsilon(p)->epsilon;
      QVERIFY(eps <= previous);
      previous = eps;
    }
  }
};

QTEST_APPLESS_MAIN(TestDeterministicAccountant)
#include "tst_deterministic_accountant.moc"
