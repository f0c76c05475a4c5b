// Goal-seek on a computed frontier: the smallest ε that reaches an accuracy, the best
// configuration within an ε budget, and both answers in words.
#include "training/goal_seek.h"

#include <algorithm>
#include <cmath>

#include "common/format.h"

namespace dpx::core::training {
namespace {

std::string percent(double accuracy) { return formatNumber(100.0 * accuracy, 3) + " %"; }
std::string num(double v) { return formatNumber(v, 4); }

Status validateAccuracy(double accuracy) {
  if (!std::isfinite(accuracy) || !(accuracy > 0.0) || accuracy > 1.0) {
    std::string message =
        "target accuracy = " + formatNumber(accuracy) + " is out of range: must be a fraction in (0, 1]";
    if (std::isfinite(accuracy) && accuracy > 1.0 && accuracy <= 100.0) {
      message += " (" + formatNumber(accuracy) + " % is " + formatNumber(accuracy / 100.0) + ")";
    }
    return Status::invalidArgument(message);
  }
  return Status::ok();
}

Status validateBudget(double epsilon) {
  if (!std::isfinite(epsilon) || !(epsilon > 0.0)) {
    return Status::invalidArgument("ε budget = " + formatNumber(epsilon) +
                                   " is out of range: must be a finite number > 0");
  }
  return Status::ok();
}

// The finished points in order of target ε (a stable sort keeps the request's order of equal
// targets).
std::vector<FrontierPoint> finishedByTarget(const std::vector<FrontierPoint>& points) {
  std::vector<FrontierPoint> out;
  for (const FrontierPoint& p : points) {
    if (p.ok()) out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FrontierPoint& a, const FrontierPoint& b) { return a.targetEpsilon < b.targetEpsilon; });
  return out;
}

// "σ = 1.2, 10 epochs (1400 steps), batch 64, η = 0.5": what to set to get this point again.
std::string configuration(const FrontierPoint& p) {
  std::string text = "σ = " + num(p.sigma) + ", " + num(p.epochs) + " epochs";
  if (p.steps > 0) text += " (" + std::to_string(p.steps) + " steps)";
  if (p.batch > 0) text += ", batch " + std::to_string(p.batch);
  if (p.eta > 0.0) text += ", η = " + num(p.eta);
  return text;
}

// "target ε 2 (ε 1.98 reported)": the grid value and, when it differs, what the run's accountant certifies.
std::string epsilonOf(const FrontierPoint& p) {
  std::string text = "target ε " + num(p.targetEpsilon);
  if (p.epsilon && num(*p.epsilon) != num(p.targetEpsilon)) text += " (ε " + num(*p.epsilon) + " reported)";
  return text;
}

std::string statisticWords(SeedStatistic s) {
  return s == SeedStatistic::kWorstSeed ? " with every seed" : std::string();
}

}  // namespace

std::string_view seedStatisticName(SeedStatistic s) { return s == SeedStatistic::kMean ? "mean" : "min"; }

std::optional<SeedStatistic> parseSeedStatistic(std::string_view text) {
  if (text == "mean") return SeedStatistic::kMean;
  if (text == "min") return SeedStatistic::kWorstSeed;
  return std::nullopt;
}

std::vector<GoalSeries> goalSeries(const FrontierResult& frontier) {
  std::vector<GoalSeries> out;
  for (const FrontierSeries& s : frontier.series) {
    // "DP-SGD (Poisson, clipped)" reads as "DP-SGD" in a sentence; the tables beside it give the rest.
    const std::string full(mechanismName(s.mechanism));
    GoalSeries series;
    series.id = std::string(mechanismId(s.mechanism));
    series.name = full.substr(0, full.find(" ("));
    series.points = s.points;
    out.push_back(std::move(series));
  }
  return out;
}

std::vector<GoalSeries> goalSeries(const ModelComparisonResult& comparison) {
  std::vector<GoalSeries> out;
  for (const ModelComparisonSeries& s : comparison.series) out.push_back({s.id, s.label, s.points});
  return out;
}

double pointAccuracy(const FrontierPoint& p, SeedStatistic statistic) {
  return statistic == SeedStatistic::kMean ? p.accuracyMean : p.accuracyMin;
}

Result<SmallestEpsilon> smallestEpsilonFor(const GoalSeries& series, double accuracy, SeedStatistic statistic) {
  DPX_RETURN_IF_ERROR(validateAccuracy(accuracy));
  SmallestEpsilon answer;
  answer.id = series.id;
  answer.name = series.name;
  const std::vector<FrontierPoint> points = finishedByTarget(series.points);
  if (points.empty()) return answer;
  answer.smallestTarget = points.front().targetEpsilon;
  answer.largestTarget = points.back().targetEpsilon;
  for (const FrontierPoint& p : points) {
    if (!answer.best || pointAccuracy(p, statistic) > pointAccuracy(*answer.best, statistic)) answer.best = p;
  }
  const auto first = std::find_if(points.begin(), points.end(),
                                  [&](const FrontierPoint& p) { return pointAccuracy(p, statistic) >= accuracy; });
  if (first == points.end()) {
    answer.outcome = GoalOutcome::kNotReached;
    return answer;
  }
  answer.first = *first;
  // Every point before `first` misses; the bracket's lower end is the largest target strictly
  // below it (an equal target that misses is the same grid value, seeds apart).
  std::optional<FrontierPoint> below;
  for (auto it = points.begin(); it != first; ++it) {
    if (it->targetEpsilon < first->targetEpsilon) below = *it;
  }
  if (!below) {
    answer.outcome = GoalOutcome::kAtFirstPoint;
    return answer;
  }
  answer.outcome = GoalOutcome::kBetween;
  answer.lastMissed = below;
  const double lo = pointAccuracy(*below, statistic);
  const double hi = pointAccuracy(*first, statistic);
  const double t = hi > lo ? std::clamp((accuracy - lo) / (hi - lo), 0.0, 1.0) : 1.0;
  answer.interpolatedEpsilon =
      std::exp(std::log(below->targetEpsilon) + t * (std::log(first->targetEpsilon) - std::log(below->targetEpsilon)));
  return answer;
}

Result<std::vector<SmallestEpsilon>> smallestEpsilonFor(const FrontierResult& frontier, double accuracy,
                                                        SeedStatistic statistic) {
  DPX_RETURN_IF_ERROR(validateAccuracy(accuracy));
  if (frontier.vary != FrontierVary::kEpsilon) {
    return Status::invalidArgument(
        "the smallest ε for an accuracy needs a frontier over ε: this one varies the epochs at one ε");
  }
  std::vector<SmallestEpsilon> out;
  for (const GoalSeries& s : goalSeries(frontier)) {
    DPX_ASSIGN_OR_RETURN(SmallestEpsilon answer, smallestEpsilonFor(s, accuracy, statistic));
    out.push_back(std::move(answer));
  }
  return out;
}

const SmallestEpsilon* overallSmallest(const std::vector<SmallestEpsilon>& answers, SeedStatistic statistic) {
  const SmallestEpsilon* winner = nullptr;
  for (const SmallestEpsilon& a : answers) {
    if (!a.first) continue;
    if (!winner || a.first->targetEpsilon < winner->first->targetEpsilon ||
        (a.first->targetEpsilon == winner->first->targetEpsilon &&
         pointAccuracy(*a.first, statistic) > pointAccuracy(*winner->first, statistic))) {
      winner = &a;
    }
  }
  return winner;
}

Result<BestConfiguration> bestConfigurationFor(const GoalSeries& series, double epsilon, SeedStatistic statistic) {
  DPX_RETURN_IF_ERROR(validateBudget(epsilon));
  BestConfiguration answer;
  answer.id = series.id;
  answer.name = series.name;
  for (const FrontierPoint& p : series.points) {
    if (!p.ok() || !p.epsilon) continue;
    answer.smallestEpsilonSeen = std::min(answer.smallestEpsilonSeen.value_or(*p.epsilon), *p.epsilon);
    if (*p.epsilon > epsilon) continue;
    if (!answer.point) {
      answer.point = p;
      continue;
    }
    const FrontierPoint& b = *answer.point;
    const double a = pointAccuracy(p, statistic);
    const double ab = pointAccuracy(b, statistic);
    if (a > ab || (a == ab && (*p.epsilon < *b.epsilon || (*p.epsilon == *b.epsilon && p.steps < b.steps)))) {
      answer.point = p;
    }
  }
  return answer;
}

Result<std::vector<BestConfiguration>> bestConfigurationFor(const std::vector<GoalSeries>& series, double epsilon,
                                                            SeedStatistic statistic) {
  DPX_RETURN_IF_ERROR(validateBudget(epsilon));
  std::vector<BestConfiguration> out;
  for (const GoalSeries& s : series) {
    DPX_ASSIGN_OR_RETURN(BestConfiguration answer, bestConfigurationFor(s, epsilon, statistic));
    out.push_back(std::move(answer));
  }
  return out;
}

const BestConfiguration* overallBest(const std::vector<BestConfiguration>& answers, SeedStatistic statistic) {
  const BestConfiguration* winner = nullptr;
  for (const BestConfiguration& a : answers) {
    if (!a.point) continue;
    if (!winner) {
      winner = &a;
      continue;
    }
    const double x = pointAccuracy(*a.point, statistic);
    const double y = pointAccuracy(*winner->point, statistic);
    if (x > y || (x == y && *a.point->epsilon < *winner->point->epsilon)) winner = &a;
  }
  return winner;
}

std::string describe(const SmallestEpsilon& a, double accuracy, SeedStatistic statistic) {
  const std::string goal = percent(accuracy) + statisticWords(statistic);
  switch (a.outcome) {
    case GoalOutcome::kNoPoints:
      return a.name + ": no finished point to read " + percent(accuracy) + " from";
    case GoalOutcome::kNotReached:
      return a.name + " does not reach " + goal + " at any ε up to " + num(a.largestTarget) + " (best " +
             percent(pointAccuracy(*a.best, statistic)) + " at target ε " + num(a.best->targetEpsilon) + ")";
    case GoalOutcome::kAtFirstPoint:
      return a.name + " reaches " + goal + " already at the smallest ε computed, " + num(a.first->targetEpsilon) +
             " (" + percent(pointAccuracy(*a.first, statistic)) + "; " + configuration(*a.first) +
             "): the smallest ε that does may be lower";
    case GoalOutcome::kBetween:
      return a.name + " reaches " + goal + " at ε between " + num(a.lastMissed->targetEpsilon) + " and " +
             num(a.first->targetEpsilon) + " (first at " + epsilonOf(*a.first) + ": " +
             percent(pointAccuracy(*a.first, statistic)) + ", " + configuration(*a.first) + "; ≈ " +
             num(*a.interpolatedEpsilon) + " interpolated in log ε)";
  }
  return {};
}

std::string describe(const BestConfiguration& a, double epsilon, SeedStatistic statistic) {
  if (!a.point) {
    return a.name + " has no point at ε ≤ " + num(epsilon) +
           (a.smallestEpsilonSeen ? " (the smallest reported is " + num(*a.smallestEpsilonSeen) + ")"
                                  : std::string(" (no finished point)"));
  }
  const FrontierPoint& p = *a.point;
  return a.name + " at ε ≤ " + num(epsilon) + ": best " + percent(pointAccuracy(p, statistic)) +
         (statistic == SeedStatistic::kWorstSeed ? " (worst seed)" : std::string()) + " at " + epsilonOf(p) + ", " +
         configuration(p);
}

}  // namespace dpx::core::training
