// The threat-model ladder for the last iterate: rung order and kinds, composition's ordering
// (rdp ≥ pld upper: the exact composition is tighter), applicability following check() and the
// softmax trainer's convexity, labels naming the assumption, and cancellation.
#include <QTest>
#include <atomic>
#include <vector>

#include "accounting/registry.h"
#include "accounting/threat_model_ladder.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

const LadderRung* rungOf(const std::vector<LadderRung>& rungs, const std::string& id) {
  for (const LadderRung& r : rungs) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

const std::vector<std::int64_t> kSteps = {1, 10, 100, 1000, 14063};

}  // namespace

class TestThreatModelLadder : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void rungsInOrderWithKinds() {
    const Params p;
    const Result<std::vector<LadderRung>> rungs = threatModelLadder(p, kSteps);
    QVERIFY2(rungs.isOk(), rungs.status().message().c_str());
    std::vector<std::string> expected = {"rdp", "pld", "sgld", "cyclic", "outpert"};
    if (findAccountant("heuristic-last-iterate")) expected.push_back("heuristic-last-iterate");
    QCOMPARE(rungs->size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) QCOMPARE((*rungs)[i].id, expected[i]);
    QCOMPARE((*rungs)[0].rung, std::string("composition"));
    QCOMPARE((*rungs)[1].rung, std::string("composition"));
    for (std::size_t i = 2; i < 5; ++i) QCOMPARE((*rungs)[i].rung, std::string("last-iterate proven"));
    for (const LadderRung& r : *rungs) {
      QCOMPARE(r.kind, findAccountant(r.id)->boundKind());
      QVERIFY(!r.label.empty() && !r.assumes.empty());
      QCOMPARE(r.steps.size(), r.epsilon.size());
    }
    if (expected.size() == 6) QCOMPARE(rungs->back().rung, std::string("heuristic"));
  }

  void compositionRdpIsAbovePld() {
    const Params p;
    const Result<std::vector<LadderRung>> rungs = threatModelLadder(p, kSteps);
    QVERIFY(rungs.isOk());
    const LadderRung* rdp = rungOf(*rungs, "rdp");
    const LadderRung* pld = rungOf(*rungs, "pld");
    QVERIFY(rdp && pld);
    QCOMPARE(rdp->steps.size(), kSteps.size());
    QCOMPARE(pld->steps.size(), kSteps.size());
    for (std::size_t i = 0; i < kSteps.size(); ++i) QVERIFY(rdp->epsilon[i] >= pld->epsilon[i]);
  }

  // With L2 (λ > 0) the strongly convex analyses apply and say so; without it they are greyed
  // with the reason; an η over sgld's 1/β greys sgld through its check().
  void applicabilityFollowsCheckAndConvexity() {
    Params p;
    p.lambda = 0.001;
    Result<std::vector<LadderRung>> rungs = threatModelLadder(p, kSteps);
    QVERIFY(rungs.isOk());
    const LadderRung* sgld = rungOf(*rungs, "sgld");
    QVERIFY(sgld->applies);
    QVERIFY2(
        sgld->assumes.find("λ-strongly convex: holds for the softmax trainer with L2, λ = 0.001") != std::string::npos,
        sgld->assumes.c_str());
    QVERIFY(rungOf(*rungs, "cyclic")->assumes.find("convex") != std::string::npos);

    p.lambda = 0.0;
    rungs = threatModelLadder(p, kSteps);
    QVERIFY(rungs.isOk());
    for (const char* id : {"sgld", "outpert"}) {
      const LadderRung* r = rungOf(*rungs, id);
      QVERIFY2(!r->applies, id);
      QVERIFY2(r->whyNot.find("not strongly convex") != std::string::npos, r->whyNot.c_str());
      QVERIFY(r->assumes.find("does not hold") != std::string::npos);
    }
    QVERIFY(rungOf(*rungs, "rdp")->applies);
    QVERIFY(rungOf(*rungs, "cyclic")->applies);

    p.lambda = 0.01;
    p.eta = 1.5;  // η ≥ 1/β = 1
    rungs = threatModelLadder(p, kSteps);
    QVERIFY(rungs.isOk());
    const LadderRung* greyed = rungOf(*rungs, "sgld");
    QVERIFY(!greyed->applies);
    QVERIFY2(greyed->whyNot.find("step size") != std::string::npos, greyed->whyNot.c_str());
    QVERIFY(!greyed->epsilon.empty());  // still computed, for the greyed curve
  }

  // A network's loss is not convex: every proven last-iterate analysis is greyed with that reason
  // (once); the composition accountants still apply (and the linear-loss heuristic stays what it
  // is, an estimate).
  void networksGreyTheConvexAnalyses() {
    Params p;
    p.lambda = 0.001;
    p.convexLoss = false;
    Result<std::vector<LadderRung>> rungs = threatModelLadder(p, kSteps);
    QVERIFY(rungs.isOk());
    for (const char* id : {"sgld", "cyclic", "outpert"}) {
      const LadderRung* r = rungOf(*rungs, id);
      QVERIFY2(!r->applies, id);
      QVERIFY2(r->whyNot.find("non-convex model") != std::string::npos, r->whyNot.c_str());
      QVERIFY2(r->whyNot.find("non-convex model") == r->whyNot.rfind("non-convex model"), r->whyNot.c_str());
    }
    QVERIFY(rungOf(*rungs, "rdp")->applies);
    QVERIFY(rungOf(*rungs, "pld")->applies);
    QVERIFY(rungOf(*rungs, "rdp")->assumes.find("a network too") != std::string::npos);
  }

  void rejectsBadStepsAndCancels() {
    const Params p;
    QVERIFY(!threatModelLadder(p, std::vector<std::int64_t>{}).isOk());
    QVERIFY(!threatModelLadder(p, std::vector<std::int64_t>{0, 10}).isOk());
    Params other = p;
    other.sigma = 1.23;  // not cached by the tests above
    std::atomic<bool> cancel{true};
    pld::ComputeControl control;
    control.cancel = &cancel;
    const Result<std::vector<LadderRung>> r = threatModelLadder(other, kSteps, {}, control);
    QVERIFY(!r.isOk());
    QCOMPARE(r.status().code(), StatusCode::kCancelled);
  }
};

QTEST_GUILESS_MAIN(TestThreatModelLadder)
#include "tst_threat_model_ladder.moc"
