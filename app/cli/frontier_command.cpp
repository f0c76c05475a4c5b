// dpx frontier: test accuracy against ε (or against epochs at a fixed ε) for several mechanisms,
// every point a run calibrated to its target and averaged over seeds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/registry.h"
#include "cli.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"
#include "training/frontier.h"
#include "training/goal_seek.h"
#include "training/mechanism.h"
#include "training/model_comparison.h"
#include "training_support.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using core::Result;
using core::Status;
using namespace core::training;

namespace {

constexpr int kDefaultPoints = 10;

void addFrontierOptions(CommandLine& parser) {
  addTrainingOptions(parser);
  parser.addOption("mechanisms",
                   "comma-separated private mechanisms (default dp-sgld,dp-sgd): dp-sgld, dp-sgd, cyclic, "
                   "outpert, sgld-posterior",
                   "list");
  parser.addOption("epsilons",
                   "target ε of each point (vary epsilon); with --vary epochs the fixed ε. Default: "
                   "--points targets log-spaced over [E/8, 8E] around --target-epsilon E",
                   "list");
  parser.addOption("points", "points of a default grid, 2-64 (default 10)", "P");
  parser.addOption("seeds", "runs per point, 1-50 (default 3)", "S");
  parser.addOption("vary",
                   "epsilon (default) | epochs | models (Tramèr & Boneh 2021's picture: the --models side by side, "
                   "each trained by DP-SGD with its own recipe, on --data's images)",
                   "what");
  parser.addOption("models",
                   "--vary models: comma-separated recipes (default linear-pixels,scatter-linear,cnn): "
                   "linear-pixels, scatter-linear, cnn, scatter-cnn",
                   "list");
  parser.addOption("epochs-list",
                   "vary epochs: the epochs of each point (default: --points values over [E/8, 8E] "
                   "around --epochs)",
                   "list");
  parser.addOption("csv", "CSV output, one row per point");
  parser.addOption("target-accuracy",
                   "goal-seek: the smallest ε at which each series reaches this test accuracy, read off the "
                   "points (a fraction in (0, 1], or a percentage with its sign: 0.9 or 90%); not with --vary epochs. "
                   "JSON: key target_accuracy",
                   "A");
  parser.addOption("best-at-epsilon",
                   "goal-seek: the most accurate point of each series whose reported ε is <= E, with its σ, epochs, "
                   "batch and η. JSON: key best_at_epsilon",
                   "E");
  parser.addOption("accuracy-statistic",
                   "what goal-seek reads of a point's seeds: mean (default, the frontier's line) or min (the worst "
                   "seed: every seed met the goal)",
                   "mean|min");
}

// What the goal-seek flags ask of the finished frontier.
struct GoalRequest {
  std::optional<double> accuracy;
  std::optional<double> budget;
  SeedStatistic statistic = SeedStatistic::kMean;
};

// "0.9" or "90%": accuracies are fractions everywhere in dpx (as --test-fraction, --target-tpr),
// and a bare 90 is refused rather than guessed to be a percentage.
Result<double> accuracyOption(const CommandLine& parser) {
  const std::string text(trimmed(parser.value("target-accuracy")));
  const bool percentSign = !text.empty() && text.back() == '%';
  DPX_ASSIGN_OR_RETURN(const double value,
                       parseNumber("target-accuracy", percentSign ? std::string_view(text).substr(0, text.size() - 1)
                                                                  : std::string_view(text)));
  const double accuracy = percentSign ? value / 100.0 : value;
  if (!(accuracy > 0.0) || accuracy > 1.0) {
    std::string message = "--target-accuracy " + text + ": must be a fraction in (0, 1] or a percentage in (0, 100]%";
    if (!percentSign && value > 1.0 && value <= 100.0) {
      message += " (for " + formatNumber(value) + " percent write " + formatNumber(value / 100.0) + " or " +
                 formatNumber(value) + "%)";
    }
    return Status::invalidArgument(message);
  }
  return accuracy;
}

Result<GoalRequest> goalFromParser(const CommandLine& parser) {
  GoalRequest goal;
  if (parser.isSet("target-accuracy")) {
    if (parser.isSet("vary") && parser.value("vary") == "epochs") {
      return Status::invalidArgument(
          "--target-accuracy needs a frontier over ε (--vary epsilon or models): with --vary epochs every point "
          "has the same ε; use --best-at-epsilon");
    }
    DPX_ASSIGN_OR_RETURN(goal.accuracy, accuracyOption(parser));
  }
  if (parser.isSet("best-at-epsilon")) {
    DPX_ASSIGN_OR_RETURN(const double budget, numberOption(parser, "best-at-epsilon"));
    if (!(budget > 0.0)) {
      return Status::invalidArgument("--best-at-epsilon " + formatNumber(budget) + ": must be an ε > 0");
    }
    goal.budget = budget;
  }
  if (parser.isSet("accuracy-statistic")) {
    DPX_ASSIGN_OR_RETURN(goal.statistic,
                         parseNamed<SeedStatistic>("accuracy-statistic", parser.value("accuracy-statistic"),
                                                   parseSeedStatistic, "mean or min"));
    if (!goal.accuracy && !goal.budget) {
      return Status::invalidArgument("--accuracy-statistic goes with --target-accuracy or --best-at-epsilon");
    }
  }
  return goal;
}

Result<std::vector<Mechanism>> mechanismsFromParser(const CommandLine& parser) {
  const std::string text = parser.isSet("mechanisms") ? parser.value("mechanisms")
                                                      : std::string(mechanismId(Mechanism::kDpSgld)) + "," +
                                                            std::string(mechanismId(Mechanism::kDpSgd));
  std::vector<Mechanism> out;
  // Empty entries ("a,,b", a trailing comma) are skipped; an entry of spaces is not a mechanism.
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = std::string_view(text).substr(start, comma - start);
    start = comma + 1;
    if (part.empty()) continue;
    const auto m = parseMechanism(trimmed(part));
    if (!m || !isPrivate(*m)) {
      return Status::invalidArgument("--mechanisms: '" + std::string(part) + "' is not a private mechanism (" +
                                     mechanismIdList(true) + ")");
    }
    out.push_back(*m);
  }
  if (out.empty()) return Status::invalidArgument("--mechanisms needs at least one mechanism");
  return out;
}

Result<FrontierRequest> requestFromParser(const CommandLine& parser, const TrainerConfig& base) {
  FrontierRequest request;
  request.base = base;
  DPX_ASSIGN_OR_RETURN(request.mechanisms, mechanismsFromParser(parser));
  DPX_ASSIGN_OR_RETURN(const std::int64_t seeds, integerOption(parser, "seeds", 3, 1, 50));
  request.seeds = static_cast<int>(seeds);
  DPX_ASSIGN_OR_RETURN(const std::int64_t points, integerOption(parser, "points", kDefaultPoints, 2, 64));
  const std::string vary = parser.isSet("vary") ? parser.value("vary") : "epsilon";
  if (vary == "epochs") {
    request.vary = FrontierVary::kEpochs;
  } else if (vary != "epsilon") {
    return Status::invalidArgument("--vary " + vary + ": must be epsilon, epochs or models");
  }
  if (parser.isSet("epsilons")) {
    DPX_ASSIGN_OR_RETURN(request.epsilons, numberList("epsilons", parser.value("epsilons")));
  } else if (base.targetEpsilon) {
    request.epsilons = request.vary == FrontierVary::kEpsilon
                           ? frontierEpsilonGrid(*base.targetEpsilon, static_cast<int>(points))
                           : std::vector<double>{*base.targetEpsilon};
  } else {
    return Status::invalidArgument("--epsilons LIST or --target-epsilon E is required (the targets of the points)");
  }
  for (double e : request.epsilons) {
    if (!(e > 0.0)) return Status::invalidArgument("--epsilons " + formatNumber(e) + ": every target ε must be > 0");
  }
  if (request.vary == FrontierVary::kEpochs) {
    if (parser.isSet("epochs-list")) {
      DPX_ASSIGN_OR_RETURN(request.epochsList, numberList("epochs-list", parser.value("epochs-list")));
      for (double e : request.epochsList) {
        if (!(e > 0.0) || e > 100000.0) {
          return Status::invalidArgument("--epochs-list " + formatNumber(e) + ": every entry must be in (0, 1e5]");
        }
      }
    } else {
      request.epochsList = frontierEpochsGrid(base.epochs, static_cast<int>(points));
    }
  } else if (parser.isSet("epochs-list")) {
    return Status::invalidArgument("--epochs-list is for --vary epochs");
  }
  return request;
}

// Whether a series' ε is an upper bound or an estimate (dp-sgd with gdp).
std::string_view boundOf(const FrontierSeries& s) {
  const core::accounting::Accountant* a = core::accounting::findAccountant(s.accountant);
  return a ? core::accounting::boundKindName(a->boundKind()) : std::string_view("upper");
}

// One point; a point whose runs failed keeps its keys, null, and says why.
void writePointJson(JsonWriter& json, const FrontierPoint& p) {
  json.beginObject().field("target_epsilon", p.targetEpsilon);
  if (p.epsilon) {
    json.field("epsilon", *p.epsilon);
  } else {
    json.key("epsilon").null();
  }
  json.field("epochs", p.epochs);
  // A point that failed before its calibration has no σ, η or steps (0 would read as "no noise").
  if (p.steps > 0) {
    json.field("steps", p.steps);
  } else {
    json.key("steps").null();
  }
  if (p.sigma > 0.0) {
    json.field("sigma", p.sigma);
  } else {
    json.key("sigma").null();
  }
  if (p.eta > 0.0) {
    json.field("eta", p.eta);
  } else {
    json.key("eta").null();
  }
  if (p.batch > 0) {
    json.field("batch", p.batch);
  } else {
    json.key("batch").null();
  }
  if (p.ok()) {
    json.field("accuracy_mean", p.accuracyMean).field("accuracy_min", p.accuracyMin);
    json.field("accuracy_max", p.accuracyMax);
  } else {
    json.key("accuracy_mean").null();
    json.key("accuracy_min").null();
    json.key("accuracy_max").null();
    json.field("error", p.error);
  }
  json.field("seeds", static_cast<std::int64_t>(p.seeds));
  json.endObject();
}

void optionalField(JsonWriter& json, std::string_view key, std::optional<double> v) {
  if (v) {
    json.field(key, *v);
  } else {
    json.key(key).null();
  }
}

std::string_view outcomeName(GoalOutcome o) {
  switch (o) {
    case GoalOutcome::kBetween:
      return "between";
    case GoalOutcome::kAtFirstPoint:
      return "at_first_point";
    case GoalOutcome::kNotReached:
      return "not_reached";
    case GoalOutcome::kNoPoints:
      return "no_points";
  }
  return "no_points";
}

// The goal-seek answers for a frontier's series; `seriesKey` is "mechanism" or "model" (as the
// frontier's own array names its entries).
struct GoalAnswers {
  std::vector<SmallestEpsilon> smallest;
  std::vector<BestConfiguration> best;
};

Result<GoalAnswers> answerGoals(const GoalRequest& goal, const std::vector<GoalSeries>& series) {
  GoalAnswers answers;
  if (goal.accuracy) {
    for (const GoalSeries& s : series) {
      DPX_ASSIGN_OR_RETURN(SmallestEpsilon a, smallestEpsilonFor(s, *goal.accuracy, goal.statistic));
      answers.smallest.push_back(std::move(a));
    }
  }
  if (goal.budget) {
    DPX_ASSIGN_OR_RETURN(answers.best, bestConfigurationFor(series, *goal.budget, goal.statistic));
  }
  return answers;
}

// "target_accuracy": {"accuracy", "statistic", the overall answer ("<seriesKey>", "target_epsilon",
// "epsilon", "sigma"; null with a "reason" when no series reaches it), "per_<seriesKey>": [...]}.
void writeTargetAccuracyJson(JsonWriter& json, const GoalRequest& goal, const GoalAnswers& answers,
                             const std::string& seriesKey) {
  json.key("target_accuracy").beginObject();
  json.field("accuracy", *goal.accuracy).field("statistic", seedStatisticName(goal.statistic));
  if (const SmallestEpsilon* w = overallSmallest(answers.smallest, goal.statistic)) {
    json.field(seriesKey, w->id).field("target_epsilon", w->first->targetEpsilon);
    optionalField(json, "epsilon", w->first->epsilon);
    json.field("sigma", w->first->sigma);
  } else {
    json.key(seriesKey).null();
    json.key("target_epsilon").null();
    json.key("epsilon").null();
    json.key("sigma").null();
    json.field("reason",
               "no " + seriesKey + " reaches " + formatNumber(100 * *goal.accuracy, 4) + " % at any target ε computed");
  }
  json.key("per_" + seriesKey).beginArray();
  for (const SmallestEpsilon& a : answers.smallest) {
    json.beginObject().field(seriesKey, a.id).field("reached", a.reached()).field("outcome", outcomeName(a.outcome));
    if (a.first) {
      json.key("bracket").beginArray();
      a.lastMissed ? json.value(a.lastMissed->targetEpsilon) : json.null();
      json.value(a.first->targetEpsilon).endArray();
    } else {
      json.key("bracket").null();
    }
    optionalField(json, "interpolated_epsilon", a.interpolatedEpsilon);
    json.key("point");
    a.first ? writePointJson(json, *a.first) : static_cast<void>(json.null());
    optionalField(json, "best_accuracy",
                  a.best ? std::optional<double>(pointAccuracy(*a.best, goal.statistic)) : std::nullopt);
    optionalField(json, "best_target_epsilon", a.best ? std::optional<double>(a.best->targetEpsilon) : std::nullopt);
    optionalField(json, "largest_target_epsilon",
                  a.outcome == GoalOutcome::kNoPoints ? std::nullopt : std::optional<double>(a.largestTarget));
    json.field("message", describe(a, *goal.accuracy, goal.statistic));
    json.endObject();
  }
  json.endArray().endObject();
}

// "best_at_epsilon": {"epsilon_max", "statistic", the overall best ("<seriesKey>", "accuracy",
// "point"; null with a "reason" when no point fits), "per_<seriesKey>": [...]}.
void writeBestAtEpsilonJson(JsonWriter& json, const GoalRequest& goal, const GoalAnswers& answers,
                            const std::string& seriesKey) {
  json.key("best_at_epsilon").beginObject();
  json.field("epsilon_max", *goal.budget).field("statistic", seedStatisticName(goal.statistic));
  if (const BestConfiguration* w = overallBest(answers.best, goal.statistic)) {
    json.field(seriesKey, w->id).field("accuracy", pointAccuracy(*w->point, goal.statistic)).key("point");
    writePointJson(json, *w->point);
  } else {
    json.key(seriesKey).null();
    json.key("accuracy").null();
    json.key("point").null();
    json.field("reason", "no point of any " + seriesKey + " reports ε <= " + formatNumber(*goal.budget));
  }
  json.key("per_" + seriesKey).beginArray();
  for (const BestConfiguration& a : answers.best) {
    json.beginObject().field(seriesKey, a.id).field("found", a.point.has_value());
    optionalField(json, "accuracy",
                  a.point ? std::optional<double>(pointAccuracy(*a.point, goal.statistic)) : std::nullopt);
    json.key("point");
    a.point ? writePointJson(json, *a.point) : static_cast<void>(json.null());
    optionalField(json, "smallest_epsilon_reported", a.smallestEpsilonSeen);
    json.field("message", describe(a, *goal.budget, goal.statistic));
    json.endObject();
  }
  json.endArray().endObject();
}

void writeGoalJson(JsonWriter& json, const GoalRequest& goal, const GoalAnswers& answers,
                   const std::string& seriesKey) {
  if (goal.accuracy) writeTargetAccuracyJson(json, goal, answers, seriesKey);
  if (goal.budget) writeBestAtEpsilonJson(json, goal, answers, seriesKey);
}

void writeGoalText(std::ostream& out, const GoalRequest& goal, const GoalAnswers& answers) {
  const std::string over = goal.statistic == SeedStatistic::kMean ? "mean over seeds" : "worst seed";
  if (goal.accuracy) {
    out << "goal: accuracy ≥ " << formatNumber(100 * *goal.accuracy, 4) << " % (" << over << ")\n";
    for (const SmallestEpsilon& a : answers.smallest)
      out << "  " << describe(a, *goal.accuracy, goal.statistic) << "\n";
  }
  if (goal.budget) {
    out << "goal: best accuracy at ε ≤ " << formatNumber(*goal.budget, 4) << " (" << over << ")\n";
    for (const BestConfiguration& a : answers.best) out << "  " << describe(a, *goal.budget, goal.statistic) << "\n";
  }
}

void writeJson(std::ostream& out, const std::string& data, const FrontierResult& r, const GoalRequest& goal,
               const GoalAnswers& answers) {
  JsonWriter json;
  json.beginObject();
  json.field("data", data);
  json.field("vary", r.vary == FrontierVary::kEpsilon ? "epsilon" : "epochs");
  json.field("delta", r.delta);
  json.key("mechanisms").beginArray();
  for (const FrontierSeries& s : r.series) {
    json.beginObject().field("mechanism", mechanismId(s.mechanism)).field("accountant", s.accountant);
    json.field("bound", boundOf(s));
    json.key("points").beginArray();
    for (const FrontierPoint& p : s.points) writePointJson(json, p);
    json.endArray();
    json.endObject();
  }
  json.endArray();
  if (r.nonPrivateAccuracy) {
    json.field("nonprivate_accuracy", *r.nonPrivateAccuracy);
  } else {
    json.key("nonprivate_accuracy").null();
  }
  if (r.vary == FrontierVary::kEpochs) {
    json.key("nonprivate_by_epochs").beginArray();
    for (double a : r.nonPrivateByEpochs) json.value(a);
    json.endArray();
  }
  writeGoalJson(json, goal, answers, "mechanism");
  json.field("runs", r.runs).field("seconds", r.seconds);
  json.endObject();
  out << json.str() << "\n";
}

void writeCsv(std::ostream& out, const FrontierResult& r) {
  out << "mechanism,target_epsilon,epsilon,epochs,steps,sigma,eta,accuracy_mean,accuracy_min,accuracy_max,seeds\n";
  for (const FrontierSeries& s : r.series) {
    for (const FrontierPoint& p : s.points) {
      out << mechanismId(s.mechanism) << ',' << formatNumber(p.targetEpsilon) << ','
          << (p.epsilon ? formatNumber(*p.epsilon) : std::string()) << ',' << formatNumber(p.epochs) << ','
          << (p.steps > 0 ? std::to_string(p.steps) : std::string()) << ','
          << (p.sigma > 0.0 ? formatNumber(p.sigma) : std::string()) << ','
          << (p.eta > 0.0 ? formatNumber(p.eta) : std::string()) << ','
          << (p.ok() ? formatNumber(p.accuracyMean) : std::string()) << ','
          << (p.ok() ? formatNumber(p.accuracyMin) : std::string()) << ','
          << (p.ok() ? formatNumber(p.accuracyMax) : std::string()) << ',' << p.seeds << '\n';
    }
  }
}

// Left-aligned in `width` columns (std::setw counts bytes, and "—" is three of them).
std::string column(const std::string& text, std::size_t width = 10) {
  std::size_t shown = 0;
  for (const unsigned char c : text) shown += (c & 0xC0) != 0x80;
  return text + std::string(shown < width ? width - shown : 0, ' ');
}

// "  x  ε  σ  accuracy (min–max)", or the point's error in place of its accuracy.
std::string pointLine(const FrontierPoint& p, double x) {
  std::ostringstream line;
  line << "  " << column(formatNumber(x, 4)) << " " << column(p.epsilon ? formatNumber(*p.epsilon, 4) : "—") << " "
       << column(p.sigma > 0.0 ? formatNumber(p.sigma, 4) : "—") << " ";
  if (p.ok()) {
    line << formatNumber(100 * p.accuracyMean, 4) << "% (" << formatNumber(100 * p.accuracyMin, 4) << "–"
         << formatNumber(100 * p.accuracyMax, 4) << "%)";
  } else {
    line << (p.error.empty() ? std::string("not run (cancelled)") : p.error);
  }
  return line.str();
}

void writeText(std::ostream& out, const std::string& data, const FrontierResult& r) {
  out << data << "\n";
  const bool byEpsilon = r.vary == FrontierVary::kEpsilon;
  for (const FrontierSeries& s : r.series) {
    out << mechanismName(s.mechanism) << " (ε from " << s.accountant
        << (std::string_view(boundOf(s)) == "estimate" ? ", an estimate" : "") << ")\n";
    out << (byEpsilon ? "  target ε   ε          σ          accuracy (min–max)\n"
                      : "  epochs     ε          σ          accuracy (min–max)\n");
    for (const FrontierPoint& p : s.points) out << pointLine(p, byEpsilon ? p.targetEpsilon : p.epochs) << "\n";
  }
  if (r.nonPrivateAccuracy) out << "non-private SGD: " << formatNumber(100 * *r.nonPrivateAccuracy, 4) << "%\n";
  out << r.runs << " runs in " << formatNumber(r.seconds, 3) << " s, δ = " << formatNumber(r.delta) << "\n";
}

// --vary models: the recipes, the targets (--epsilons, or --points around --target-epsilon), seeds,
// δ, seed, threads and accountant; the knobs that each recipe sets itself are refused.
Result<ModelComparisonRequest> comparisonFromParser(const CommandLine& parser, const TrainerConfig& base) {
  for (const char* option : {"mechanisms", "model", "features", "scaling", "epochs-list", "hidden", "activation"}) {
    if (parser.isSet(option)) {
      return Status::invalidArgument(std::string("--") + option +
                                     " is not for --vary models: every recipe sets its own model, features and "
                                     "settings (choose the recipes with --models)");
    }
  }
  ModelComparisonRequest request;
  request.source = parser.value("data");
  const std::string list = parser.isSet("models") ? parser.value("models") : "linear-pixels,scatter-linear,cnn";
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string part(trimmed(std::string_view(list).substr(start, comma - start)));
    start = comma + 1;
    if (!part.empty()) request.recipes.push_back(part);
  }
  DPX_ASSIGN_OR_RETURN(const std::int64_t seeds, integerOption(parser, "seeds", 3, 1, 50));
  DPX_ASSIGN_OR_RETURN(const std::int64_t points, integerOption(parser, "points", kDefaultPoints, 2, 64));
  request.seeds = static_cast<int>(seeds);
  if (parser.isSet("epsilons")) {
    DPX_ASSIGN_OR_RETURN(request.epsilons, numberList("epsilons", parser.value("epsilons")));
  } else if (base.targetEpsilon) {
    request.epsilons = frontierEpsilonGrid(*base.targetEpsilon, static_cast<int>(points));
  } else {
    return Status::invalidArgument("--epsilons LIST or --target-epsilon E is required (the targets of the points)");
  }
  request.delta = base.knobs.delta;
  request.seed = base.seed;
  request.threads = base.threads;
  if (!base.accountant.empty()) request.accountant = base.accountant;
  return request;
}

void writeComparisonJson(std::ostream& out, const ModelComparisonResult& r, const GoalRequest& goal,
                         const GoalAnswers& answers) {
  JsonWriter json;
  json.beginObject().field("vary", "models").field("delta", r.delta).field("accountant", r.accountant);
  json.key("models").beginArray();
  for (const ModelComparisonSeries& s : r.series) {
    json.beginObject().field("model", s.id).field("label", s.label).field("settings", s.settings);
    json.field("data", s.data);
    if (!s.error.empty()) json.field("error", s.error);
    json.key("points").beginArray();
    for (const FrontierPoint& p : s.points) writePointJson(json, p);
    json.endArray().endObject();
  }
  json.endArray();
  writeGoalJson(json, goal, answers, "model");
  json.field("cancelled", r.cancelled).field("runs", r.runs).field("seconds", r.seconds).endObject();
  out << json.str() << "\n";
}

void writeComparisonCsv(std::ostream& out, const ModelComparisonResult& r) {
  out << "model,target_epsilon,epsilon,steps,sigma,accuracy_mean,accuracy_min,accuracy_max,seeds\n";
  for (const ModelComparisonSeries& s : r.series) {
    for (const FrontierPoint& p : s.points) {
      out << s.id << ',' << formatNumber(p.targetEpsilon) << ','
          << (p.epsilon ? formatNumber(*p.epsilon) : std::string()) << ','
          << (p.steps > 0 ? std::to_string(p.steps) : std::string()) << ','
          << (p.sigma > 0.0 ? formatNumber(p.sigma) : std::string()) << ','
          << (p.ok() ? formatNumber(p.accuracyMean) : std::string()) << ','
          << (p.ok() ? formatNumber(p.accuracyMin) : std::string()) << ','
          << (p.ok() ? formatNumber(p.accuracyMax) : std::string()) << ',' << p.seeds << '\n';
    }
  }
}

void writeComparisonText(std::ostream& out, const ModelComparisonResult& r) {
  for (const ModelComparisonSeries& s : r.series) {
    out << s.label << " (" << s.id << "): " << s.settings << "\n";
    if (!s.error.empty()) {
      out << "  " << s.error << "\n";
      continue;
    }
    out << "  target ε   ε          σ          accuracy (min–max)\n";
    for (const FrontierPoint& p : s.points) out << pointLine(p, p.targetEpsilon) << "\n";
  }
  out << r.runs << " runs in " << formatNumber(r.seconds, 3) << " s, DP-SGD with ε from " << r.accountant
      << " at δ = " << formatNumber(r.delta) << (r.cancelled ? " (cancelled)" : "") << "\n";
}

int commandCompareModels(const CommandLine& parser, const TrainerConfig& base, const GoalRequest& goal, Io& io) {
  Result<ModelComparisonRequest> request = comparisonFromParser(parser, base);
  if (!request) return fail(io, request.status());
  DatasetCache cache(2);
  ModelComparisonCallbacks callbacks;
  if (!parser.isSet("quiet")) {
    callbacks.status = [&io](const std::string& text) {
      io.err << text << "\n";
      io.err.flush();
    };
  }
  Result<ModelComparisonResult> result = compareModels(*request, cache, callbacks);
  if (!result) return fail(io, result.status());
  const Result<GoalAnswers> answers = answerGoals(goal, goalSeries(*result));
  if (!answers) return fail(io, answers.status());
  if (parser.isSet("json")) {
    writeComparisonJson(io.out, *result, goal, *answers);
  } else if (parser.isSet("csv")) {
    writeComparisonCsv(io.out, *result);
  } else {
    writeComparisonText(io.out, *result);
    writeGoalText(io.out, goal, *answers);
  }
  return kExitOk;
}

}  // namespace

int commandFrontier(const Arguments& args, Io& io) {
  CommandLine parser;
  addFrontierOptions(parser);
  if (auto code = parseOrExit(parser, args, io,
                              "the privacy–utility frontier: test accuracy against ε (or epochs at a "
                              "fixed ε), each point calibrated to its target and averaged over seeds")) {
    return *code;
  }
  if (Status s = oneOutputFormat(parser); !s.isOk()) return fail(io, s);
  Result<TrainerConfig> base = trainerConfigFromParser(parser);
  if (!base) return fail(io, base.status());
  // Goal-seek flags are checked before any training: a typo should not cost the whole frontier.
  const Result<GoalRequest> goal = goalFromParser(parser);
  if (!goal) return fail(io, goal.status());
  if (parser.isSet("csv") && (goal->accuracy || goal->budget)) {
    return fail(io, Status::invalidArgument(
                        "--target-accuracy and --best-at-epsilon answer in the text or --json output (--csv is one "
                        "row per point)"));
  }
  if (parser.isSet("vary") && parser.value("vary") == "models") return commandCompareModels(parser, *base, *goal, io);
  if (parser.isSet("models")) return fail(io, Status::invalidArgument("--models is for --vary models"));
  Result<FrontierRequest> request = requestFromParser(parser, *base);
  if (!request) return fail(io, request.status());
  Result<TrainingData> data = trainingDataFromParser(parser, base->seed);
  if (!data) return fail(io, data.status());
  Result<FrontierResult> result = computeFrontier(*request, data->data);
  if (!result) return fail(io, result.status());
  const Result<GoalAnswers> answers = answerGoals(*goal, goalSeries(*result));
  if (!answers) return fail(io, answers.status());
  if (parser.isSet("json")) {
    writeJson(io.out, data->description, *result, *goal, *answers);
  } else if (parser.isSet("csv")) {
    writeCsv(io.out, *result);
  } else {
    writeText(io.out, data->description, *result);
    writeGoalText(io.out, *goal, *answers);
  }
  return kExitOk;
}

}  // namespace dpx::cli
