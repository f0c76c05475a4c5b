// `sgmcmc` (Li, Chen, Liu & Carin 2019, Alg. 1): the effective noise multiplier and the heterogeneous
// composition of the t^{−1/3} schedule.
#include <QTest>
#include <cmath>

#include "accounting/rdp_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/subsampled_gaussian_rdp.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestSgmcmcAccountant : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void effectiveNoiseMultiplier() {
    Params p;
    p.n = 50000;
    p.m = 500;
    p.L = 2.0;
    DPX_COMPARE_REL(sgmcmcNoiseMultiplier(p, 0.1), 500.0 / (2.0 * std::sqrt(0.1 * 50000)), 1e-15);
  }

  void constantScheduleIsTheRdpAccountantAtSigmaEff() {
    Params p;
    p.n = 50000;
    p.m = 500;
    p.eta = 0.05;
    p.K = 10000;
    SgmcmcAccountant sg;
    Params asDpSgd = p;
    asDpSgd.sigma = sgmcmcNoiseMultiplier(p, p.eta);
    RdpAccountant rdp;
    DPX_COMPARE_REL(sg.epsilon(p)->epsilon, rdp.epsilon(asDpSgd)->epsilon, 1e-12);
  }

  void decreasingScheduleIsAnUpperBoundWithinOnePercent() {
    const double q = 0.01;
    const double sigma1 = 0.9;
    const std::int64_t T = 3000;
    for (double alpha : {2.0, 8.0, 32.0}) {
      double exact = 0.0;
      for (std::int64_t t = 1; t <= T; ++t) {
        exact += *subsampledGaussianRdp(q, sigma1 * std::pow(static_cast<double>(t), 1.0 / 6.0), alpha);
      }
      auto bound = sgmcmcTotalRdp(q, sigma1, T, true, alpha);
      QVERIFY(bound.isOk());
      QVERIFY2(*bound >= exact * (1 - 1e-12), qPrintable(QStringLiteral("α=%1").arg(alpha)));
      QVERIFY2(*bound <= exact * 1.01, qPrintable(QStringLiteral("α=%1: %2 vs %3").arg(alpha).arg(*bound).arg(exact)));
    }
  }

  void decreasingNoiseIsMorePrivateThanConstant() {
    Params p;
    p.n = 50000;
    p.m = 500;
    p.eta = 0.05;
    p.K = 100000;
    SgmcmcAccountant sg;
    const double constant = sg.epsilon(p)->epsilon;
    p.schedule = Schedule::kDecreasing;
    QVERIFY(sg.epsilon(p)->epsilon < constant);
  }

  void theoremThreeConditions() {
    SgmcmcAccountant sg;
    Params p;
    p.n = 50000;
    p.m = 500;
    p.eta = 0.1;
    QVERIFY(sg.check(p).empty());
    p.eta = 1e-4;  // ≤ q²N/(256L²) = 0.0195
    QCOMPARE(sg.check(p).size(), std::size_t(1));
    QVERIFY(QString::fromStdString(sg.check(p).front().reason).contains(QStringLiteral("256")));
  }
};

QTEST_GUILESS_MAIN(TestSgmcmcAccountant)
#include "tst_sgmcmc_accountant.moc"
