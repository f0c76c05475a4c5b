// Goal-seek on hand-built frontiers: the smallest ε for an accuracy is bracketed by the last grid
// target that misses it and the first that reaches it (interpolated in log ε, labelled so),
// "already at the smallest ε computed" and "not reached" are told apart, the worst seed is the
// conservative reading, ties go to the smaller ε, failed points are skipped, and bad inputs are
// refused with the reason. The best configuration within an ε budget reads the reported ε.
#include <QTest>
#include <cmath>

#include "training/goal_seek.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

FrontierPoint point(double target, double mean, double spread = 0.0, std::int64_t steps = 100) {
  FrontierPoint p;
  p.targetEpsilon = target;
  p.epsilon = 0.98 * target;
  p.epochs = 10;
  p.sigma = 1.0 / target;
  p.eta = 0.5;
  p.steps = steps;
  p.batch = 64;
  p.accuracyMean = mean;
  p.accuracyMin = mean - spread;
  p.accuracyMax = mean + spread;
  p.seeds = 3;
  return p;
}

FrontierPoint failed(double target) {
  FrontierPoint p;
  p.targetEpsilon = target;
  p.error = "target ε unreachable";
  return p;
}

GoalSeries series(std::vector<FrontierPoint> points) { return {"dp-sgd", "DP-SGD", std::move(points)}; }

// Accuracy 0.5, 0.7, 0.8, 0.9 at ε 0.5, 1, 2, 4.
GoalSeries rising() { return series({point(0.5, 0.5), point(1, 0.7, 0.05), point(2, 0.8, 0.05), point(4, 0.9)}); }

}  // namespace

class TestGoalSeek : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void reachedBetweenTwoPoints() {
    const Result<SmallestEpsilon> a = smallestEpsilonFor(rising(), 0.75);
    QVERIFY(a);
    QCOMPARE(a->outcome, GoalOutcome::kBetween);
    QCOMPARE(a->first->targetEpsilon, 2.0);
    QCOMPARE(a->lastMissed->targetEpsilon, 1.0);
    // Halfway from 0.7 to 0.8: halfway from log 1 to log 2.
    QVERIFY(std::abs(*a->interpolatedEpsilon - std::sqrt(2.0)) < 1e-12);
    const std::string text = describe(*a, 0.75, SeedStatistic::kMean);
    QVERIFY2(text.find("at ε between 1 and 2") != std::string::npos, text.c_str());
    QVERIFY2(text.find("interpolated") != std::string::npos, text.c_str());
    QVERIFY2(text.find("batch 64") != std::string::npos, text.c_str());
  }

  void reachedExactlyAtAPoint() {
    const Result<SmallestEpsilon> a = smallestEpsilonFor(rising(), 0.8);
    QCOMPARE(a->first->targetEpsilon, 2.0);
    QCOMPARE(*a->interpolatedEpsilon, 2.0);
  }

  void reachedAtTheFirstPoint() {
    const Result<SmallestEpsilon> a = smallestEpsilonFor(rising(), 0.4);
    QCOMPARE(a->outcome, GoalOutcome::kAtFirstPoint);
    QCOMPARE(a->first->targetEpsilon, 0.5);
    QVERIFY(!a->lastMissed && !a->interpolatedEpsilon);
    const std::string text = describe(*a, 0.4, SeedStatistic::kMean);
    QVERIFY2(text.find("already at the smallest ε computed, 0.5") != std::string::npos, text.c_str());
    QVERIFY2(text.find("may be lower") != std::string::npos, text.c_str());
  }

  void neverReached() {
    const Result<SmallestEpsilon> a = smallestEpsilonFor(rising(), 0.95);
    QCOMPARE(a->outcome, GoalOutcome::kNotReached);
    QVERIFY(!a->reached());
    QCOMPARE(a->best->targetEpsilon, 4.0);
    QCOMPARE(a->largestTarget, 4.0);
    const std::string text = describe(*a, 0.95, SeedStatistic::kMean);
    QVERIFY2(text.find("does not reach 95 % at any ε up to 4 (best 90 %") != std::string::npos, text.c_str());
  }

  // The worst seed reaches later than the mean: at ε 1 the mean is 0.7 but one seed got 0.65.
  void worstSeedIsConservative() {
    QCOMPARE(smallestEpsilonFor(rising(), 0.7, SeedStatistic::kMean)->first->targetEpsilon, 1.0);
    const Result<SmallestEpsilon> a = smallestEpsilonFor(rising(), 0.7, SeedStatistic::kWorstSeed);
    QCOMPARE(a->first->targetEpsilon, 2.0);
    QCOMPARE(a->lastMissed->targetEpsilon, 1.0);
    QVERIFY(describe(*a, 0.7, SeedStatistic::kWorstSeed).find("with every seed") != std::string::npos);
  }

  // Accuracy is noisy in ε: the first point that reaches counts, even if a later one dips.
  void nonMonotoneFrontierTakesTheFirstReach() {
    const Result<SmallestEpsilon> a =
        smallestEpsilonFor(series({point(1, 0.6), point(2, 0.82), point(4, 0.78), point(8, 0.85)}), 0.8);
    QCOMPARE(a->first->targetEpsilon, 2.0);
    QCOMPARE(a->best->targetEpsilon, 8.0);
  }

  // Points are read in order of target ε whatever their order in the request; failed points skip.
  void unorderedAndFailedPoints() {
    const Result<SmallestEpsilon> a =
        smallestEpsilonFor(series({point(4, 0.9), failed(0.25), point(1, 0.7), failed(2), point(0.5, 0.5)}), 0.8);
    QCOMPARE(a->outcome, GoalOutcome::kBetween);
    QCOMPARE(a->lastMissed->targetEpsilon, 1.0);
    QCOMPARE(a->first->targetEpsilon, 4.0);
    QCOMPARE(a->smallestTarget, 0.5);
    const Result<SmallestEpsilon> none = smallestEpsilonFor(series({failed(1), failed(2)}), 0.8);
    QCOMPARE(none->outcome, GoalOutcome::kNoPoints);
    QVERIFY(!none->best);
  }

  // Equal best accuracies: the smaller target ε is the one reported.
  void tiesGoToTheSmallerEpsilon() {
    const Result<SmallestEpsilon> a = smallestEpsilonFor(series({point(1, 0.7), point(2, 0.8), point(4, 0.8)}), 0.9);
    QCOMPARE(a->best->targetEpsilon, 2.0);
    const Result<BestConfiguration> b = bestConfigurationFor(series({point(4, 0.8), point(2, 0.8)}), 10.0);
    QCOMPARE(b->point->targetEpsilon, 2.0);
    // Same accuracy and ε: fewer steps (a cheaper run).
    const Result<BestConfiguration> c =
        bestConfigurationFor(series({point(2, 0.8, 0.0, 500), point(2, 0.8, 0.0, 200)}), 10.0);
    QCOMPARE(c->point->steps, std::int64_t(200));
  }

  void overallAnswers() {
    GoalSeries sgld{"dp-sgld", "DP-SGLD", {point(0.5, 0.3), point(1, 0.85), point(2, 0.86)}};
    const std::vector<GoalSeries> all{rising(), sgld};
    std::vector<SmallestEpsilon> answers;
    for (const GoalSeries& s : all) answers.push_back(*smallestEpsilonFor(s, 0.8));
    QCOMPARE(overallSmallest(answers, SeedStatistic::kMean)->id, std::string("dp-sgld"));
    QVERIFY(!overallSmallest({*smallestEpsilonFor(rising(), 0.99)}, SeedStatistic::kMean));
    const Result<std::vector<BestConfiguration>> best = bestConfigurationFor(all, 2.5);
    QCOMPARE(best->size(), std::size_t(2));
    QCOMPARE((*best)[0].point->targetEpsilon, 2.0);  // ε 4 reports 3.92 > 2.5
    QCOMPARE(overallBest(*best, SeedStatistic::kMean)->id, std::string("dp-sgld"));
  }

  // The budget is compared with the ε each point reports (≤ its target), not the target.
  void budgetReadsTheReportedEpsilon() {
    const Result<BestConfiguration> b = bestConfigurationFor(rising(), 1.96);
    QCOMPARE(b->point->targetEpsilon, 2.0);  // reports 1.96
    const std::string text = describe(*b, 1.96, SeedStatistic::kMean);
    QVERIFY2(text.find("best 80 %") != std::string::npos && text.find("σ = 0.5") != std::string::npos, text.c_str());
    const Result<BestConfiguration> none = bestConfigurationFor(rising(), 0.1);
    QVERIFY(!none->point);
    QCOMPARE(*none->smallestEpsilonSeen, 0.49);
    QVERIFY(describe(*none, 0.1, SeedStatistic::kMean).find("the smallest reported is 0.49") != std::string::npos);
  }

  // An epochs frontier: every point at one ε, so the best configuration is the answer, not a
  // smallest ε.
  void epochsFrontier() {
    FrontierResult r;
    r.vary = FrontierVary::kEpochs;
    FrontierSeries s;
    s.mechanism = Mechanism::kDpSgd;
    for (double epochs : {5.0, 10.0, 20.0}) {
      FrontierPoint p = point(1.0, 0.7 + epochs / 100);
      p.epochs = epochs;
      s.points.push_back(p);
    }
    r.series = {s};
    const Result<std::vector<SmallestEpsilon>> smallest = smallestEpsilonFor(r, 0.8);
    QVERIFY(!smallest);
    QVERIFY(smallest.status().message().find("varies the epochs") != std::string::npos);
    const Result<std::vector<BestConfiguration>> best = bestConfigurationFor(goalSeries(r), 1.0);
    QCOMPARE((*best)[0].point->epochs, 20.0);
    QCOMPARE((*best)[0].name, std::string("DP-SGD"));  // the name without its parenthesis
  }

  void invalidInputs_data() {
    QTest::addColumn<double>("accuracy");
    QTest::addColumn<QString>("message");
    QTest::newRow("percent given as a number") << 85.0 << "must be a fraction in (0, 1] (85 % is 0.85)";
    QTest::newRow("zero") << 0.0 << "must be a fraction in (0, 1]";
    QTest::newRow("negative") << -0.5 << "must be a fraction in (0, 1]";
    QTest::newRow("above 100") << 250.0 << "must be a fraction in (0, 1]";
    QTest::newRow("nan") << std::nan("") << "must be a fraction in (0, 1]";
  }
  void invalidInputs() {
    QFETCH(double, accuracy);
    QFETCH(QString, message);
    const Result<SmallestEpsilon> a = smallestEpsilonFor(rising(), accuracy);
    QVERIFY(!a);
    QCOMPARE(a.status().code(), StatusCode::kInvalidArgument);
    QVERIFY2(QString::fromStdString(a.status().message()).contains(message), a.status().message().c_str());
    QVERIFY(!bestConfigurationFor(rising(), 0.0));
    QVERIFY(!bestConfigurationFor(rising(), INFINITY));
    QVERIFY(smallestEpsilonFor(rising(), 1.0));  // 100 % is a goal, if rarely a reachable one
  }
};

QTEST_GUILESS_MAIN(TestGoalSeek)
#include "tst_goal_seek.moc"
