// The audit of imported scores (score_audit.h) on the μ-GDP game, where every row is an independent
// trial and the exact trade-off is known: scores μ·IN + N(0, 1) with fair coins. The verdict is
// the union of three tests at 1 − (1 − c)/3 each, so at the claim's own μ it contradicts the claim
// in at most about 5 % of seeds (its level); against a claim of half the true μ it contradicts it
// nearly always (its power). Plus the claim a configuration makes (the exact composition's ε and
// curve), and what the report carries.
#include <QTest>
#include <cmath>
#include <vector>

#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "accounting/tradeoff.h"
#include "audit/score_audit.h"
#include "membership_game.h"

using namespace dpx::core;
using namespace dpx::core::audit;

namespace {

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// δ(ε) of μ-GDP (Dong, Roth & Su 2022, Cor. 2.13), and ε(δ) by bisection.
double gdpDelta(double mu, double epsilon) {
  return phi(-epsilon / mu + mu / 2) - std::exp(epsilon) * phi(-epsilon / mu - mu / 2);
}
double gdpEpsilon(double mu, double delta) {
  double lo = 0.0, hi = 100.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (gdpDelta(mu, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

ClaimedGuarantee gaussianClaim(double mu) {
  ClaimedGuarantee c;
  c.curve.typeOne = accounting::defaultTypeOneGrid(kProvenCurvePoints);
  for (double x : c.curve.typeOne) c.curve.typeTwo.push_back(accounting::gaussianTradeoff(mu, x));
  c.delta = 1e-5;
  c.epsilon = gdpEpsilon(mu, c.delta);
  c.accountant = "gdp";
  c.source = "G_mu";
  return c;
}

ImportedScores game(int records, double mu, std::uint64_t seed) {
  const auto g = dpx::test::gaussianMembershipScores(records, mu, seed, dpx::test::Membership::kCoin, 31);
  ImportedScores s;
  s.scores = g.scores;
  s.members = g.members;
  s.records = records;
  s.format = "csv";
  return s;
}

}  // namespace

class TestScoreAudit : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void levelAndPowerOnTheGaussianGame() {
    const int seeds = 40;
    const ClaimedGuarantee claim = gaussianClaim(1.0);
    int atTruth = 0;
    int atHalf = 0;
    for (int seed = 0; seed < seeds; ++seed) {
      Result<AuditReport> same = auditScores(game(2000, 1.0, 900 + seed), claim, 0.95);
      QVERIFY2(same.isOk(), same.status().message().c_str());
      QCOMPARE(same->contradiction, same->verdict.starts_with("contradicts"));
      atTruth += same->contradiction ? 1 : 0;
      Result<AuditReport> stronger = auditScores(game(2000, 2.0, 900 + seed), claim, 0.95);
      QVERIFY(stronger.isOk());
      atHalf += stronger->contradiction ? 1 : 0;
    }
    qInfo("mu-GDP game, m = 2000, claim mu = 1: contradicted in %d of %d seeds at the true mu = 1, %d at mu = 2",
          atTruth, seeds, atHalf);
    // At most 5 % in expectation; 6 of 40 has probability below 2 % under Binomial(40, 0.05).
    QVERIFY2(atTruth <= 5, qPrintable(QString::number(atTruth)));
    QVERIFY2(atHalf >= 36, qPrintable(QString::number(atHalf)));
  }

  void theReportCarriesTheClaimAndTheSplitConfidence() {
    const ClaimedGuarantee claim = gaussianClaim(1.0);
    Result<AuditReport> r = auditScores(game(1000, 0.5, 7), claim, 0.9);
    QVERIFY2(r.isOk(), r.status().message().c_str());
    QVERIFY(r->source == AuditSource::kScores);
    QCOMPARE(r->confidence, 0.9);
    QCOMPARE(r->verdictTests, 3);
    QVERIFY(std::abs(r->testConfidence() - (1.0 - 0.1 / 3)) < 1e-15);
    QCOMPARE(*r->epsilonUpperBound, claim.epsilon);
    QCOMPARE(r->attacks.size(), std::size_t{1});
    QVERIFY(r->fdpAudit.has_value());
    QVERIFY(std::abs(r->fdpAudit->confidence - r->testConfidence()) < 1e-15);
    QVERIFY(r->verdict.starts_with("consistent with the claimed ε = "));
    QVERIFY(r->verdict.find("at 90 %") != std::string::npos);
    // Deterministic: the same file gives the same report.
    Result<AuditReport> again = auditScores(game(1000, 0.5, 7), claim, 0.9);
    QCOMPARE(again->epsilonLowerBoundCp, r->epsilonLowerBoundCp);
    QCOMPARE(again->verdict, r->verdict);
  }

  void aConfigurationClaimsTheExactCompositionsCurveAndEpsilon() {
    Params p;
    p.n = 1000;
    p.m = 1000;
    p.sigma = 2.0;
    p.K = 1;
    Result<ClaimedGuarantee> claim = claimOfConfiguration(p, {}, "test knobs");
    QVERIFY2(claim.isOk(), claim.status().message().c_str());
    const accounting::Accountant& pld = accounting::accountantOf<accounting::PldAccountant>();
    QCOMPARE(claim->accountant, std::string(pld.id()));
    QCOMPARE(claim->epsilon, pld.epsilon(p)->epsilon);
    QCOMPARE(claim->delta, p.delta);
    QVERIFY(claim->source.find("from test knobs") != std::string::npos);
    // q = 1, K = 1: the Gaussian mechanism, μ = 1/σ; the pessimistic curve lies on or below G_μ.
    for (std::size_t i = 0; i < claim->curve.typeOne.size(); ++i) {
      QVERIFY(claim->curve.typeTwo[i] <= accounting::gaussianTradeoff(0.5, claim->curve.typeOne[i]) + 1e-9);
    }
    p.sampling = Sampling::kShuffle;
    Result<ClaimedGuarantee> refused = claimOfConfiguration(p, {}, "test knobs");
    QVERIFY(!refused.isOk());
    QVERIFY2(refused.status().message().find("outside the assumptions") != std::string::npos,
             refused.status().message().c_str());
  }

  void refusals() {
    const ClaimedGuarantee claim = gaussianClaim(1.0);
    ImportedScores s = game(100, 1.0, 1);
    QVERIFY(!auditScores(s, claim, 1.0).isOk());
    QVERIFY(!auditScores(s, claim, 0.4).isOk());
    ClaimedGuarantee noCurve = claim;
    noCurve.curve = {};
    QVERIFY(!auditScores(s, noCurve, 0.95).isOk());
    s.members.pop_back();
    QVERIFY(!auditScores(s, claim, 0.95).isOk());
  }
};

QTEST_GUILESS_MAIN(TestScoreAudit)
#include "tst_score_audit.moc"
