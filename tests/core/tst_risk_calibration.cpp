// Calibration to attack risk (Kulynych et al. 2024): σ whose pessimistic PLD trade-off curve keeps
// a membership-inference attack's TPR at a given FPR, or its advantage, at most a target — on the
// safe side, tight, the smallest such σ; the exact curve evaluation against the Gaussian
// mechanism's closed form (Dong, Roth & Su 2019: one Gaussian step of sensitivity 1 is
// (1/σ)-GDP); the refusals of impossible targets.
#include <QTest>
#include <atomic>
#include <cmath>

#include "accounting/pld_accountant.h"
#include "accounting/risk_calibration.h"
#include "accounting/tradeoff.h"
#include "numerics/special_functions.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

Params run(std::int64_t n, std::int64_t m, std::int64_t steps) {
  Params p;
  p.n = n;
  p.m = m;
  p.K = steps;
  p.delta = 1e-5;
  return p;
}

// The risk the target constrains, at σ.
double riskAt(Params p, const RiskTarget& target, double sigma) {
  p.sigma = sigma;
  if (target.kind == RiskTarget::Kind::kAdvantage) return advantageRisk(p)->advantage;
  return attackRisk(p, target.fpr)->tpr;
}

QByteArray text(const Status& s) { return QByteArray::fromStdString(s.message()); }

}  // namespace

Q_DECLARE_METATYPE(dpx::core::Params)

class TestRiskCalibration : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void targetIsMetTightlyBySmallestSigma_data() {
    QTest::addColumn<Params>("params");
    QTest::addColumn<bool>("advantage");
    QTest::addColumn<double>("goal");
    QTest::addColumn<double>("fpr");
    // Bu et al. 2020's MNIST sampling rate (256/60000), 10 epochs.
    QTest::newRow("q=0.0043 K=2344 TPR 0.05 at 0.01") << run(60000, 256, 2344) << false << 0.05 << 0.01;
    QTest::newRow("q=0.0043 K=2344 TPR 0.003 at 0.001") << run(60000, 256, 2344) << false << 0.003 << 0.001;
    QTest::newRow("q=0.0043 K=2344 advantage 0.1") << run(60000, 256, 2344) << true << 0.1 << 0.0;
    QTest::newRow("q=1 K=1 TPR 0.5 at 0.1") << run(1000, 1000, 1) << false << 0.5 << 0.1;
    QTest::newRow("q=1 K=1 advantage 0.3") << run(1000, 1000, 1) << true << 0.3 << 0.0;
    QTest::newRow("q=1 K=50 TPR 0.2 at 0.05") << run(1000, 1000, 50) << false << 0.2 << 0.05;
    QTest::newRow("q=0.001 K=1000 TPR 0.02 at 0.01") << run(100000, 100, 1000) << false << 0.02 << 0.01;
    QTest::newRow("q=0.01 K=100 advantage 0.05") << run(1000, 10, 100) << true << 0.05 << 0.0;
  }
  void targetIsMetTightlyBySmallestSigma() {
    QFETCH(Params, params);
    QFETCH(bool, advantage);
    QFETCH(double, goal);
    QFETCH(double, fpr);
    const RiskTarget target = advantage ? RiskTarget::maxAdvantage(goal) : RiskTarget::tprAt(goal, fpr);
    Result<RiskCalibration> c = calibrateSigmaToRisk(params, target);
    QVERIFY2(c.isOk(), text(c.status()));
    QVERIFY(!c->atLowerLimit);
    const double atSigma = riskAt(params, target, c->sigma);
    QCOMPARE(advantage ? c->advantage : c->tpr, atSigma);
    QVERIFY2(atSigma <= goal, qPrintable(QStringLiteral("risk %1 > target %2").arg(atSigma).arg(goal)));
    QVERIFY2(atSigma >= goal - 1e-3, qPrintable(QStringLiteral("risk %1 ≪ target %2").arg(atSigma).arg(goal)));
    QVERIFY(riskAt(params, target, c->sigma * 0.99) > goal);  // the smallest σ, up to tolerance
    // The run's other numbers are those of the returned σ.
    Params at = params;
    at.sigma = c->sigma;
    QCOMPARE(c->epsilon, PldAccountant().epsilon(at)->epsilon);
    QVERIFY(c->tpr - c->fpr <= c->advantage + 1e-12);
    if (!advantage) QCOMPARE(c->fpr, fpr);
  }

  // The true TPR falls with σ and lies in [optimistic, pessimistic] at each σ; the pessimistic end
  // may jump up by at most the bracket's width where the automatic loss grid changes.
  void riskFallsWithSigma() {
    Params p = run(60000, 256, 2344);
    double previous = 1.0;
    double previousAdvantage = 1.0;
    for (double sigma = 0.6; sigma <= 2.0; sigma *= 1.07) {
      p.sigma = sigma;
      Result<AttackRisk> r = attackRisk(p, 0.01);
      QVERIFY(r.isOk());
      QVERIFY(r->tprOptimistic <= r->tpr);
      QVERIFY2(r->tprOptimistic <= previous, qPrintable(QStringLiteral("σ = %1").arg(sigma)));
      QVERIFY(r->tpr <= previous + (r->tpr - r->tprOptimistic) + 1e-12);
      QVERIFY(r->tpr < 0.5 * previous + 0.5);  // it does fall, not just stay put
      QVERIFY(r->advantage <= previousAdvantage + 1e-3);
      previous = r->tpr;
      previousAdvantage = r->advantage;
    }
    QVERIFY(previous < 0.03);
  }

  // One full-batch Gaussian step (q = 1, K = 1) is exactly G_{1/σ}: TPR(F) = Φ(Φ⁻¹(F) + 1/σ), and
  // the advantage is 2Φ(1/(2σ)) − 1 (Dong, Roth & Su 2019). The PLD bracket must contain both.
  void gaussianMechanismIsGaussianDp_data() {
    QTest::addColumn<double>("sigma");
    QTest::addColumn<double>("fpr");
    for (double sigma : {0.5, 1.0, 3.0}) {
      for (double fpr : {1e-4, 1e-2, 0.3}) QTest::addRow("σ=%g F=%g", sigma, fpr) << sigma << fpr;
    }
  }
  void gaussianMechanismIsGaussianDp() {
    QFETCH(double, sigma);
    QFETCH(double, fpr);
    Params p = run(1000, 1000, 1);
    p.sigma = sigma;
    Result<AttackRisk> r = attackRisk(p, fpr);
    QVERIFY(r.isOk());
    const double exact = numerics::normalCdf(numerics::normalQuantile(fpr) + 1.0 / sigma);
    QVERIFY2(r->tprOptimistic <= exact + 1e-12 && exact <= r->tpr + 1e-12,
             qPrintable(QStringLiteral("%1 ≤ %2 ≤ %3").arg(r->tprOptimistic).arg(exact).arg(r->tpr)));
    QVERIFY(r->tpr - exact < 1e-3);
    DPX_COMPARE_REL(r->advantage, 2.0 * numerics::normalCdf(0.5 / sigma) - 1.0, 1e-4);
  }

  // max_x (1 − x − f(x)) is δ(0) of the pessimistic profile: no x on a fine grid beats it, and the
  // FPR advantageRisk reports attains it.
  void advantageIsDeltaAtZero() {
    for (const Params& base : {run(60000, 256, 2344), run(1000, 10, 100)}) {
      Params p = base;
      p.sigma = 0.9;
      Result<PldRunResult> r = pldRun(p, {});
      QVERIFY(r.isOk());
      const double deltaZero = r->run->deltaUpper(0.0);
      double best = 0.0;
      for (int i = 1; i < 4000; ++i) {
        const double x = i / 4000.0;
        best = std::max(best, 1.0 - x - pldTradeoffAt(*r->run, true, x));
      }
      QVERIFY(best <= deltaZero + 1e-12);
      QVERIFY(best > deltaZero - 1e-3);
      Result<AttackRisk> a = advantageRisk(p);
      QVERIFY(a.isOk());
      QCOMPARE(a->advantage, deltaZero);
      QVERIFY(std::fabs(a->tpr - a->fpr - deltaZero) < 1e-9);
    }
  }

  // The exact evaluation is the supremum over every ε, so it is never below the chart's envelope
  // over a 2001-point ε grid (PldAccountant::tradeoff) and close to it.
  void exactCurveDominatesGridEnvelope() {
    Params p = run(60000, 256, 2344);
    p.sigma = 1.0;
    const std::vector<double> grid{1e-5, 1e-3, 0.01, 0.1, 0.5, 0.9};
    Result<TradeoffCurve> envelope = PldAccountant().tradeoff(p, grid);
    Result<PldRunResult> r = pldRun(p, {});
    QVERIFY(envelope.isOk() && r.isOk());
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const double exact = pldTradeoffAt(*r->run, true, grid[i]);
      QVERIFY(exact >= envelope->typeTwo[i] - 1e-12);
      QVERIFY(exact - envelope->typeTwo[i] < 1e-3);
      QVERIFY(exact <= pldTradeoffAt(*r->run, false, grid[i]) + 1e-12);  // below the optimistic curve
    }
  }

  void lowerLimitAndUnreachableTargets() {
    // One step that touches a record with probability q = 0.01 gives any attack at most TPR ≤ FPR + q
    // and advantage ≤ q, however small σ is.
    for (const RiskTarget& t :
         {RiskTarget::tprAt(1.0, 0.01), RiskTarget::tprAt(0.0201, 0.01), RiskTarget::maxAdvantage(0.0101)}) {
      Result<RiskCalibration> easy = calibrateSigmaToRisk(run(100, 1, 1), t);
      QVERIFY2(easy.isOk(), text(easy.status()));
      QVERIFY(easy->atLowerLimit);
      QCOMPARE(easy->sigma, 0.05);
      QVERIFY2(
          easy->tpr - easy->fpr <= 0.0101 && easy->advantage <= 0.0101,
          qPrintable(QStringLiteral("TPR %1 at %2, advantage %3").arg(easy->tpr).arg(easy->fpr).arg(easy->advantage)));
    }
    const Params p = run(60000, 256, 2344);
    for (const RiskTarget& t : {RiskTarget::tprAt(0.01 + 1e-9, 0.01), RiskTarget::maxAdvantage(1e-9)}) {
      Result<RiskCalibration> c = calibrateSigmaToRisk(p, t);
      QVERIFY(!c.isOk());
      QCOMPARE(c.status().code(), StatusCode::kNotApplicable);
      const QString message = QString::fromStdString(c.status().message());
      QVERIFY2(message.contains(QStringLiteral("unreachable")) && message.contains(QStringLiteral("σ = 100")) &&
                   message.contains(QString::fromStdString(t.describe())),
               qPrintable(message));
    }
  }

  void impossibleTargetsAreRefused_data() {
    QTest::addColumn<bool>("advantage");
    QTest::addColumn<double>("goal");
    QTest::addColumn<double>("fpr");
    QTest::addColumn<QString>("named");
    QTest::newRow("TPR below FPR") << false << 0.005 << 0.01 << "target-tpr";
    QTest::newRow("FPR 0") << false << 0.5 << 0.0 << "at-fpr";
    QTest::newRow("FPR 1") << false << 0.5 << 1.0 << "at-fpr";
    QTest::newRow("FPR NaN") << false << 0.5 << std::nan("") << "at-fpr";
    QTest::newRow("TPR 0") << false << 0.0 << 0.01 << "target-tpr";
    QTest::newRow("TPR above 1") << false << 1.5 << 0.01 << "target-tpr";
    QTest::newRow("advantage 1") << true << 1.0 << 0.0 << "target-advantage";
    QTest::newRow("advantage negative") << true << -0.1 << 0.0 << "target-advantage";
    QTest::newRow("advantage NaN") << true << std::nan("") << 0.0 << "target-advantage";
  }
  void impossibleTargetsAreRefused() {
    QFETCH(bool, advantage);
    QFETCH(double, goal);
    QFETCH(double, fpr);
    QFETCH(QString, named);
    const RiskTarget target = advantage ? RiskTarget::maxAdvantage(goal) : RiskTarget::tprAt(goal, fpr);
    Result<RiskCalibration> c = calibrateSigmaToRisk(run(60000, 256, 100), target);
    QVERIFY(!c.isOk());
    QCOMPARE(c.status().code(), StatusCode::kInvalidArgument);
    QVERIFY2(QString::fromStdString(c.status().message()).startsWith(named), text(c.status()));
  }

  void cancelStopsAndProgressRises() {
    std::atomic<bool> cancel{true};
    ExactOptions options;
    options.cancel = &cancel;
    Params p = run(60000, 256, 1000);
    p.sigma = 1.234;  // not in the PLD cache
    Result<RiskCalibration> c = calibrateSigmaToRisk(p, RiskTarget::tprAt(0.05, 0.01), options);
    QVERIFY(!c.isOk());
    QCOMPARE(c.status().code(), StatusCode::kCancelled);

    cancel = false;
    std::vector<double> seen;
    options.progress = [&seen](double f) { seen.push_back(f); };
    c = calibrateSigmaToRisk(p, RiskTarget::tprAt(0.04, 0.01), options);
    QVERIFY(c.isOk());
    QVERIFY(!seen.empty());
    for (std::size_t i = 1; i < seen.size(); ++i) QVERIFY(seen[i] >= seen[i - 1] && seen[i] <= 1.0);
  }
};

QTEST_GUILESS_MAIN(TestRiskCalibration)
#include "tst_risk_calibration.moc"
