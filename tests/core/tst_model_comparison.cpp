// Models side by side (Tramèr & Boneh 2021's picture): the recipes as their code sets them, a
// comparison of linear-on-pixels and the CNN on small 28 × 28 images (every point private to its
// target, better than chance), a model that cannot read the data reported beside the others that
// go on, bad requests refused, and the time estimate known once the data is.
#include <QTemporaryDir>
#include <QTest>
#include <cstdint>
#include <filesystem>

#include "idx_images.h"
#include "training/goal_seek.h"
#include "training/model_comparison.h"

using namespace dpx::core;
using namespace dpx::core::training;
namespace fs = std::filesystem;

class TestModelComparison : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { qputenv("DPX_NO_DATASET_CACHE", "1"); }

  // Their README's commands: ScatterNet + linear at batch 8192 and learning rate 16, both CNNs at
  // 2048 and 4; momentum 0.9, clip 0.1, 40 epochs, DP-SGD, inputs as read (x/255, GroupNorm).
  void recipesAreTheirs() {
    const std::vector<ModelRecipe>& recipes = tramerBonehRecipes();
    QCOMPARE(recipes.size(), std::size_t{4});
    const ModelRecipe* scatterLinear = findRecipe("scatter-linear");
    QVERIFY(scatterLinear);
    QCOMPARE(scatterLinear->config.knobs.m, std::int64_t{8192});
    QCOMPARE(scatterLinear->config.knobs.eta, 16.0);
    QCOMPARE(scatterLinear->features, FeatureKind::kScatterNet);
    for (const char* id : {"cnn", "scatter-cnn"}) {
      const ModelRecipe* r = findRecipe(id);
      QVERIFY(r);
      QCOMPARE(r->config.knobs.m, std::int64_t{2048});
      QCOMPARE(r->config.knobs.eta, 4.0);
      QVERIFY(!r->config.model.convex());
    }
    for (const ModelRecipe& r : recipes) {
      QCOMPARE(r.config.mechanism, Mechanism::kDpSgd);
      QCOMPARE(r.config.knobs.L, 0.1);
      QCOMPARE(r.config.epochs, 40.0);
      QCOMPARE(r.config.momentum, 0.9);
      QCOMPARE(r.scaling, FeatureScaling::kNone);
    }
    QVERIFY(!findRecipe("resnet"));
  }

  void badRequestsAreRefused() {
    DatasetCache cache;
    ModelComparisonRequest r;
    r.source = "builtin:digits";
    r.epsilons = {1.0};
    auto none = compareModels(r, cache);
    QVERIFY(!none.isOk());
    r.recipes = {"cnn", "resnet"};
    auto unknown = compareModels(r, cache);
    QVERIFY(!unknown.isOk());
    QVERIFY2(unknown.status().message().find("resnet") != std::string::npos, unknown.status().message().c_str());
    QVERIFY(unknown.status().message().find("scatter-linear") != std::string::npos);
    r.recipes = {"cnn"};
    r.epsilons = {0.0};
    QVERIFY(!compareModels(r, cache).isOk());
    r.epsilons = {1.0};
    r.seeds = 0;
    QVERIFY(!compareModels(r, cache).isOk());
  }

  // The CNN cannot read 8 × 8 digits: its series says why; linear on pixels still trains.
  void aModelThatCannotReadTheDataIsReportedNotFatal() {
    DatasetCache cache;
    ModelComparisonRequest r;
    r.source = "builtin:digits";
    r.recipes = {"cnn", "linear-pixels"};
    r.epsilons = {2.0};
    auto result = compareModels(r, cache);
    QVERIFY2(result.isOk(), result.status().message().c_str());
    QCOMPARE(result->series.size(), std::size_t{2});
    const ModelComparisonSeries& cnn = result->series[0];
    QVERIFY2(cnn.error.find("too small") != std::string::npos, cnn.error.c_str());
    QVERIFY(!cnn.points.front().ok());
    // digits has 1437 training records: the linear recipe's batch of 2048 does not fit either.
    const ModelComparisonSeries& linear = result->series[1];
    const std::string linearWhy = linear.error.empty() ? linear.points.front().error : linear.error;
    QVERIFY2(linearWhy.find("m = 2048") != std::string::npos, linearWhy.c_str());
  }

  void linearAndCnnSideBySide() {
    QTemporaryDir dir;
    const fs::path source = dpx::test::writeIdxImageSource(fs::path(dir.path().toStdString()), 2100, 400);
    DatasetCache cache;
    ModelComparisonRequest r;
    r.source = source.string();
    r.recipes = {"linear-pixels", "cnn"};
    r.epsilons = {4.0};
    QVERIFY(!comparisonSecondsEstimate(r, cache, 1e9, 1e10).has_value());  // the data is not loaded yet
    std::vector<double> progress;
    std::size_t points = 0;
    ModelComparisonCallbacks callbacks;
    callbacks.progress = [&](double f) { progress.push_back(f); };
    callbacks.pointDone = [&](std::size_t, std::size_t, const FrontierPoint&) { ++points; };
    auto result = compareModels(r, cache, callbacks);
    QVERIFY2(result.isOk(), result.status().message().c_str());
    QCOMPARE(points, std::size_t{2});
    QCOMPARE(result->runs, std::int64_t{2});
    for (const ModelComparisonSeries& s : result->series) {
      QVERIFY2(s.error.empty(), s.error.c_str());
      const FrontierPoint& p = s.points.front();
      QVERIFY2(p.ok(), p.error.c_str());
      QVERIFY(*p.epsilon <= 4.0 + 1e-9);
      QVERIFY2(p.accuracyMean > 0.5, qPrintable(QString::fromStdString(s.id) + QString::number(p.accuracyMean)));
    }
    // Goal-seek reads the models' frontier as it reads a mechanism's: each model by its recipe's
    // id and label, its one trained point as the first to reach an accuracy it attains.
    const std::vector<GoalSeries> series = goalSeries(*result);
    QCOMPARE(series.size(), std::size_t{2});
    std::vector<SmallestEpsilon> reaching;
    for (std::size_t s = 0; s < series.size(); ++s) {
      QCOMPARE(series[s].id, r.recipes[s]);
      QCOMPARE(series[s].name, findRecipe(r.recipes[s])->label);
      const FrontierPoint& trained = result->series[s].points.front();
      const Result<SmallestEpsilon> answer = smallestEpsilonFor(series[s], 0.5);
      QVERIFY2(answer.isOk(), answer.status().message().c_str());
      QCOMPARE(answer->outcome, GoalOutcome::kAtFirstPoint);
      QCOMPARE(*answer->first->epsilon, *trained.epsilon);
      QVERIFY2(describe(*answer, 0.5, SeedStatistic::kMean).find(series[s].name) == 0,
               describe(*answer, 0.5, SeedStatistic::kMean).c_str());
      const Result<SmallestEpsilon> exactly = smallestEpsilonFor(series[s], trained.accuracyMean);
      QVERIFY(exactly.isOk());
      QCOMPARE(exactly->outcome, GoalOutcome::kAtFirstPoint);
      if (trained.accuracyMean < 1.0) {
        const Result<SmallestEpsilon> unreachable =
            smallestEpsilonFor(series[s], std::min(1.0, trained.accuracyMean + 1e-6));
        QVERIFY(unreachable.isOk());
        QCOMPARE(unreachable->outcome, GoalOutcome::kNotReached);
      }
      reaching.push_back(*answer);
    }
    const Result<std::vector<BestConfiguration>> best = bestConfigurationFor(series, 4.0);
    QVERIFY(best.isOk());
    const BestConfiguration* top = overallBest(*best, SeedStatistic::kMean);
    QVERIFY(top != nullptr);
    for (const ModelComparisonSeries& s : result->series)
      QVERIFY(top->point->accuracyMean >= s.points.front().accuracyMean);
    const Result<std::vector<BestConfiguration>> tooSmall = bestConfigurationFor(series, 0.5);
    QVERIFY(tooSmall.isOk());
    QVERIFY(overallBest(*tooSmall, SeedStatistic::kMean) == nullptr);  // every point spent ε ≈ 4

    QVERIFY(!progress.empty());
    QVERIFY(std::is_sorted(progress.begin(), progress.end()));
    QVERIFY(progress.back() <= 1.0 + 1e-12);
    const std::optional<double> estimate = comparisonSecondsEstimate(r, cache, 1e9, 1e10);
    QVERIFY(estimate && *estimate > 0.0);
  }
};

QTEST_MAIN(TestModelComparison)
#include "tst_model_comparison.moc"
