// `pld`: exact composition by privacy loss distributions (Koskela, Jälkö & Honkela 2020; Doroshenko et al.
// 2022). Expected values:
// tests/data/dpsgd_mnist.json (Google dp_accounting's PLD accountant at Δ = 1e−4 and 1e−5),
// the Gaussian mechanism's closed form (q = 1 is exactly μ-GDP with μ = √K/σ), and properties.
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

#include "accounting/calibration.h"
#include "accounting/curves.h"
#include "accounting/gdp_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/tradeoff.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// The GUI's ε-vs-K axis at the default knobs: 24 log-spaced K from 1 to 10·K = 140630.
std::vector<std::int64_t> logSteps(double to, int points) {
  const Result<std::vector<double>> xs = curveAxis({CurveVariable::kSteps, 1.0, to, points, true});
  std::vector<std::int64_t> steps;
  for (double x : *xs) steps.push_back(static_cast<std::int64_t>(x));
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

}  // namespace

class TestPldAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void dpAccountingReference_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("epochs");
    QTest::addColumn<double>("pld4");
    QTest::addColumn<double>("pld5");
    QTest::addColumn<double>("rdpImproved");
    const QJsonArray cases =
        dpx::test::loadJson(QStringLiteral("dpsgd_mnist.json")).value(QStringLiteral("cases")).toArray();
    QVERIFY(cases.size() == 6);
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      QTest::newRow(
          qPrintable(QStringLiteral("dp_accounting PLD, reference %1").arg(c.value(QStringLiteral("id")).toString())))
          << c.value(QStringLiteral("sigma")).toDouble() << c.value(QStringLiteral("epochs")).toDouble()
          << c.value(QStringLiteral("eps_pld_1e-4")).toDouble() << c.value(QStringLiteral("eps_pld_1e-5")).toDouble()
          << c.value(QStringLiteral("eps_rdp_improved")).toDouble();
    }
  }
  void dpAccountingReference() {
    QFETCH(double, sigma);
    QFETCH(double, epochs);
    QFETCH(double, pld4);
    QFETCH(double, pld5);
    QFETCH(double, rdpImproved);
    Params p;
    p.sigma = sigma;
    p.K = *stepsForEpochs(epochs, p.n, p.m);
    PldAccountant pld;
    auto e = pld.epsilon(p);  // automatic Δ, 1 % bracket
    QVERIFY2(e.isOk(), e.status().message().c_str());
    DPX_COMPARE_REL(e->epsilon, pld5, 0.01);
    QVERIFY(*e->epsilonUpper >= *e->epsilonLower);
    QVERIFY2(*e->epsilonLower <= pld5 && pld5 <= *e->epsilonUpper, qPrintable(QStringLiteral("[%1, %2] ∌ %3")
                                                                                  .arg(*e->epsilonLower, 0, 'g', 10)
                                                                                  .arg(*e->epsilonUpper, 0, 'g', 10)
                                                                                  .arg(pld5, 0, 'g', 10)));
    QVERIFY((*e->epsilonUpper - *e->epsilonLower) <= 0.01 * *e->epsilonUpper);
    // At dp_accounting's own Δ = 1e−4 the pessimistic value is theirs, and the bracket holds both.
    EpsilonOptions fine;
    fine.exact.discretisation = 1e-4;
    auto f = pld.epsilon(p, fine);
    QVERIFY(f.isOk());
    DPX_COMPARE_REL(*f->epsilonUpper, pld4, 2e-6);
    QVERIFY(*f->epsilonLower <= pld5 && pld5 <= *f->epsilonUpper);
    // The tight answer is below the RDP bound on every row (Bu, Dong, Long & Su 2020, Table 1).
    QVERIFY(e->epsilon < rdpImproved);
    QVERIFY(e->epsilon < RdpAccountant().epsilon(p)->epsilon);
  }

  void gaussianMechanismIsExactlyGdp() {
    // q = 1: K steps of the Gaussian mechanism are μ-GDP with μ = √K/σ, exactly.
    Params p;
    p.n = 1000;
    p.m = 1000;
    p.sigma = 20.0;
    p.K = 100;
    auto e = PldAccountant().epsilon(p);
    QVERIFY(e.isOk());
    const double exact = *gdpEpsilon(std::sqrt(100.0) / 20.0, p.delta);
    QVERIFY2(*e->epsilonLower <= exact * (1 + 1e-9) && exact <= *e->epsilonUpper * (1 + 1e-9),
             qPrintable(QStringLiteral("[%1, %2] vs %3").arg(*e->epsilonLower).arg(*e->epsilonUpper).arg(exact)));
  }

  void singleStepBoundsTheTrueProfile() {
    for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
      const pld::SubsampledGaussianPair pair(0.01, 0.8, direction);
      auto up = pld::discretise(pair, 1e-3, pld::Estimate::kPessimistic, 1e-18);
      auto lo = pld::discretise(pair, 1e-3, pld::Estimate::kOptimistic, 1e-18);
      QVERIFY(up.isOk() && lo.isOk());
      double total = up->infinityMass();
      for (double m : up->masses()) {
        QVERIFY(m >= 0.0);
        total += m;
      }
      DPX_COMPARE_REL(total, 1.0, 1e-9);  // second differences of δ carry ~1e−13 of rounding each
      for (double eps = 0.0; eps < 3.0; eps += 0.0137) {
        const double truth = pair.hockeyStick(eps);
        QVERIFY2(up->delta(eps) >= truth - 1e-15, qPrintable(QString::number(eps)));
        QVERIFY2(lo->delta(eps) <= truth + 1e-15, qPrintable(QString::number(eps)));
      }
      // Connect the dots is exact at the grid points.
      for (int i = 0; i < 200; i += 7)
        DPX_COMPARE_REL(up->delta(i * 1e-3) + 1e-300, pair.hockeyStick(i * 1e-3) + 1e-300, 1e-9);
    }
  }

  void batchProfileAndHeadsAreTheScalarOnes() {
    // The pessimistic step reads δ and the heads F_P, F_Q of whole grids through the array
    // forms; each value must be the scalar one to within the vector functions' few ulp, on both
    // sides of the median, in the far tails and at losses outside (lossMin, lossMax).
    for (const double q : {1e-4, 0.004, 0.3, 1.0}) {
      for (const double sigma : {0.3, 1.0, 4.0}) {
        for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
          const pld::SubsampledGaussianPair pair(q, sigma, direction);
          std::vector<double> losses;
          const double lo = std::isfinite(pair.lossMin()) ? pair.lossMin() : -40.0;
          const double hi = std::isfinite(pair.lossMax()) ? pair.lossMax() : 40.0;
          for (int i = -3; i <= 1003; ++i) losses.push_back(lo + (hi - lo) * i / 1000.0);
          losses.push_back(pair.lossMin());
          losses.push_back(pair.lossMax());
          std::vector<double> deltas(losses.size()), headP(losses.size()), headQ(losses.size());
          pair.hockeySticks(losses, deltas);
          pair.headsAtLosses(losses, headP, headQ);
          const QString where = QStringLiteral("q %1 σ %2 %3")
                                    .arg(q)
                                    .arg(sigma)
                                    .arg(direction == pld::Direction::kRemove ? "remove" : "add");
          for (std::size_t i = 0; i < losses.size(); ++i) {
            const double l = losses[i];
            const QString at = where + QStringLiteral(" ℓ %1").arg(l, 0, 'g', 17);
            const double truth = pair.hockeyStick(l);
            // δ = P-tail − e^ε·Q-tail loses digits to cancellation where the two are close: the
            // tails' own few ulp, carried over, bound the difference. A tail Φ(z) moves by z²
            // times a relative change of its x (ulp of the inverse loss): far in the tails,
            // below any mass a step keeps, the digits thin out accordingly.
            const bool inside = l > pair.lossMin() && l < pair.lossMax();
            const double z = inside ? std::fabs(pair.inverseLoss(l)) / sigma + 1.0 : 1.0;
            const double tolerance = 1e-13 + 1e-15 * z * z;
            double tailP = 0.0, tailQ = 0.0;
            if (inside) pair.survival(pair.inverseLoss(l), tailP, tailQ);
            const double scale = std::max(std::fabs(truth), tailP + std::exp(l) * tailQ);
            QVERIFY2(std::fabs(deltas[i] - truth) <= tolerance * scale + 1e-300, qPrintable(at));
            double p = 0.0, qq = 0.0;
            if (l >= pair.lossMax()) {
              p = qq = 1.0;
            } else if (l > pair.lossMin()) {
              pair.distribution(pair.inverseLoss(l), p, qq);
            }
            QVERIFY2(std::fabs(headP[i] - p) <= tolerance * p + 1e-300, qPrintable(at));
            QVERIFY2(std::fabs(headQ[i] - qq) <= tolerance * qq + 1e-300, qPrintable(at));
          }
        }
      }
    }
  }

  void densitySlopesAreTheDensitiesDerivatives() {
    // The optimistic sweep extrapolates a bin's masses from its first evaluation with these
    // slopes (Taylor to second order): they must be the derivatives of the densities it uses.
    for (const double q : {0.004, 0.3, 1.0}) {
      for (const double sigma : {0.2, 1.0, 4.0}) {
        for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
          const pld::SubsampledGaussianPair pair(q, sigma, direction);
          for (double x = -6.0 * sigma; x <= 6.0 * sigma + 1.0; x += 0.37 * sigma) {
            double p = 0.0, qd = 0.0, pSlope = 0.0, qSlope = 0.0, pAlone = 0.0, qAlone = 0.0;
            pair.density(x, p, qd, pSlope, qSlope);
            pair.density(x, pAlone, qAlone);
            DPX_COMPARE_REL(p, pAlone, 1e-14);
            DPX_COMPARE_REL(qd, qAlone, 1e-14);
            const double h = 1e-5 * sigma;
            double pHi = 0.0, qHi = 0.0, pLo = 0.0, qLo = 0.0;
            pair.density(x + h, pHi, qHi);
            pair.density(x - h, pLo, qLo);
            // Central differences: error ~h²·p‴/6, against a slope of order p/σ.
            QVERIFY2(std::fabs(pSlope - (pHi - pLo) / (2 * h)) <= 1e-6 * p / sigma + 1e-300,
                     qPrintable(QStringLiteral("q %1 σ %2 x %3").arg(q).arg(sigma).arg(x)));
            QVERIFY2(std::fabs(qSlope - (qHi - qLo) / (2 * h)) <= 1e-6 * qd / sigma + 1e-300,
                     qPrintable(QStringLiteral("q %1 σ %2 x %3").arg(q).arg(sigma).arg(x)));
          }
        }
      }
    }
  }

  void optimisticStepIsValidOnEveryGridAndTightOnFineOnes() {
    // The quantisation's bins aggregate exactly to grid losses (a sliver bin just below a grid
    // point is merged into the next, two steps wide): below the true profile on coarse, shifted
    // (Δ > −log(1 − q)) and fine grids, in both directions; on fine grids also above the true
    // profile moved by three grid steps. (On coarse grids the upper tail's last bin, which
    // cannot average up to the next grid point, is rounded down as a whole.) "Below" holds to
    // round-off: δ at a loss sums up to ~40 000 masses at Δ = 1e−4, ~2e−14 of δ (√n ulp), and
    // the true profile p − e^ε q cancels digits of its own; a bin placed one grid step above its
    // loss would exceed it by ~Δ·δ, 1e−6 of δ.
    for (const double interval : {0.5, 0.05, 1e-3, 1e-4}) {
      for (const double q : {0.004, 0.3}) {
        for (const double sigma : {0.6, 1.0, 3.0}) {
          for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
            const pld::SubsampledGaussianPair pair(q, sigma, direction);
            auto lo = pld::discretise(pair, interval, pld::Estimate::kOptimistic, 1e-18);
            QVERIFY2(lo.isOk(), lo.status().message().c_str());
            for (double eps = 0.0; eps < 4.0; eps += 0.0371) {
              const QString at = QStringLiteral("Δ %1 q %2 σ %3 direction %4 ε %5")
                                     .arg(interval)
                                     .arg(q)
                                     .arg(sigma)
                                     .arg(static_cast<int>(direction))
                                     .arg(eps);
              const double truth = pair.hockeyStick(eps);
              QVERIFY2(lo->delta(eps) <= truth * (1.0 + 1e-13) + 1e-15, qPrintable(at));
              if (interval <= 1e-3)
                QVERIFY2(lo->delta(eps) >= pair.hockeyStick(eps + 3.0 * interval) - 1e-12, qPrintable(at));
            }
          }
        }
      }
    }
  }

  void profileOnlyPldAnswersAsItsMassesDoAndRefusesTheRest() {
    // A composed run keeps δ's tables written over its FFT buffer, not its masses: the same δ and
    // ε to the last bit as the PLD built from the masses, and a clear refusal where masses are
    // needed (reversing the pair, composing it again).
    auto step = pld::discretise(pld::SubsampledGaussianPair(0.01, 0.9, pld::Direction::kRemove), 1e-3,
                                pld::Estimate::kPessimistic, 1e-18);
    QVERIFY(step.isOk());
    const std::vector<double>& w = step->masses();
    std::shared_ptr<double[]> buffer(new double[w.size() + 1]);
    std::copy(w.begin(), w.end(), buffer.get());
    const pld::DiscretePld tables = pld::DiscretePld::profileOnly(step->interval(), step->firstIndex(), buffer,
                                                                  w.size(), step->infinityMass(), 0.0);
    QCOMPARE(tables.size(), step->size());
    QVERIFY(!tables.hasMasses() && step->hasMasses() && tables.masses().empty());
    for (double eps = 0.0; eps < 3.0; eps += 0.0173) QCOMPARE(tables.delta(eps), step->delta(eps));
    for (double delta : {0.3, 1e-3, 1e-6, 1e-9}) QCOMPARE(*tables.epsilon(delta), *step->epsilon(delta));
    const pld::DiscretePld copy = tables;  // copies share the tables
    QCOMPARE(copy.delta(0.5), tables.delta(0.5));
    const auto reverse = pld::reversed(tables);
    QVERIFY(!reverse.isOk());
    QVERIFY(QString::fromStdString(reverse.status().message()).contains(QStringLiteral("masses")));
    const pld::Segment again{&tables, 2};
    const auto composed = pld::compose(std::span<const pld::Segment>(&again, 1), pld::Estimate::kPessimistic, 1e-15);
    QVERIFY(!composed.isOk());
    QVERIFY(QString::fromStdString(composed.status().message()).contains(QStringLiteral("masses")));
    const pld::DiscretePld empty =
        pld::DiscretePld::profileOnly(1e-3, 0, std::shared_ptr<double[]>(new double[1]), 0, 0.25, 0.0);
    QCOMPARE(empty.delta(0.0), 0.25);
    QVERIFY(!empty.epsilon(1e-3).isOk());
  }

  void spectralRunAgreesWithItsInverseTransform() {
    // A long run keeps the frequencies that survive the K-th power and reads δ's tail sums from
    // them in closed form, with no inverse transform. Against the masses of the same composition
    // (compose(), the inverse transform with negative round-off clamped to 0): the same δ up to
    // that clamping, which turns the K-fold amplified round-off of the spectrum (smooth, a
    // fraction of a mass per point) into an upward bias: ~1e−13 here, up to ~1e−11 at K = 10⁶.
    // The tables (the inverse, for callers reading δ at every loss) agree as closely, and making
    // them changes nothing the run itself answers.
    const double tau = PldAccountant::kTruncation;
    const double interval = 1e-4;
    const std::int64_t steps = 10000;
    const pld::GaussianSegment segment{0.004, 1.0, steps};
    auto run = pld::composeRun(std::span<const pld::GaussianSegment>(&segment, 1), interval, tau, true);
    QVERIFY(run.isOk());
    std::vector<double> epsilons;
    for (double eps = 0.0; eps < 8.0; eps += 0.0371) epsilons.push_back(eps);
    const std::vector<double> deltas{0.1, 1e-5, 1e-8};
    std::vector<double> spectral, spectralEpsilons;
    for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
      for (int e = 0; e < 2; ++e) {
        const auto estimate = e == 0 ? pld::Estimate::kPessimistic : pld::Estimate::kOptimistic;
        const pld::DiscretePld& inRun = (direction == pld::Direction::kRemove ? run->remove : run->add)[e];
        QVERIFY(inRun.keepsSpectrum());
        auto base = pld::discretise(pld::SubsampledGaussianPair(0.004, 1.0, direction), interval, estimate,
                                    pld::stepTruncation(tau, steps));
        QVERIFY(base.isOk());
        const pld::Segment s{&*base, steps};
        auto masses = pld::compose(std::span<const pld::Segment>(&s, 1), estimate, tau);
        QVERIFY(masses.isOk());
        for (double eps : epsilons) {
          spectral.push_back(inRun.delta(eps));
          QVERIFY2(std::fabs(spectral.back() - masses->delta(eps)) <= 1e-10, qPrintable(QString::number(eps)));
        }
        // ε moves with δ's difference over δ: ~1e−13 of clamping at δ = 1e−8 is 4e−7 of ε here
        // (1.4e−6 in the sanitizer builds, which round without FMA).
        for (double delta : deltas) {
          const Result<double> fromSpectrum = inRun.epsilon(delta);
          const Result<double> fromMasses = masses->epsilon(delta);
          QVERIFY(fromSpectrum.isOk() && fromMasses.isOk());
          spectralEpsilons.push_back(*fromSpectrum);
          DPX_COMPARE_REL(*fromSpectrum, *fromMasses, 1e-5);
        }
      }
    }
    const pld::ComposedRun tables = run->tabulated();  // the run's copies share their spectra
    const pld::DiscretePld* const inRun[] = {&run->remove[0], &run->remove[1], &run->add[0], &run->add[1]};
    const pld::DiscretePld* const inTables[] = {&tables.remove[0], &tables.remove[1], &tables.add[0], &tables.add[1]};
    std::size_t next = 0, nextEpsilon = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      QVERIFY(inRun[k]->keepsSpectrum() && !inTables[k]->keepsSpectrum());
      for (double eps : epsilons) {
        QVERIFY2(std::fabs(inTables[k]->delta(eps) - spectral[next]) <= 1e-10, qPrintable(QString::number(eps)));
        QCOMPARE(inRun[k]->delta(eps), spectral[next++]);
      }
      for (double delta : deltas) QCOMPARE(*inRun[k]->epsilon(delta), spectralEpsilons[nextEpsilon++]);
    }
    // Segments of different noise: the spectrum is the product's.
    const pld::GaussianSegment schedule[] = {{0.004, 1.0, 4000}, {0.004, 1.6, 3000}};
    auto mixed = pld::composeRun(std::span<const pld::GaussianSegment>(schedule), interval, tau, true);
    QVERIFY(mixed.isOk());
    const pld::ComposedRun mixedTables = mixed->tabulated(pld::Estimate::kPessimistic);
    for (int e = 0; e < 2; ++e) {
      for (const pld::DiscretePld* p : {&mixed->remove[e], &mixed->add[e]}) {
        const pld::DiscretePld& t = (p == &mixed->remove[e] ? mixedTables.remove : mixedTables.add)[e];
        QVERIFY(p->keepsSpectrum());
        QCOMPARE(t.keepsSpectrum(), e == 1);  // only the pessimistic PLDs were tabulated
        for (double eps : epsilons) {
          QVERIFY2(std::fabs(t.tables().delta(eps) - p->delta(eps)) <= 1e-10, qPrintable(QString::number(eps)));
        }
      }
    }
    // A short run, most of whose frequencies survive, is tabulated as it is composed.
    const pld::GaussianSegment shortRun{0.004, 1.0, 3};
    auto few = pld::composeRun(std::span<const pld::GaussianSegment>(&shortRun, 1), 1e-3, tau, true);
    QVERIFY(few.isOk());
    QVERIFY(!few->remove[0].keepsSpectrum() && !few->add[1].keepsSpectrum());
  }

  void longRunsComposeFromTheSurvivingBand() {
    // At K = 10⁶ (q = 0.004, σ = 1, Δ = 1e−3) about 120 of the 51 201 frequencies survive the
    // K-th power: a run computes them by chirp-z from each step's ~5 000 points instead of a
    // transform of its 10⁵-point window. Against the full composition (compose(): every
    // frequency, then the inverse transform), both directions and estimates: δ at every ε ≥ 0
    // and ε at three δ, to the round-off the K-th power amplifies in both (the step's spectrum
    // carries ~3e−16 from the full transform, ~6e−16 from chirp-z; ×K).
    const double tau = PldAccountant::kTruncation;
    const std::int64_t steps = 1'000'000;
    const pld::GaussianSegment segment{0.004, 1.0, steps};
    auto run = pld::composeRun(std::span<const pld::GaussianSegment>(&segment, 1), 1e-3, tau, true);
    QVERIFY(run.isOk());
    QVERIFY2(run->info.bandFrequencies > 0 && run->info.bandFrequencies < 500,
             qPrintable(QString::number(run->info.bandFrequencies)));
    for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
      for (int e = 0; e < 2; ++e) {
        const auto estimate = e == 0 ? pld::Estimate::kPessimistic : pld::Estimate::kOptimistic;
        const pld::DiscretePld& inRun = (direction == pld::Direction::kRemove ? run->remove : run->add)[e];
        QVERIFY(inRun.keepsSpectrum());
        auto base = pld::discretise(pld::SubsampledGaussianPair(0.004, 1.0, direction), 1e-3, estimate,
                                    pld::stepTruncation(tau, steps));
        QVERIFY(base.isOk());
        const pld::Segment s{&*base, steps};
        auto full = pld::compose(std::span<const pld::Segment>(&s, 1), estimate, tau);
        QVERIFY(full.isOk());
        for (double eps = 0.0; eps < 70.0; eps += 0.7) {
          QVERIFY2(std::fabs(inRun.delta(eps) - full->delta(eps)) <= 1e-9, qPrintable(QString::number(eps)));
        }
        // ε moves with δ's error over δ: at δ = 1e−8 the ~1e−11 the power leaves in both moves it
        // by up to 5e−4 (the full transform's own spectrum differs from compose() by 6e−5 there),
        // and by 2.5e−3 for the add direction's optimistic composition, whose δ(0) is already
        // below 1e−5 here: its δ = 1e−8 lies on a thin tail at ε ≈ 6 (the run's lower end comes
        // from the remove direction's, ε ≈ 35), read where the step's round-off, K-fold, is a
        // larger share of it.
        DPX_COMPARE_REL(*inRun.epsilon(1e-3), *full->epsilon(1e-3), 2e-6);
        DPX_COMPARE_REL(*inRun.epsilon(1e-5), *full->epsilon(1e-5), 2e-6);
        const bool thinTail = direction == pld::Direction::kAdd && estimate == pld::Estimate::kOptimistic;
        DPX_COMPARE_REL(*inRun.epsilon(1e-8), *full->epsilon(1e-8), thinTail ? 5e-3 : 1e-3);
      }
    }
    // A schedule of two noise levels: the frequencies both powers leave alive, and their product.
    const pld::GaussianSegment schedule[] = {{0.004, 1.0, 600'000}, {0.004, 1.6, 400'000}};
    auto mixed = pld::composeRun(std::span<const pld::GaussianSegment>(schedule), 1e-3, tau, false);
    QVERIFY(mixed.isOk());
    QVERIFY(mixed->info.bandFrequencies > 0);
    for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
      std::vector<pld::DiscretePld> bases;
      for (const pld::GaussianSegment& g : schedule) {
        bases.push_back(*pld::discretise(pld::SubsampledGaussianPair(g.q, g.sigma, direction), 1e-3,
                                         pld::Estimate::kPessimistic, pld::stepTruncation(tau, g.count)));
      }
      const pld::Segment parts[] = {{&bases[0], schedule[0].count}, {&bases[1], schedule[1].count}};
      auto full = pld::compose(std::span<const pld::Segment>(parts), pld::Estimate::kPessimistic, tau);
      QVERIFY(full.isOk());
      const pld::DiscretePld& inRun = (direction == pld::Direction::kRemove ? mixed->remove : mixed->add)[0];
      for (double eps = 0.0; eps < 50.0; eps += 0.5) {
        QVERIFY2(std::fabs(inRun.delta(eps) - full->delta(eps)) <= 1e-9, qPrintable(QString::number(eps)));
      }
    }
  }

  void bandPathFindsEverySurvivingFrequency() {
    // A step on every other grid point has |z(θ + π)| = |z(θ)|: its K-th power survives near
    // the Nyquist frequency as well as near 0, and the composed masses sit on even indices only.
    // The band path must find both bands (missing the second would smear the masses onto odd
    // indices and move δ by far more than round-off).
    std::vector<double> masses(81, 0.0);
    double total = 0.0;
    for (int i = 0; i < 81; i += 2) {
      const double z = (i - 42) / 10.0;  // indices −40 … 40, the bump at +2
      masses[static_cast<std::size_t>(i)] = std::exp(-0.5 * z * z);
      total += masses[static_cast<std::size_t>(i)];
    }
    for (double& m : masses) m /= total;
    const pld::DiscretePld lattice(1e-2, -40, masses, 0.0);
    const double tau = 1e-20;
    const pld::Segment s{&lattice, 100'000};
    pld::CompositionInfo info;
    auto band =
        pld::composeNonNegative(std::span<const pld::Segment>(&s, 1), pld::Estimate::kPessimistic, tau, {}, &info);
    auto full = pld::compose(std::span<const pld::Segment>(&s, 1), pld::Estimate::kPessimistic, tau);
    QVERIFY(band.isOk() && full.isOk());
    QVERIFY2(info.bandFrequencies > 0, "the band path was not taken");
    QVERIFY(band->keepsSpectrum());
    double largest = 0.0;
    for (double eps = 1800.0; eps < 2200.0; eps += 0.37) {
      largest = std::max(largest, full->delta(eps));
      QVERIFY2(std::fabs(band->delta(eps) - full->delta(eps)) <= 1e-9, qPrintable(QString::number(eps)));
    }
    QVERIFY(largest > 0.1);  // the range read holds the bulk of the composed losses

    // A step with nearly all its mass on one point: |z| stays near 1 at every frequency, the
    // band would be the whole spectrum, and the full transform is made instead.
    std::vector<double> peaked(41, 1e-7);
    peaked[20] = 1.0 - 40e-7;
    const pld::DiscretePld spike(1e-2, -19, peaked, 0.0);
    const pld::Segment p{&spike, 10'000};
    auto declined =
        pld::composeNonNegative(std::span<const pld::Segment>(&p, 1), pld::Estimate::kPessimistic, tau, {}, &info);
    auto reference = pld::compose(std::span<const pld::Segment>(&p, 1), pld::Estimate::kPessimistic, tau);
    QVERIFY(declined.isOk() && reference.isOk());
    QCOMPARE(info.bandFrequencies, std::size_t{0});
    for (double eps = 0.0; eps < 20.0; eps += 0.25) {
      QVERIFY2(std::fabs(declined->delta(eps) - reference->delta(eps)) <= 1e-9, qPrintable(QString::number(eps)));
    }
  }

  // The composed window comes from Chernoff bounds whose λ is searched on approximate moments:
  // whatever λ the search settles on, the mass the window leaves out on each side must stay
  // within τ/2. Checked against the exact K-fold convolution of small runs, with τ large enough
  // for the cut to fall where masses are, including steps whose far end alone holds more than
  // τ (a one-step run; the quantised step of a tiny rate, nearly all its mass on one point).
  void composedWindowLeavesOutAtMostTauPerSide() {
    const double tau = 1e-9;
    for (const double q : {1e-3, 0.02, 0.5}) {
      for (const double sigma : {0.6, 1.5}) {
        for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
          for (auto estimate : {pld::Estimate::kPessimistic, pld::Estimate::kOptimistic}) {
            const pld::SubsampledGaussianPair pair(q, sigma, direction);
            const auto step = pld::discretise(pair, 1e-2, estimate, 1e-14);
            QVERIFY(step.isOk());
            std::vector<double> exact = step->masses();
            std::int64_t first = step->firstIndex();
            for (const std::int64_t count : {1, 2, 4, 8}) {
              while (first != count * step->firstIndex()) {  // one more convolution
                std::vector<double> next(exact.size() + step->masses().size() - 1, 0.0);
                for (std::size_t i = 0; i < exact.size(); ++i)
                  for (std::size_t j = 0; j < step->masses().size(); ++j) next[i + j] += exact[i] * step->masses()[j];
                exact = std::move(next);
                first += step->firstIndex();
              }
              const pld::Segment segment{&*step, count};
              pld::CompositionInfo info;
              const auto composed = pld::compose(std::span(&segment, 1), estimate, tau, {}, &info);
              QVERIFY(composed.isOk());
              // An optimistic step's losses sit lossOffset below its grid; the composition rounds
              // the composed offset down onto the grid, one shift of the whole window.
              const auto shift = static_cast<std::int64_t>(
                  std::floor(static_cast<double>(count) * step->lossOffset() / step->interval()));
              const std::int64_t lo = composed->firstIndex() - shift - first;
              const std::int64_t hi = lo + static_cast<std::int64_t>(composed->size()) - 1;
              double below = 0.0, above = 0.0;
              for (std::int64_t i = 0; i < static_cast<std::int64_t>(exact.size()); ++i) {
                if (i < lo) below += exact[static_cast<std::size_t>(i)];
                if (i > hi) above += exact[static_cast<std::size_t>(i)];
              }
              const QString at = QStringLiteral("q %1 σ %2 %3 %4 K %5: out below %6, above %7")
                                     .arg(q)
                                     .arg(sigma)
                                     .arg(direction == pld::Direction::kRemove ? "remove" : "add")
                                     .arg(estimate == pld::Estimate::kPessimistic ? "pessimistic" : "optimistic")
                                     .arg(count)
                                     .arg(below)
                                     .arg(above);
              QVERIFY2(below <= 0.5 * tau * (1 + 1e-9) && above <= 0.5 * tau * (1 + 1e-9), qPrintable(at));
              QVERIFY2(lo >= 0 || count == 1, qPrintable(at));  // a window inside the full range
            }
          }
        }
      }
    }
  }

  void stepsAreSharedWithinAPowerOfTen() {
    // A step composed K times may drop τ/(4K); it drops τ/(4·10^⌈log₁₀ K⌉), the same for a decade
    // of K, so the points of an ε-vs-K curve share their discretised steps.
    const double tau = 1e-20;
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, std::int64_t{9}, std::int64_t{10}, std::int64_t{11},
                           std::int64_t{999}, std::int64_t{1000}, std::int64_t{123456}, std::int64_t{1'000'000'000}}) {
      const double truncation = pld::stepTruncation(tau, k);
      QVERIFY2(truncation <= tau / (4.0 * static_cast<double>(k)), qPrintable(QString::number(k)));
      QVERIFY2(truncation > tau / (40.0 * static_cast<double>(k)), qPrintable(QString::number(k)));
    }
    QCOMPARE(pld::stepTruncation(tau, 11), pld::stepTruncation(tau, 100));
    QVERIFY(pld::stepTruncation(tau, 101) < pld::stepTruncation(tau, 100));
    // A run at K = 40 equals the point K = 40 of a curve on its grid (which composed K = 70 first,
    // from the same steps).
    Params p;
    p.sigma = 1.05;
    const std::vector<std::int64_t> steps{40, 70, 5000};
    auto curve = pldEpsilonCurve(p, steps, {});
    QVERIFY2(curve.isOk(), curve.status().message().c_str());
    const pld::GaussianSegment alone{p.q(), p.sigma, 40};
    auto run = pldComposeSegments(std::span<const pld::GaussianSegment>(&alone, 1), curve->discretisation);
    QVERIFY(run.isOk());
    QCOMPARE(*curve->points[0].epsilonUpper, *run->epsilonUpper(p.delta));
    QCOMPARE(*curve->points[0].epsilonLower, std::min(*run->epsilonLower(p.delta), *run->epsilonUpper(p.delta)));
  }

  void pessimisticMassesBelowZeroAreNotRoundingNoise() {
    // Far below 0, δ(ε) ≈ 1 and its second differences are rounding noise (~1e−16/Δ) where the
    // true masses are ~1e−27: the masses there come from the P- and Q-masses of the loss
    // intervals. Each is at most P(ε_{i−1} < L ≤ ε_{i+1}) (its two brackets are at most P_{i+1}
    // and P_i), and the masses still add up to 1.
    const pld::SubsampledGaussianPair pair(0.004, 1.0, pld::Direction::kAdd);
    auto up = pld::discretise(pair, 1e-4, pld::Estimate::kPessimistic, 2.5e-24);
    QVERIFY(up.isOk());
    const std::vector<double>& w = up->masses();
    double total = up->infinityMass();
    for (double mass : w) total += mass;
    DPX_COMPARE_REL(total, 1.0, 1e-10);  // 2e−12 off in the sanitizer builds; the noise added 1.2e−8
    std::size_t checked = 0;
    for (std::size_t i = 1; i + 1 < w.size() && up->loss(i + 1) < -0.5; i += 37, ++checked) {
      const double bound = pair.massP(pair.inverseLoss(up->loss(i - 1)), pair.inverseLoss(up->loss(i + 1)));
      QVERIFY2(w[i] <= bound * (1.0 + 1e-6) + 1e-300,
               qPrintable(QStringLiteral("loss %1: mass %2 > %3").arg(up->loss(i)).arg(w[i]).arg(bound)));
    }
    QVERIFY(checked > 500);
  }

  void bracketAlwaysOrdered() {
    PldAccountant pld;
    for (double sigma : {0.4, 0.8, 2.0, 6.0}) {
      for (std::int64_t K : {1, 50, 5000}) {
        Params p;
        p.sigma = sigma;
        p.K = K;
        p.m = 600;
        auto e = pld.epsilon(p);
        QVERIFY2(e.isOk(), e.status().message().c_str());
        QVERIFY(*e->epsilonUpper >= *e->epsilonLower);
        QVERIFY(std::isfinite(*e->epsilonUpper));
        auto d = pld.delta(p, e->epsilon);
        QVERIFY(d.isOk());
        QVERIFY(*d <= p.delta * (1 + 1e-6));
      }
    }
  }

  void approachesGaussianDpAsNoiseGrows() {
    // At fixed μ = 1 (K chosen per σ), the subsampled Gaussian's trade-off tends to G_μ.
    const std::vector<double> grid = defaultTypeOneGrid(80);
    double previousGap = 1.0;
    for (double sigma : {0.7, 1.5, 4.0}) {
      Params p;
      p.n = 100000;
      p.m = 1000;
      p.sigma = sigma;
      const double q = p.q();
      p.K = static_cast<std::int64_t>(std::llround(1.0 / (q * q * std::expm1(1.0 / (sigma * sigma)))));
      const double mu = *gdpMu(q, sigma, static_cast<double>(p.K));
      EpsilonOptions fine;
      fine.exact.accuracy = 1e-3;
      auto curve = PldAccountant().tradeoff(p, grid, fine);
      QVERIFY2(curve.isOk(), curve.status().message().c_str());
      double gap = 0.0;
      for (std::size_t i = 0; i < grid.size(); ++i) {
        gap = std::max(gap, std::fabs(curve->typeTwo[i] - gaussianTradeoff(mu, grid[i])));
      }
      qInfo("σ = %g, K = %lld, μ = %g: max |PLD − G_μ| = %g", sigma, static_cast<long long>(p.K), mu, gap);
      QVERIFY2(gap < previousGap, qPrintable(QStringLiteral("σ=%1 gap %2").arg(sigma).arg(gap)));
      previousGap = gap;
    }
    QVERIFY(previousGap < 0.005);
  }

  void monotoneInStepsAndNoiseOnAFixedGrid() {
    // With Δ fixed the pessimistic composition of one more step cannot lower δ (the first K
    // steps are a post-processing of K + 1), and more noise cannot raise it.
    PldAccountant pld;
    EpsilonOptions o;
    o.exact.discretisation = 2e-3;
    double previous = 0.0;
    for (std::int64_t K : {1, 10, 100, 1000, 10000}) {
      Params p;
      p.K = K;
      const double eps = pld.epsilon(p, o)->epsilon;
      QVERIFY2(eps >= previous, qPrintable(QStringLiteral("K=%1").arg(K)));
      previous = eps;
    }
    previous = INFINITY;
    for (double sigma : {0.5, 0.8, 1.2, 3.0, 10.0}) {
      Params p;
      p.sigma = sigma;
      const double eps = pld.epsilon(p, o)->epsilon;
      QVERIFY2(eps <= previous, qPrintable(QStringLiteral("σ=%1").arg(sigma)));
      previous = eps;
    }
  }

  void calibrationIsConservative() {
    for (double target : {1.0, 4.0}) {
      auto c = calibrateSigma(PldAccountant(), Params{}, target);
      QVERIFY2(c.isOk(), c.status().message().c_str());
      Params p;
      p.sigma = c->sigma;
      QVERIFY(PldAccountant().epsilon(p)->epsilon <= target);
    }
  }

  void tradeoffLiesBetweenZeroAndIdentity() {
    auto curve = PldAccountant().tradeoff(Params{}, defaultTypeOneGrid(50));
    QVERIFY(curve.isOk());
    for (std::size_t i = 0; i < curve->typeOne.size(); ++i) {
      QVERIFY(curve->typeTwo[i] >= 0.0 && curve->typeTwo[i] <= 1.0 - curve->typeOne[i] + 1e-12);
    }
  }

  void heterogeneousCompositionAddsUp() {
    const std::vector<pld::GaussianSegment> split{{0.01, 1.0, 300}, {0.01, 1.0, 700}};
    const std::vector<pld::GaussianSegment> whole{{0.01, 1.0, 1000}};
    auto a = pldComposeSegments(split, 1e-3);
    auto b = pldComposeSegments(whole, 1e-3);
    QVERIFY(a.isOk() && b.isOk());
    DPX_COMPARE_REL(*a->epsilonUpper(1e-5), *b->epsilonUpper(1e-5), 1e-6);
    // The same on a window large enough for FFTW's (in-place) transforms, where the product of
    // the segments' spectra is copied to where the inverse transform reads.
    const std::vector<pld::GaussianSegment> longSplit{{0.01, 1.0, 3000}, {0.01, 1.0, 7000}};
    const std::vector<pld::GaussianSegment> longWhole{{0.01, 1.0, 10000}};
    auto fineSplit = pldComposeSegments(longSplit, 1e-4);
    auto fineWhole = pldComposeSegments(longWhole, 1e-4);
    QVERIFY(fineSplit.isOk() && fineWhole.isOk());
    QVERIFY(fineSplit->info.fftSize >= (std::size_t{1} << 17));
    DPX_COMPARE_REL(*fineSplit->epsilonUpper(1e-5), *fineWhole->epsilonUpper(1e-5), 1e-6);
    DPX_COMPARE_REL(*fineSplit->epsilonLower(1e-5), *fineWhole->epsilonLower(1e-5), 1e-6);
    // More noise on part of the run lands between the two homogeneous runs.
    const std::vector<pld::GaussianSegment> mixed{{0.01, 1.0, 500}, {0.01, 2.0, 500}};
    const std::vector<pld::GaussianSegment> quiet{{0.01, 2.0, 1000}};
    auto m = pldComposeSegments(mixed, 1e-3);
    auto qq = pldComposeSegments(quiet, 1e-3);
    QVERIFY(*m->epsilonUpper(1e-5) < *b->epsilonUpper(1e-5));
    QVERIFY(*m->epsilonUpper(1e-5) > *qq->epsilonUpper(1e-5));
  }

  void progressAndCancellation() {
    Params p;
    p.sigma = 0.93;  // not cached by another test
    std::vector<double> seen;
    EpsilonOptions o;
    o.exact.progress = [&](double f) { seen.push_back(f); };
    QVERIFY(PldAccountant().epsilon(p, o).isOk());
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back(), 1.0);
    for (double f : seen) QVERIFY(f >= 0.0 && f <= 1.0);

    std::atomic<bool> cancel{true};
    EpsilonOptions c;
    c.exact.cancel = &cancel;
    p.sigma = 0.94;
    auto r = PldAccountant().epsilon(p, c);
    QVERIFY(!r.isOk());
    QCOMPARE(r.status().code(), StatusCode::kCancelled);
  }

  // pldEpsilonCurve: the ε bracket along K on one loss grid, for `dpx curve` and the GUI.
  void curveOnOneGridIsMonotoneAndBracketed() {
    const Params p;
    const std::vector<std::int64_t> steps = logSteps(140630, 24);
    QCOMPARE(steps.size(), std::size_t(24));
    const auto start = std::chrono::steady_clock::now();
    auto curve = pldEpsilonCurve(p, steps);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(curve.isOk(), curve.status().message().c_str());
    qInfo(
        "24-point pld curve to K = 140630: %.0f ms (first in the process: includes choosing Δ), Δ = %g, width at "
        "K = 140630: %g",
        ms, curve->discretisation, curve->achievedWidth);
    QVERIFY(curve->automatic);
    QCOMPARE(curve->gridSteps, std::int64_t(140630));
    QVERIFY(curve->discretisation > 0.0 && curve->discretisation <= 1.0);
    QCOMPARE(curve->requestedWidth, 0.01);
    QVERIFY(curve->achievedWidth >= 0.0 && curve->achievedWidth <= 0.01);
    QVERIFY2(curve->firstError().isOk(), curve->firstError().message().c_str());
    QCOMPARE(curve->points.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const PldCurvePoint& point = curve->points[i];
      QCOMPARE(point.steps, steps[i]);
      QVERIFY(point.error.isOk());
      QVERIFY(point.epsilonUpper && point.epsilonLower);
      QVERIFY(std::isfinite(*point.epsilonUpper) && std::isfinite(*point.epsilonLower));
      QVERIFY(*point.epsilonLower >= 0.0 && *point.epsilonLower <= *point.epsilonUpper);
      if (i == 0) continue;
      // On one grid both compositions are monotone in K exactly (K steps are a post-processing
      // of K + 1); FFT round-off could only show in the last digits.
      const PldCurvePoint& before = curve->points[i - 1];
      QVERIFY2(*point.epsilonUpper >= *before.epsilonUpper * (1 - 1e-12), qPrintable(QString::number(point.steps)));
      QVERIFY2(*point.epsilonLower >= *before.epsilonLower * (1 - 1e-12), qPrintable(QString::number(point.steps)));
    }
    // The largest K is PldAccountant's own automatic answer there (the run that chose Δ).
    Params top = p;
    top.K = 140630;
    auto e = PldAccountant().epsilon(top);
    QVERIFY(e.isOk());
    QCOMPARE(*curve->points.back().epsilonUpper, e->epsilon);
    QCOMPARE(*curve->points.back().epsilonLower, *e->epsilonLower);
  }

  void curvePointsAreTheAccountantOnTheSameGrid() {
    // Each point is PldAccountant::epsilon at its K with discretisation = the curve's Δ: the same
    // composition (same grid, truncation and FFT length), so equal up to FFT round-off, which
    // the tolerance 1e−12 (relative) allows for; in practice the values are bit-identical.
    Params p;
    p.sigma = 0.9;
    const std::vector<std::int64_t> steps{3000, 1, 7, 50, 400, 20000};
    for (std::optional<double> fixed : {std::optional<double>(), std::optional<double>(2e-3)}) {
      ExactOptions options;
      options.discretisation = fixed;
      auto curve = pldEpsilonCurve(p, steps, options);
      QVERIFY2(curve.isOk(), curve.status().message().c_str());
      QCOMPARE(curve->automatic, !fixed.has_value());
      if (fixed) QCOMPARE(curve->discretisation, *fixed);
      if (!fixed) QCOMPARE(curve->gridSteps, std::int64_t(20000));
      EpsilonOptions same;
      same.exact.discretisation = curve->discretisation;
      for (const PldCurvePoint& point : curve->points) {
        Params at = p;
        at.K = point.steps;
        auto e = PldAccountant().epsilon(at, same);
        QVERIFY2(e.isOk(), e.status().message().c_str());
        QVERIFY(point.epsilonUpper && point.epsilonLower);
        DPX_COMPARE_REL(*point.epsilonUpper, e->epsilon, 1e-12);
        DPX_COMPARE_REL(*point.epsilonLower, *e->epsilonLower, 1e-12);
      }
    }
  }

  void curveKeepsTheOrderGivenAndRepeats() {
    const std::vector<std::int64_t> steps{50, 5, 50, 1};
    auto curve = pldEpsilonCurve(Params{}, steps);
    QVERIFY(curve.isOk());
    QCOMPARE(curve->points.size(), std::size_t(4));
    for (std::size_t i = 0; i < steps.size(); ++i) QCOMPARE(curve->points[i].steps, steps[i]);
    QCOMPARE(*curve->points[0].epsilonUpper, *curve->points[2].epsilonUpper);
    QVERIFY(*curve->points[3].epsilonUpper < *curve->points[1].epsilonUpper);
    QVERIFY(*curve->points[1].epsilonUpper < *curve->points[0].epsilonUpper);
  }

  void curveProgressAndCancellation() {
    Params p;
    p.sigma = 0.97;  // a run no other test caches
    const std::vector<std::int64_t> steps = logSteps(30000, 12);
    std::vector<double> seen;
    ExactOptions options;
    options.progress = [&](double f) { seen.push_back(f); };
    QVERIFY(pldEpsilonCurve(p, steps, options).isOk());
    QVERIFY(seen.size() > 2);
    QCOMPARE(seen.back(), 1.0);
    for (std::size_t i = 0; i < seen.size(); ++i) {
      QVERIFY(seen[i] >= 0.0 && seen[i] <= 1.0);
      if (i > 0) QVERIFY(seen[i] >= seen[i - 1]);
    }

    // Cancelled before it starts, and half-way (from the progress callback, as the GUI's job does).
    std::atomic<bool> cancel{true};
    ExactOptions cancelled;
    cancelled.cancel = &cancel;
    p.sigma = 0.98;
    auto r = pldEpsilonCurve(p, steps, cancelled);
    QVERIFY(!r.isOk());
    QCOMPARE(r.status().code(), StatusCode::kCancelled);
    cancel = false;
    cancelled.progress = [&](double f) {
      if (f > 0.5) cancel = true;
    };
    p.sigma = 0.99;
    r = pldEpsilonCurve(p, steps, cancelled);
    QVERIFY(!r.isOk());
    QCOMPARE(r.status().code(), StatusCode::kCancelled);
  }

  void coarseGridOptimisticStepIsNotDegenerate() {
    // σ = 0.05, q = 256/60000, K = 10⁶: each step's loss is ≈ log(1 − q) without the example and
    // ≈ 200 with it, so the automatic grid is coarse (Δ = 0.5 > −log(1 − q)). The optimistic
    // quantisation on the unshifted grid put every step at loss 0 (bracket [0, ε]); shifted, the
    // bracket is narrow, nested around the finer one at Δ = 0.1, and found in seconds.
    Params p;
    p.sigma = 0.05;
    p.K = 1'000'000;
    const auto start = std::chrono::steady_clock::now();
    auto e = PldAccountant().epsilon(p);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(e.isOk(), e.status().message().c_str());
    QVERIFY2(seconds < 10.0, qPrintable(QString::number(seconds)));
    QVERIFY(std::isfinite(*e->epsilonUpper) && std::isfinite(*e->epsilonLower));
    QVERIFY(*e->epsilonLower > 0.99 * *e->epsilonUpper);
    EpsilonOptions finer;
    finer.exact.discretisation = 0.1;
    auto f = PldAccountant().epsilon(p, finer);
    QVERIFY2(f.isOk(), f.status().message().c_str());
    QVERIFY(*e->epsilonLower <= *f->epsilonLower && *f->epsilonUpper <= *e->epsilonUpper);
    QVERIFY(*f->epsilonLower <= *f->epsilonUpper);
    // Below the RDP bound, as every tight answer.
    QVERIFY(e->epsilon < RdpAccountant().epsilon(p)->epsilon);
  }

  void shiftedOptimisticStepStaysBelowTheTrueProfile() {
    // Δ ≥ −log(1 − q): the optimistic step lives on a grid shifted just above its smallest loss,
    // and stays a lower bound. (Here the components overlap, so the grid is still too coarse for
    // the quantisation to say more than δ = 0: valid, not tight.)
    const pld::SubsampledGaussianPair pair(0.01, 0.2, pld::Direction::kRemove);
    auto lo = pld::discretise(pair, 0.05, pld::Estimate::kOptimistic, 1e-18);
    QVERIFY(lo.isOk());
    QVERIFY(lo->lossOffset() < 0.0 && lo->lossOffset() > -0.05);
    for (double eps = 0.0; eps < 20.0; eps += 0.0137) {
      QVERIFY2(lo->delta(eps) <= pair.hockeyStick(eps) + 1e-15, qPrintable(QString::number(eps)));
    }
  }

  void runSharesOneTransformAndMatchesSeparateCompositions() {
    // composeRun composes its four PLDs side by side on one transform size; each equals the
    // composition of its step alone (its own size) up to FFT round-off, which the K-th power
    // of the spectrum amplifies to ~1e−9 here (~1e−7 at K = 10⁶), at every ε ≥ 0.
    const pld::GaussianSegment segment{0.004, 1.0, 20000};
    auto run = pld::composeRun(std::span<const pld::GaussianSegment>(&segment, 1), 2e-4, 1e-20, true);
    QVERIFY(run.isOk());
    for (auto direction : {pld::Direction::kRemove, pld::Direction::kAdd}) {
      for (int e = 0; e < 2; ++e) {
        const auto estimate = e == 0 ? pld::Estimate::kPessimistic : pld::Estimate::kOptimistic;
        auto base = pld::discretise(pld::SubsampledGaussianPair(0.004, 1.0, direction), 2e-4, estimate, 1e-20 / 80000);
        QVERIFY(base.isOk());
        const pld::Segment s{&*base, 20000};
        auto alone = pld::compose(std::span<const pld::Segment>(&s, 1), estimate, 1e-20);
        QVERIFY(alone.isOk());
        const pld::DiscretePld& inRun = (direction == pld::Direction::kRemove ? run->remove : run->add)[e];
        DPX_COMPARE_REL(*inRun.epsilon(1e-5), *alone->epsilon(1e-5), 1e-7);
        DPX_COMPARE_REL(inRun.delta(1.0), alone->delta(1.0), 1e-7);
        // A run keeps the losses ≥ 0 only (grid index ≥ 0), all that δ(ε ≥ 0) reads.
        QVERIFY(alone->firstIndex() < 0);
        QVERIFY(inRun.firstIndex() >= 0);
        QVERIFY(inRun.size() < alone->size());
        QVERIFY(!inRun.hasMasses() && alone->hasMasses());
        // (FFT round-off is absolute: about 2e−12 at every ε here.)
        for (double eps = 0.0; eps < 6.0; eps += 0.25) {
          QVERIFY2(std::fabs(inRun.delta(eps) - alone->delta(eps)) <= 1e-7 * alone->delta(eps) + 1e-11,
                   qPrintable(QString::number(eps)));
        }
      }
    }
    QVERIFY(*run->epsilonLower(1e-5) <= *run->epsilonUpper(1e-5));
  }

  void curvePointsFailOneByOne() {
    // A caller-fixed Δ too fine for the largest K: that point fails with the memory guard's
    // reason (it is not coarsened), the others are computed. q = 1, σ = 0.05: each step's loss
    // has mean 200 and spread 20, so 10⁷ steps need a window of ~10⁸ points at Δ = 0.01.
    Params p;
    p.n = 1000;
    p.m = 1000;
    p.sigma = 0.05;
    ExactOptions fine;
    fine.discretisation = 0.01;
    const std::vector<std::int64_t> steps{1, 100, 10'000'000};
    auto curve = pldEpsilonCurve(p, steps, fine);
    QVERIFY2(curve.isOk(), curve.status().message().c_str());
    QVERIFY(curve->points[0].epsilonUpper && curve->points[1].epsilonUpper);
    QVERIFY(!curve->points[2].epsilonUpper && !curve->points[2].epsilonLower);
    const QString why = QString::fromStdString(curve->points[2].error.message());
    QVERIFY2(why.contains(QStringLiteral("K = 10000000")) && why.contains(QStringLiteral("coarser")), qPrintable(why));
    QCOMPARE(curve->firstError().message(), curve->points[2].error.message());
    // q = 1 is exactly μ-GDP with μ = √K/σ: the bracket holds the closed form.
    const double exact = *gdpEpsilon(1.0 / 0.05, p.delta);
    QVERIFY(*curve->points[0].epsilonLower <= exact * (1 + 1e-9));
    QVERIFY(exact <= *curve->points[0].epsilonUpper * (1 + 1e-9));

    // An invalid K fails alone, naming K; invalid knobs, options or an empty list fail the call.
    auto mixed = pldEpsilonCurve(Params{}, std::vector<std::int64_t>{0, 10});
    QVERIFY(mixed.isOk());
    QVERIFY(!mixed->points[0].epsilonUpper);
    QVERIFY(QString::fromStdString(mixed->points[0].error.message()).contains(QStringLiteral("K")));
    QVERIFY(mixed->points[1].epsilonUpper.has_value());
    Params bad;
    bad.sigma = 0.01;
    QVERIFY(!pldEpsilonCurve(bad, std::vector<std::int64_t>{10}).isOk());
    QVERIFY(!pldEpsilonCurve(Params{}, std::vector<std::int64_t>{}).isOk());
    ExactOptions zero;
    zero.discretisation = 0.0;
    auto z = pldEpsilonCurve(Params{}, std::vector<std::int64_t>{10}, zero);
    QVERIFY(!z.isOk());
    QVERIFY(QString::fromStdString(z.status().message()).contains(QStringLiteral("discretisation")));
    ExactOptions loose;
    loose.accuracy = 0.9;
    QVERIFY(!pldEpsilonCurve(Params{}, std::vector<std::int64_t>{10}, loose).isOk());
  }

  void badInputs() {
    PldAccountant pld;
    Params p;
    p.K = 0;
    QVERIFY(!pld.epsilon(p).isOk());
    QVERIFY(QString::fromStdString(pld.epsilon(p).status().message()).contains(QStringLiteral("K")));
    p = Params{};
    p.m = p.n + 1;  // q > 1
    QVERIFY(!pld.epsilon(p).isOk());
    EpsilonOptions o;
    o.exact.accuracy = 0.0;
    auto r = pld.epsilon(Params{}, o);
    QVERIFY(!r.isOk());
    QVERIFY(QString::fromStdString(r.status().message()).contains(QStringLiteral("accuracy")));
    o = EpsilonOptions{};
    o.exact.discretisation = 0.0;
    QVERIFY(!pld.epsilon(Params{}, o).isOk());
    QVERIFY(!pldComposeSegments(std::vector<pld::GaussianSegment>{{1.5, 1.0, 10}}, 1e-3).isOk());
    QVERIFY(!pldComposeSegments(std::vector<pld::GaussianSegment>{{0.1, 1.0, 0}}, 1e-3).isOk());
  }
};

QTEST_GUILESS_MAIN(TestPldAccountant)
#include "tst_pld_accountant.moc"
