// dpx train | audit.
#include <cmath>
#include <memory>
#include <string>
#include <string_view>

#include "accounting/registry.h"
#include "cli.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"
#include "training/dataset.h"
#include "training/mechanism.h"
#include "training/trainer.h"
#include "training_support.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using core::Result;
using core::Status;
using namespace core::training;

namespace {

// "dp-sgd only: rdp | gdp | pld | random-allocation; default: the one that analyses the run's
// --sampling (balls-in-bins: random-allocation), else rdp".
std::string dpSgdAccountantHelp() {
  std::string ids, bySampling;
  for (std::string_view id : accountantsFor(Mechanism::kDpSgd)) {
    ids += (ids.empty() ? "" : " | ") + std::string(id);
    const core::accounting::Accountant* a = core::accounting::findAccountant(id);
    if (a && a->assumptions().sampling != mechanismInfo(Mechanism::kDpSgd).sampling) {
      bySampling += (bySampling.empty() ? "" : ", ") + std::string(core::samplingName(a->assumptions().sampling)) +
                    ": " + std::string(id);
    }
  }
  return "dp-sgd only: " + ids + "; default: the one that analyses the run's --sampling (" + bySampling + "), else " +
         std::string(accountantsFor(Mechanism::kDpSgd).front());
}

}  // namespace

void addTrainingOptions(CommandLine& parser) {
  addKnobOptions(parser);
  parser.addOption("data", "builtin:digits | builtin:breast-cancer | builtin:fashion-mnist | a CSV, LIBSVM or IDX path",
                   "source");
  parser.addOption("mechanism", "dp-sgld (default) | dp-sgd | cyclic | outpert | sgld-posterior | sgd", "id");
  parser.addOption("accountant", dpSgdAccountantHelp(), "id");
  parser.addOption("target-epsilon", "calibrate σ (sgld-posterior: η) so the run's ε at δ is at most this", "E");
  parser.addOption("seed", "random seed (default 1)", "S");
  parser.addOption("threads", "worker threads, 0 = all cores (default)", "T");
  parser.addOption("test-fraction", "share of records held out when the source has no test set (default 0.2)", "F");
  parser.addOption("label-column", "CSV: 0-based label column, negative from the end", "i");
  parser.addOption("features",
                   "raw (default) | scatternet: the ScatterNet features of images (J = 2, L = 8, order 2, "
                   "GroupNorm(27); Tramèr & Boneh 2021), computed once per dataset and cached",
                   "name");
  parser.addOption("scaling",
                   "feature rows: unit-norm (x/‖x‖, default) | clip-norm (x/max(1, ‖x‖)) | none (as read: raw "
                   "features then take their Lipschitz bound from the largest row norm; scatternet keeps its "
                   "GroupNorm's bound, ‖x‖ < 63)",
                   "name");
  parser.addOption("momentum", "heavy-ball coefficient μ of --optimizer momentum, in [0, 1) (default 0.9)", "mu");
  parser.addOption("model",
                   "linear (default: softmax regression) | mlp (one hidden layer, --hidden units) | cnn (the "
                   "tanh CNN of Papernot et al. 2020 on 28 × 28 images) | scatter-cnn (Tramèr & Boneh 2021's CNN on "
                   "ScatterNet features); networks are not convex: dp-sgd, sgld-posterior and sgd train them",
                   "name");
  parser.addOption("hidden", "mlp: hidden units, in [1, 4096] (default 16, Bu et al. 2020's Adult model)", "N");
  parser.addOption("activation", "mlp, cnn, scatter-cnn: tanh | relu (default: tanh for the CNNs, relu for the mlp)",
                   "name");
  // --eta (a knob flag) also takes "auto" here: η = 1/(2β), β = (R² + 1)/2 + λ for rows of norm ≤ R.
  parser.addOption("json", "machine-readable JSON output");
  parser.addOption("quiet", "no per-epoch lines on stderr");
}

Result<std::int64_t> integerOption(const CommandLine& parser, std::string_view name, std::int64_t fallback,
                                   std::int64_t lo, std::int64_t hi) {
  if (!parser.isSet(name)) return fallback;
  DPX_ASSIGN_OR_RETURN(const double v, parseNumber(name, parser.value(name)));
  if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi)) {
    return Status::invalidArgument("--" + std::string(name) + " " + parser.value(name) + ": must be an integer in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<std::int64_t>(v);
}

Result<ModelSpec> modelSpecFromParser(const CommandLine& parser) {
  ModelSpec spec;
  if (parser.isSet("model")) {
    const std::string name = parser.value("model");
    const std::optional<ModelKind> kind = parseModelKind(name);
    if (!kind) return Status::invalidArgument("--model " + name + ": must be linear, mlp, cnn or scatter-cnn");
    spec.kind = *kind;
  }
  if (parser.isSet("hidden")) {
    DPX_ASSIGN_OR_RETURN(const std::int64_t hidden, integerOption(parser, "hidden", 16, 1, 4096));
    spec.hidden = static_cast<int>(hidden);
  }
  if (parser.isSet("activation")) {
    const std::string name = parser.value("activation");
    spec.activation = parseActivation(name);
    if (!spec.activation) return Status::invalidArgument("--activation " + name + ": must be tanh or relu");
  }
  return spec;
}

Result<TrainerConfig> trainerConfigFromParser(const CommandLine& parser) {
  TrainerConfig config;
  const std::string mechanismText =
      parser.isSet("mechanism") ? parser.value("mechanism") : std::string(mechanismId(Mechanism::kDpSgld));
  const auto mechanism = parseMechanism(mechanismText);
  if (!mechanism) {
    return Status::invalidArgument("--mechanism '" + mechanismText + "': must be " + mechanismIdList(true) + " or " +
                                   std::string(mechanismId(Mechanism::kSgd)));
  }
  config.mechanism = *mechanism;
  if (parser.isSet("accountant")) config.accountant = parser.value("accountant");
  if (parser.isSet("target-epsilon")) {
    DPX_ASSIGN_OR_RETURN(config.targetEpsilon, targetEpsilonOption(parser));
  }
  DPX_ASSIGN_OR_RETURN(const std::int64_t seed, integerOption(parser, "seed", 1, 0, std::int64_t{1} << 53));
  config.seed = static_cast<std::uint64_t>(seed);
  DPX_ASSIGN_OR_RETURN(const std::int64_t threads, integerOption(parser, "threads", 0, 0, 1024));
  config.threads = static_cast<int>(threads);
  // The knobs, except n and K which the data and --epochs decide.
  if (parser.isSet("n") || parser.isSet("K")) {
    return Status::invalidArgument("--n and --K are set by the data and --epochs when training");
  }
  config.epochs = 10;
  if (parser.isSet("epochs")) {
    DPX_ASSIGN_OR_RETURN(config.epochs, parseNumber("epochs", parser.value("epochs")));
    if (!(config.epochs > 0.0) || config.epochs > 100000.0) {
      return Status::invalidArgument("--epochs " + formatNumber(config.epochs) + ": must be in (0, 1e5]");
    }
  }
  DPX_ASSIGN_OR_RETURN(config.knobs, knobsFromParser(parser, KnobContext::kTraining));
  config.etaFromSmoothness = parser.isSet("eta") && parser.value("eta") == "auto";
  DPX_ASSIGN_OR_RETURN(config.model, modelSpecFromParser(parser));
  if (parser.isSet("momentum")) {
    DPX_ASSIGN_OR_RETURN(config.momentum, parseNumber("momentum", parser.value("momentum")));
    if (!(config.momentum >= 0.0 && config.momentum < 1.0)) {
      return Status::invalidArgument("--momentum " + parser.value("momentum") + ": must be in [0, 1)");
    }
  }
  return config;
}

Result<TrainingData> trainingDataFromParser(const CommandLine& parser, std::uint64_t seed) {
  if (!parser.isSet("data")) {
    return Status::invalidArgument(
        "--data is required: builtin:digits, builtin:breast-cancer, builtin:fashion-mnist "
        "or a file");
  }
  double testFraction = 0.2;
  if (parser.isSet("test-fraction")) {
    DPX_ASSIGN_OR_RETURN(testFraction, parseNumber("test-fraction", parser.value("test-fraction")));
    if (!(testFraction >= 0.0 && testFraction < 1.0)) {
      return Status::invalidArgument("--test-fraction " + formatNumber(testFraction) + ": must be in [0, 1)");
    }
  }
  LoadOptions load;
  if (parser.isSet("label-column")) {
    DPX_ASSIGN_OR_RETURN(const std::int64_t column, integerOption(parser, "label-column", -1, -100000, 100000));
    load.labelColumn = static_cast<int>(column);
  }
  // The CNNs read pixels as they are (x/255) or ScatterNet's maps, not unit-norm rows.
  DPX_ASSIGN_OR_RETURN(const ModelSpec model, modelSpecFromParser(parser));
  if (model.kind == ModelKind::kCnn || model.kind == ModelKind::kScatterCnn) load.scaling = FeatureScaling::kNone;
  if (model.kind == ModelKind::kScatterCnn) load.features = FeatureKind::kScatterNet;
  if (parser.isSet("features")) {
    const std::string name = parser.value("features");
    const std::optional<FeatureKind> kind = parseFeatureKind(name);
    if (!kind) return Status::invalidArgument("--features " + name + ": must be raw or scatternet");
    load.features = *kind;
  }
  if (parser.isSet("scaling")) {
    const std::string name = parser.value("scaling");
    load.scaling = parseFeatureScaling(name);
    if (!load.scaling) return Status::invalidArgument("--scaling " + name + ": must be unit-norm, clip-norm or none");
  }
  DPX_ASSIGN_OR_RETURN(LoadedData loaded, loadData(parser.value("data"), load));
  TrainingData out;
  out.description = loaded.description;
  DPX_ASSIGN_OR_RETURN(TrainTestSplit split, trainTestSplit(std::move(loaded), testFraction, seed));
  out.data = std::make_shared<const TrainTestSplit>(std::move(split));
  return out;
}

namespace {

// Why Trainer::create refused the run. A valid run whose target ε cannot be met is a fact about
// the run (exit 1, as in dpx calibrate), not invalid input: tell the two apart by building the
// run without the target.
Status creationFailure(const TrainerConfig& config, const std::shared_ptr<const TrainTestSplit>& data,
                       const Status& refusal) {
  if (refusal.code() != core::StatusCode::kInvalidArgument || !config.targetEpsilon ||
      config.mechanism == Mechanism::kSgd) {
    return refusal;
  }
  TrainerConfig untargeted = config;
  untargeted.targetEpsilon.reset();
  if (Trainer::create(untargeted, data)) return Status(core::StatusCode::kNotApplicable, refusal.message());
  return refusal;
}

}  // namespace

Result<TrainingSetup> setupTraining(const CommandLine& parser) {
  DPX_ASSIGN_OR_RETURN(const TrainerConfig config, trainerConfigFromParser(parser));
  DPX_ASSIGN_OR_RETURN(TrainingData data, trainingDataFromParser(parser, config.seed));
  TrainingSetup setup;
  setup.description = data.description;
  setup.data = data.data;
  Result<std::unique_ptr<Trainer>> trainer = Trainer::create(config, setup.data);
  if (!trainer) return creationFailure(config, setup.data, trainer.status());
  setup.trainer = std::move(*trainer);
  return setup;
}

namespace {

void writeResolved(JsonWriter& json, const ResolvedRun& run) {
  json.field("accountant", run.accountant);
  if (!run.accountant.empty()) json.field("bound", run.epsilonIsEstimate ? "estimate" : "upper");
  json.field("sigma", run.sigma)
      .field("eta", run.eta)
      .field("clip_norm", std::isfinite(run.clipNorm) ? run.clipNorm : 0.0);
  json.field("steps", run.steps);
  if (run.accountantParams.convexLoss) {  // softmax regression's constants; a network has none
    json.field("lipschitz_from_data", run.lipschitzFromData);
    json.field("beta", run.betaUsed).field("beta_empirical", run.betaEmpirical);
  }
  if (run.mechanism == Mechanism::kOutpert) json.field("output_noise_std", run.outputNoiseStd);
  json.key("notes").beginArray();
  for (const std::string& n : run.notes) json.value(n);
  json.endArray();
  // Values the run used instead of a knob, and why (the data's L, a calibrated σ, …).
  json.key("overrides").beginArray();
  for (const KnobOverride& o : run.overrides) {
    if (o.knob == "n" || o.knob == "K") continue;  // dpx train takes n and K from the data and --epochs, not knobs
    json.beginObject().field("knob", o.knob).field("knob_value", o.knobValue).field("used", o.usedValue);
    json.field("reason", o.reason).endObject();
  }
  json.endArray();
  json.key("violations").beginArray();
  for (const std::string& v : run.violations) json.value(v);
  json.endArray();
}

}  // namespace

void writeTrainingJson(JsonWriter& json, const TrainingSetup& setup, const TrainingResult& r) {
  json.field("mechanism", mechanismId(r.run.mechanism));
  const ModelSpec model = r.model.spec();
  json.key("model").beginObject().field("kind", modelKindName(model.kind));
  json.field("parameters", static_cast<std::int64_t>(r.model.parameters().size()));
  if (const Network* network = r.model.network()) {
    json.field("activation", activationName(model.effectiveActivation()));
    json.key("layers").beginArray();
    for (const std::string& layer : network->describe()) json.value(layer);
    json.endArray();
  }
  json.endObject();
  json.field("data", setup.description);
  json.field("private", r.epsilon.has_value());
  if (r.epsilon) {
    json.field("epsilon", *r.epsilon);
  } else {
    json.key("epsilon").null();
  }
  json.field("delta", r.delta);
  json.field("epochs", static_cast<std::int64_t>(r.history.size()));
  writeResolved(json, r.run);
  json.key("history").beginArray();
  for (const EpochRecord& e : r.history) {
    json.beginObject().field("epoch", e.epoch).field("steps", e.steps).field("train_accuracy", e.trainAccuracy);
    json.field("test_accuracy", e.testAccuracy).field("loss", e.loss);
    if (e.epsilonSpent) {
      json.field("epsilon_spent", *e.epsilonSpent);
    } else {
      json.key("epsilon_spent").null();
    }
    json.endObject();
  }
  json.endArray();
  json.field("train_accuracy", r.finalTrainAccuracy).field("test_accuracy", r.finalTestAccuracy);
  json.field("cancelled", r.cancelled).field("steps_done", r.stepsDone);
  json.field("examples_per_second",
             r.trainingSeconds > 0 ? static_cast<double>(r.examplesProcessed) / r.trainingSeconds : 0.0);
  json.field("training_seconds", r.trainingSeconds).field("seconds", r.seconds);
}

namespace {

void printEpoch(std::ostream& err, const EpochRecord& e, int epochs) {
  err << "epoch " << e.epoch << "/" << epochs << "  train " << formatNumber(100 * e.trainAccuracy, 4) << "%  test "
      << formatNumber(100 * e.testAccuracy, 4) << "%  loss " << formatNumber(e.loss, 4);
  if (e.epsilonSpent) err << "  ε " << formatNumber(*e.epsilonSpent, 4);
  err << "\n";
  err.flush();
}

}  // namespace

int commandTrain(const Arguments& args, Io& io) {
  CommandLine parser;
  addTrainingOptions(parser);
  if (auto code = parseOrExit(
          parser, args, io,
          "train a model (softmax regression or a network) with a DP mechanism (training defaults: --m 64 --eta 0.5 "
          "--lambda 1e-6 --epochs 10; momentum 0.9 for sgd). --eta auto: η = 1/(2β) for the "
          "data's smoothness bound β = (R² + 1)/2 + λ")) {
    return *code;
  }
  Result<TrainingSetup> setup = setupTraining(parser);
  if (!setup) return fail(io, setup.status());
  const bool json = parser.isSet("json");
  const bool quiet = parser.isSet("quiet");
  const ResolvedRun& run = setup->trainer->resolved();
  if (!quiet) {
    io.err << setup->description << "\n"
           << mechanismName(run.mechanism) << ": " << run.steps << " steps, σ = " << formatNumber(run.sigma, 6)
           << ", η = " << formatNumber(run.eta, 6) << "\n";
    for (const std::string& v : run.violations) io.err << "VIOLATED " << v << "\n";
  }
  TrainerCallbacks callbacks;
  if (!quiet) callbacks.epochDone = [&](const EpochRecord& e) { printEpoch(io.err, e, run.epochs); };
  Result<TrainingResult> result = setup->trainer->run(nullptr, callbacks);
  if (!result) return fail(io, result.status());
  if (json) {
    JsonWriter writer;
    writer.beginObject();
    writeTrainingJson(writer, *setup, *result);
    writer.endObject();
    io.out << writer.str() << "\n";
  } else {
    io.out << mechanismId(result->run.mechanism) << ": test accuracy "
           << formatNumber(100 * result->finalTestAccuracy, 4) << "%, train "
           << formatNumber(100 * result->finalTrainAccuracy, 4) << "%, ";
    if (result->epsilon) {
      io.out << "ε = " << formatNumber(*result->epsilon) << " at δ = " << formatNumber(result->delta) << " ("
             << result->run.accountant << (result->run.epsilonIsEstimate ? ", an estimate" : "") << ")";
    } else {
      io.out << "not private";
    }
    io.out << ", " << formatNumber(result->trainingSeconds, 4) << " s\n";
  }
  return kExitOk;
}

}  // namespace dpx::cli
