// Goal-seek on a computed privacy–utility frontier: "I need accuracy ≥ A: what is the smallest ε
// that gets it?" and "I may spend ε ≤ E: which σ, epochs and batch give the best accuracy?".
// Both are read off the points already trained, never by training more: a frontier is a grid, so
// the first question is answered as a bracket between two grid targets (the last that misses A
// and the first that reaches it), with an interpolated value labelled as such, and says plainly
// when A is reached already at the smallest target computed (the true answer may be lower) or not
// at any target computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "training/frontier.h"
#include "training/model_comparison.h"

namespace dpx::core::training {

// Which accuracy of a point's seeds a goal is read from. The mean is the frontier's line; the
// worst seed (the lower end of the band) is the conservative choice: every seed met the goal.
enum class SeedStatistic { kMean, kWorstSeed };
std::string_view seedStatisticName(SeedStatistic s);  // "mean" | "min"
std::optional<SeedStatistic> parseSeedStatistic(std::string_view text);

// One curve of a frontier as goal-seek reads it: a mechanism's series, or a model's.
struct GoalSeries {
  std::string id;    // "dp-sgd", "scatter-linear"
  std::string name;  // "DP-SGD", "ScatterNet + linear"
  std::vector<FrontierPoint> points;
};
std::vector<GoalSeries> goalSeries(const FrontierResult& frontier);
std::vector<GoalSeries> goalSeries(const ModelComparisonResult& comparison);

// The accuracy a point stands for under `statistic`.
double pointAccuracy(const FrontierPoint& p, SeedStatistic statistic);

enum class GoalOutcome {
  kBetween,       // reached at `first`, missed at `lastMissed`: the answer lies between them
  kAtFirstPoint,  // reached at the smallest target computed: the answer may be lower still
  kNotReached,    // no point reaches it
  kNoPoints,      // the series has no finished point
};

// The smallest ε at which one series reaches an accuracy. Points are ordered by their target ε;
// points without runs (a target out of the analysis' reach, a cancelled run) are skipped.
struct SmallestEpsilon {
  std::string id;
  std::string name;
  GoalOutcome outcome = GoalOutcome::kNoPoints;
  std::optional<FrontierPoint> first;       // the smallest target ε that reaches the goal
  std::optional<FrontierPoint> lastMissed;  // the largest target ε below `first` (kBetween only)
  // Linear in log ε between lastMissed and first at the goal's accuracy: an interpolation between
  // two trained points, not a trained point (kBetween only).
  std::optional<double> interpolatedEpsilon;
  std::optional<FrontierPoint> best;  // the most accurate point (ties: the smaller target ε)
  double smallestTarget = 0.0;        // the range of targets with a finished point
  double largestTarget = 0.0;
  bool reached() const { return first.has_value(); }
};

// Accuracy in (0, 1] (a fraction: 85 % is 0.85). Invalid: the accuracy or an epochs frontier (its
// points share one ε; there is no smallest ε to read off).
Result<SmallestEpsilon> smallestEpsilonFor(const GoalSeries& series, double accuracy,
                                           SeedStatistic statistic = SeedStatistic::kMean);
// Every series of the frontier, in its order. An epochs frontier is refused: all its points are
// calibrated to one ε.
Result<std::vector<SmallestEpsilon>> smallestEpsilonFor(const FrontierResult& frontier, double accuracy,
                                                        SeedStatistic statistic = SeedStatistic::kMean);
// The series that reaches the goal at the smallest target ε (ties: the higher accuracy there);
// nullptr when none does.
const SmallestEpsilon* overallSmallest(const std::vector<SmallestEpsilon>& answers, SeedStatistic statistic);

// The best configuration of one series within a privacy budget: among the points whose reported
// ε is ≤ the budget, the most accurate; ties go to the smaller ε, then to fewer steps.
struct BestConfiguration {
  std::string id;
  std::string name;
  std::optional<FrontierPoint> point;         // nullopt: no finished point within the budget
  std::optional<double> smallestEpsilonSeen;  // the smallest reported ε of any point (why none fits)
};

// Budget ε > 0, finite. Reads any frontier: over ε, over epochs at one ε, or models side by side.
Result<BestConfiguration> bestConfigurationFor(const GoalSeries& series, double epsilon,
                                               SeedStatistic statistic = SeedStatistic::kMean);
Result<std::vector<BestConfiguration>> bestConfigurationFor(const std::vector<GoalSeries>& series, double epsilon,
                                                            SeedStatistic statistic = SeedStatistic::kMean);
// The most accurate configuration over all series (ties: the smaller ε); nullptr when none fits.
const BestConfiguration* overallBest(const std::vector<BestConfiguration>& answers, SeedStatistic statistic);

// The answers in words, as the GUI and `dpx frontier` print them: "DP-SGD reaches 90 % at ε
// between 1 and 2 (first at target ε 2; ≈ 1.6 interpolated in log ε)".
std::string describe(const SmallestEpsilon& answer, double accuracy, SeedStatistic statistic);
std::string describe(const BestConfiguration& answer, double epsilon, SeedStatistic statistic);

}  // namespace dpx::core::training
