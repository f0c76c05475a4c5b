// A run in phases (accounting/phased_run.h): one phase is the knob run's computation; composition
// is monotone (a run with one more phase is less private than either part) and subadditive at the
// summed δ; a run written in pieces is the run written whole; the orders RDP ≥ PLD upper ≥ PLD
// lower hold; q = 1 is the Gaussian mechanism (Dong, Roth & Su 2019: μ = √K/σ); every field is
// validated with the phase, field and bound in the message; random-allocation phases compose
// with Gaussian ones in the exact accountant (1-of-1 allocation is the Gaussian mechanism, so such
// a mixed run must agree with the all-Gaussian one) and are refused by name in RDP.
#include <QTest>
#include <cmath>
#include <string>
#include <vector>

#include "accounting/gdp_accountant.h"
#include "accounting/phased_run.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "common/params.h"
#include "test_util.h"

using namespace dpx::core::accounting;
using dpx::core::Params;
using dpx::core::StatusCode;

namespace {

// Small runs (a few hundred steps): a composition takes tens of milliseconds.
const GaussianPhase kWarmUp{0.01, 1.0, 400};
const GaussianPhase kFineTune{0.02, 1.5, 300};

double pldUpper(const std::vector<Phase>& phases, double delta) {
  auto e = phasedPldEpsilon(phases, delta, {});
  if (!e) qWarning("%s", e.status().message().c_str());
  return e ? *e->epsilonUpper : NAN;
}

double pldLower(const std::vector<Phase>& phases, double delta) {
  auto e = phasedPldEpsilon(phases, delta, {});
  return e ? *e->epsilonLower : NAN;
}

double rdpEpsilon(const std::vector<Phase>& phases, double delta) {
  auto e = phasedRdpEpsilon(phases, delta, {});
  if (!e) qWarning("%s", e.status().message().c_str());
  return e ? e->epsilon : NAN;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TstPhasedRun : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The RDP of one phase is the rdp accountant's: the same per-step values times K, the same
  // order search (MNIST of Abadi et al. 2016: q = 256/60000, σ = 1.1, K = 14063).
  void onePhaseRdpIsTheKnobRun() {
    Params p;
    p.n = 60000;
    p.m = 256;
    p.sigma = 1.1;
    p.K = 14063;
    const std::vector<Phase> phases{GaussianPhase{p.q(), p.sigma, p.K}};
    for (Conversion conversion : {Conversion::kImproved, Conversion::kClassic}) {
      EpsilonOptions o;
      o.conversion = conversion;
      auto knob = accountantOf<RdpAccountant>().epsilon(p, o);
      auto phased = phasedRdpEpsilon(phases, p.delta, o);
      QVERIFY(knob && phased);
      QCOMPARE(phased->epsilon, knob->epsilon);
      QCOMPARE(*phased->alpha, *knob->alpha);
      auto knobDelta = accountantOf<RdpAccountant>().delta(p, 2.0, o);
      auto phasedDelta = phasedRdpDelta(phases, 2.0, o);
      QVERIFY(knobDelta && phasedDelta);
      QCOMPARE(*phasedDelta, *knobDelta);
    }
    auto total = phasedRdp(phases, 8.0);
    auto knob = accountantOf<RdpAccountant>().rdp(p, 8.0);
    QVERIFY(total && knob);
    QCOMPARE(*total, *knob);
  }

  // The PLD of one phase: Δ chosen as the knob run's, and the composition at that Δ is the
  // uncached composition of the same segment, to the last bit.
  void onePhasePldIsTheKnobRun() {
    Params p;
    p.n = 10000;
    p.m = 100;
    p.sigma = 1.0;
    p.K = 400;
    const std::vector<Phase> phases{GaussianPhase{p.q(), p.sigma, p.K}};
    auto phased = phasedPldEpsilon(phases, p.delta, {});
    QVERIFY2(phased, phased.status().message().c_str());
    double interval = 0.0;
    for (const NativeValue& v : phased->native) {
      if (v.key == "discretisation") interval = v.value;
    }
    QVERIFY(interval > 0.0);
    const pld::GaussianSegment segment{p.q(), p.sigma, p.K};
    auto direct = pldComposeSegments(std::span<const pld::GaussianSegment>(&segment, 1), interval);
    QVERIFY(direct);
    QCOMPARE(*phased->epsilonUpper, *direct->epsilonUpper(p.delta));
    QCOMPARE(*phased->epsilonLower, std::min(*direct->epsilonLower(p.delta), *direct->epsilonUpper(p.delta)));
    // And the accountant's answer for the knobs is the same number.
    auto knob = accountantOf<PldAccountant>().epsilon(p);
    QVERIFY(knob);
    QCOMPARE(knob->epsilon, phased->epsilon);
    QVERIFY(*phased->epsilonLower <= *phased->epsilonUpper);
    QVERIFY(*phased->epsilonUpper - *phased->epsilonLower <= 0.01 * *phased->epsilonUpper);
  }

  // ε(A then B) ≥ ε(A) and ≥ ε(B): the whole bracket of the composition lies above each part's
  // (B adds far more than the 1 % bracket width); and ε_{A+B}(2δ) ≤ ε_A(δ) + ε_B(δ) (basic
  // composition), from the lower end of the composition and the upper ends of the parts.
  void compositionIsMonotoneAndSubadditive() {
    const std::vector<Phase> a{kWarmUp};
    const std::vector<Phase> b{kFineTune};
    const std::vector<Phase> ab{kWarmUp, kFineTune};
    for (double delta : {1e-3, 1e-5, 1e-8}) {
      const QByteArray at = "δ = " + QByteArray::number(delta);
      QVERIFY2(pldLower(ab, delta) > pldUpper(a, delta), at);
      QVERIFY2(pldLower(ab, delta) > pldUpper(b, delta), at);
      QVERIFY2(pldLower(ab, 2.0 * delta) <= pldUpper(a, delta) + pldUpper(b, delta), at);
      QVERIFY2(rdpEpsilon(ab, delta) > rdpEpsilon(a, delta), at);
      QVERIFY2(rdpEpsilon(ab, delta) > rdpEpsilon(b, delta), at);
    }
    // More steps in either phase: more ε.
    const std::vector<Phase> longer{
        kWarmUp, GaussianPhase{kFineTune.samplingProbability, kFineTune.noiseMultiplier, kFineTune.steps * 3}};
    QVERIFY(pldLower(longer, 1e-5) > pldUpper(ab, 1e-5));
    QVERIFY(rdpEpsilon(longer, 1e-5) > rdpEpsilon(ab, 1e-5));
  }

  // Composition commutes: the phases in the other order give the same ε (the FFT products in
  // another order: equal to round-off).
  void orderOfPhasesDoesNotMatter() {
    const std::vector<Phase> ab{kWarmUp, kFineTune};
    const std::vector<Phase> ba{kFineTune, kWarmUp};
    DPX_COMPARE_REL(pldUpper(ba, 1e-5), pldUpper(ab, 1e-5), 1e-9);
    DPX_COMPARE_REL(rdpEpsilon(ba, 1e-5), rdpEpsilon(ab, 1e-5), 1e-12);
  }

  // Two halves are the whole, exactly: the same steps are merged before composing.
  void halvesAreTheWhole() {
    const GaussianPhase whole{0.01, 1.0, 800};
    const GaussianPhase half{0.01, 1.0, 400};
    const std::vector<Phase> halves{half, half};
    QCOMPARE(mergedPhases(halves), std::vector<Phase>{whole});
    auto segments = gaussianSegments(std::vector<Phase>{half, kFineTune, half});
    QVERIFY(segments);
    QCOMPARE(segments->size(), std::size_t{2});
    QCOMPARE(segments->front().count, std::int64_t{800});
    QCOMPARE(pldUpper(halves, 1e-5), pldUpper({whole}, 1e-5));
    QCOMPARE(rdpEpsilon(halves, 1e-5), rdpEpsilon({whole}, 1e-5));
    // Phases that differ are kept apart, in order.
    QCOMPARE(mergedPhases(std::vector<Phase>{half, kFineTune, half}).size(), std::size_t{3});
  }

  // RDP's conversion is an upper bound, looser than the exact composition; the PLD bracket is
  // ordered; δ(ε) at the upper ε is within δ.
  void boundsAreOrdered_data() {
    QTest::addColumn<double>("delta");
    QTest::newRow("δ = 1e-3") << 1e-3;
    QTest::newRow("δ = 1e-5") << 1e-5;
    QTest::newRow("δ = 1e-9") << 1e-9;
  }
  void boundsAreOrdered() {
    QFETCH(double, delta);
    const std::vector<Phase> ab{kWarmUp, kFineTune};
    const double rdp = rdpEpsilon(ab, delta);
    const double upper = pldUpper(ab, delta);
    const double lower = pldLower(ab, delta);
    QVERIFY2(rdp >= upper, QByteArray::number(rdp) + " < " + QByteArray::number(upper));
    QVERIFY(upper >= lower);
    auto deltas = phasedPldDelta(ab, upper, delta, {});
    QVERIFY(deltas);
    QVERIFY(deltas->first <= delta * (1.0 + 1e-9));
    QVERIFY(deltas->second <= deltas->first);
    auto rdpDelta = phasedRdpDelta(ab, rdp, {});
    QVERIFY(rdpDelta);
    QVERIFY(*rdpDelta <= delta * (1.0 + 1e-9));
  }

  // q = 1 (a Gaussian not under sampling) composed K times is the Gaussian mechanism with
  // μ = √K/σ (Dong, Roth & Su 2019, Cor. 3.3): δ(ε) of G_μ lies in the PLD bracket.
  void fullBatchIsTheGaussianMechanism() {
    const std::vector<Phase> phases{GaussianPhase{1.0, 4.0, 10}, GaussianPhase{1.0, 2.0, 3}};
    const double mu = std::sqrt(10.0 / 16.0 + 3.0 / 4.0);
    for (double eps : {0.5, 1.0, 2.0}) {
      auto bracket = phasedPldDelta(phases, eps, 1e-5, {});
      QVERIFY(bracket);
      const double exact = gdpDelta(mu, eps);
      QVERIFY2(bracket->first >= exact * (1.0 - 1e-9) && bracket->second <= exact * (1.0 + 1e-9),
               QByteArray::number(bracket->second) + " ≤ " + QByteArray::number(exact) + " ≤ " +
                   QByteArray::number(bracket->first));
    }
  }

  void invalidPhasesAreRefusedByFieldAndBound_data() {
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("steps");
    QTest::addColumn<QString>("expected");
    QTest::newRow("q = 0") << 0.0 << 1.0 << qint64{10} << "phase 2: sampling_probability = 0 must be in (0, 1]";
    QTest::newRow("q > 1") << 1.5 << 1.0 << qint64{10} << "phase 2: sampling_probability = 1.5 must be in (0, 1]";
    QTest::newRow("q NaN") << double(NAN) << 1.0 << qint64{10} << "phase 2: sampling_probability";
    QTest::newRow("σ = 0") << 0.5 << 0.0 << qint64{10} << "phase 2: noise_multiplier = 0 must be a finite number > 0";
    QTest::newRow("σ < 0") << 0.5 << -1.0 << qint64{10} << "phase 2: noise_multiplier = -1";
    QTest::newRow("σ = ∞") << 0.5 << double(INFINITY) << qint64{10} << "phase 2: noise_multiplier";
    QTest::newRow("steps = 0") << 0.5 << 1.0 << qint64{0} << "phase 2: steps = 0 must be ≥ 1";
    QTest::newRow("steps < 0") << 0.5 << 1.0 << qint64{-3} << "phase 2: steps = -3 must be ≥ 1";
  }
  void invalidPhasesAreRefusedByFieldAndBound() {
    QFETCH(double, q);
    QFETCH(double, sigma);
    QFETCH(qint64, steps);
    QFETCH(QString, expected);
    const std::vector<Phase> phases{kWarmUp, GaussianPhase{q, sigma, steps}};
    for (const dpx::core::Status& s :
         {validatePhases(phases), phasedPldEpsilon(phases, 1e-5, {}).status(),
          phasedRdpEpsilon(phases, 1e-5, {}).status(), phasedRdpDelta(phases, 1.0, {}).status()}) {
      QCOMPARE(s.code(), StatusCode::kInvalidArgument);
      QVERIFY2(contains(s.message(), expected.toStdString()), s.message().c_str());
    }
    QCOMPARE(validatePhases({}).code(), StatusCode::kInvalidArgument);
    QVERIFY(!phasedPldEpsilon(std::vector<Phase>{kWarmUp}, 0.0, {}));
    QVERIFY(!phasedPldDelta(std::vector<Phase>{kWarmUp}, -1.0, 1e-5, {}));
  }

  // Epochs of 1-of-1 allocation are steps of the Gaussian mechanism (q = 1): a Poisson phase
  // followed by them, composed by the random-allocation path on its own grid, must bracket the
  // same ε as the all-Gaussian run composed by the PLD accountant. A direction or estimate mixed
  // up between the two kinds of step would move one bracket off the other.
  void randomAllocationComposesWithGaussianPhases() {
    const RandomAllocationPhase gaussianEpochs{2.0, 1, 1, 20};
    const std::vector<Phase> mixed{kWarmUp, gaussianEpochs};
    const std::vector<Phase> allGaussian{kWarmUp, GaussianPhase{1.0, 2.0, 20}};
    auto viaAllocation = phasedPldEpsilon(mixed, 1e-5, {});
    auto viaPld = phasedPldEpsilon(allGaussian, 1e-5, {});
    QVERIFY2(viaAllocation.isOk(), viaAllocation.status().message().c_str());
    QVERIFY2(viaPld.isOk(), viaPld.status().message().c_str());
    qInfo("mixed [%.6f, %.6f], all Gaussian [%.6f, %.6f]", *viaAllocation->epsilonLower, *viaAllocation->epsilonUpper,
          *viaPld->epsilonLower, *viaPld->epsilonUpper);
    QVERIFY(*viaAllocation->epsilonLower <= *viaPld->epsilonUpper + 1e-9);
    QVERIFY(*viaPld->epsilonLower <= *viaAllocation->epsilonUpper + 1e-9);
    QVERIFY(*viaAllocation->epsilonUpper <= *viaPld->epsilonUpper * 1.02);
    // Monotone: the mixed run is less private than either of its parts (at any bracket width: a
    // coarse one keeps this quick).
    ExactOptions coarse;
    coarse.accuracy = 0.1;
    const RandomAllocationPhase allocation{2.0, 100, 10, 1};
    const std::vector<Phase> warmUpThenAllocation{kWarmUp, allocation};
    auto both = phasedPldEpsilon(warmUpThenAllocation, 1e-5, coarse);
    QVERIFY2(both.isOk(), both.status().message().c_str());
    for (const std::vector<Phase>& part : {std::vector<Phase>{kWarmUp}, std::vector<Phase>{allocation}}) {
      auto alone = phasedPldEpsilon(part, 1e-5, coarse);
      QVERIFY(alone.isOk());
      QVERIFY(*both->epsilonUpper >= *alone->epsilonLower);
    }
    // The order of the phases does not matter.
    auto reversed = phasedPldEpsilon(std::vector<Phase>{allocation, kWarmUp}, 1e-5, coarse);
    QVERIFY(reversed.isOk());
    QCOMPARE(reversed->epsilon, both->epsilon);
  }

  // A random-allocation phase is read and validated; alone it is the accountant's own run, and
  // RDP refuses it by name.
  void randomAllocationPhaseAloneAndInRdp() {
    const RandomAllocationPhase allocation{2.0, 100, 10, 1};
    const std::vector<Phase> phases{kWarmUp, allocation};
    QVERIFY(validatePhases(phases).isOk());
    QCOMPARE(phaseSteps(allocation), std::int64_t{100});
    // Alone (two pieces of one kind merge), random allocation is the accountant's own run:
    // epochs add, and the bracket holds dp_accounting pull request #414's ε ≈ 2.4265 at δ = 1e−6.
    const std::vector<Phase> alone{allocation};
    auto exact = phasedPldEpsilon(alone, 1e-6, {});
    QVERIFY2(exact.isOk(), exact.status().message().c_str());
    QVERIFY(*exact->epsilonLower <= 2.4265 * 1.005 && *exact->epsilonUpper >= 2.4265 * 0.995);
    const RandomAllocationPhase half{2.0, 100, 10, 1};
    auto twoEpochs = phasedPldEpsilon(std::vector<Phase>{half, half}, 1e-6, {});
    auto asOne = phasedPldEpsilon(std::vector<Phase>{RandomAllocationPhase{2.0, 100, 10, 2}}, 1e-6, {});
    QVERIFY(twoEpochs.isOk() && asOne.isOk());
    QCOMPARE(twoEpochs->epsilon, asOne->epsilon);
    QVERIFY(asOne->epsilon > exact->epsilon);
    auto rdp = phasedRdpEpsilon(phases, 1e-5, {});
    QCOMPARE(rdp.status().code(), StatusCode::kNotApplicable);
    QVERIFY(contains(rdp.status().message(), "phase 2 (random allocation"));
    // Its own bounds: 1 ≤ k ≤ t, t ≥ 1, E ≥ 1, σ > 0.
    auto refused = [](const RandomAllocationPhase& p, const std::string& part) {
      const dpx::core::Status s = validatePhase(p, 0);
      return !s.isOk() && contains(s.message(), "phase 1: " + part);
    };
    QVERIFY(refused({2.0, 10, 11, 1}, "selections k = 11 must be in [1, t = 10]"));
    QVERIFY(refused({2.0, 10, 0, 1}, "selections k = 0"));
    QVERIFY(refused({2.0, 0, 1, 1}, "steps per epoch t = 0"));
    QVERIFY(refused({2.0, 10, 1, 0}, "epochs = 0"));
    QVERIFY(refused({0.0, 10, 1, 1}, "noise_multiplier = 0"));
  }
};

QTEST_GUILESS_MAIN(TstPhasedRun)
#include "tst_phased_run.moc"
