#include "io/dpx_command.h"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "common/format.h"
#include "training/dataset.h"
#include "training/mechanism.h"
#include "training/network.h"

namespace dpx::core {

namespace {

bool shellSafe(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("_./:,=+@%^-").find(c) != std::string_view::npos;
}

std::string quoted(const std::string& argument) {
  if (!argument.empty() && std::all_of(argument.begin(), argument.end(), shellSafe)) return argument;
  std::string out = "'";
  for (char c : argument) {
    if (c == '\'') {
      out += "'\\''";  // close, an escaped quote, reopen
    } else {
      out += c;
    }
  }
  return out + "'";
}

void flag(std::vector<std::string>& args, std::string_view name, const std::string& value) {
  args.push_back("--" + std::string(name));
  args.push_back(value);
}

// formatNumber's 10 digits when they read back as the same double (what people type), else 17:
// a value set by a log slider must reach dpx exactly for its numbers to match the GUI's.
std::string exactNumber(double value) {
  std::string text = formatNumber(value);
  double back = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), back);
  if (error != std::errc() || end != text.data() + text.size() || back != value) text = formatNumber(value, 17);
  return text;
}

void numberFlag(std::vector<std::string>& args, std::string_view name, double value) {
  flag(args, name, exactNumber(value));
}

std::string numberList(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ",") + exactNumber(v);
  return out;
}

// Every numeric knob but those listed, in the knob table's order.
void numericKnobs(std::vector<std::string>& args, const Params& p, std::initializer_list<Knob> skipped) {
  for (const KnobInfo& info : knobInfos()) {
    if (std::find(skipped.begin(), skipped.end(), info.knob) != skipped.end()) continue;
    numberFlag(args, info.key, knobValue(p, info.knob));
  }
}

void namedKnobs(std::vector<std::string>& args, const Params& p) {
  flag(args, "schedule", std::string(scheduleName(p.schedule)));
  if (p.sampling) flag(args, "sampling", std::string(samplingName(*p.sampling)));
  if (p.neighbouring) flag(args, "neighbouring", std::string(neighbouringName(*p.neighbouring)));
  if (p.optimizer) flag(args, "optimizer", std::string(optimizerName(*p.optimizer)));
  if (p.averaged) args.push_back("--averaged");
}

std::vector<std::string> accountingCommand(std::string_view command, const AccountingView& view,
                                           std::string_view accountant) {
  std::vector<std::string> args{std::string(command)};
  if (!accountant.empty()) flag(args, "accountant", std::string(accountant));
  const std::vector<std::string> knobs = accountingKnobArguments(view.params);
  args.insert(args.end(), knobs.begin(), knobs.end());
  if (view.fixedAlpha) numberFlag(args, "alpha", view.params.alpha);
  flag(args, "conversion", std::string(accounting::conversionName(view.conversion)));
  return args;
}

// The run's trainer flags shared by train, audit and frontier: data, model, knobs, epochs, seed.
std::vector<std::string> runArguments(std::string_view command, const training::TrainerConfig& config,
                                      const training::DatasetKey& data) {
  std::vector<std::string> args{std::string(command)};
  const std::vector<std::string> source = dataArguments(data);
  args.insert(args.end(), source.begin(), source.end());
  if (config.model.kind != training::ModelKind::kLinear) {
    flag(args, "model", std::string(training::modelKindName(config.model.kind)));
    if (config.model.kind == training::ModelKind::kMlp) numberFlag(args, "hidden", config.model.hidden);
    if (config.model.activation) {
      flag(args, "activation", std::string(training::activationName(*config.model.activation)));
    }
  }
  const std::vector<std::string> knobs = trainingKnobArguments(config.knobs);
  args.insert(args.end(), knobs.begin(), knobs.end());
  if (config.etaFromSmoothness) {
    const auto eta = std::find(args.begin(), args.end(), "--eta");
    if (eta != args.end()) *(eta + 1) = "auto";
  }
  if (config.knobs.optimizer == Optimizer::kMomentum && config.momentum != training::TrainerConfig{}.momentum) {
    numberFlag(args, "momentum", config.momentum);
  }
  numberFlag(args, "epochs", config.epochs);
  if (!config.accountant.empty()) flag(args, "accountant", config.accountant);
  flag(args, "seed", std::to_string(config.seed));
  return args;
}

}  // namespace

std::string shellCommandLine(const std::vector<std::string>& arguments) {
  std::string out = "dpx";
  for (const std::string& a : arguments) out += " " + quoted(a);
  return out;
}

std::vector<std::string> accountingKnobArguments(const Params& params) {
  std::vector<std::string> args;
  numericKnobs(args, params, {Knob::kAlpha});
  namedKnobs(args, params);
  return args;
}

std::vector<std::string> epsilonArguments(const AccountingView& view, std::string_view accountant) {
  return accountingCommand("epsilon", view, accountant);
}

std::vector<std::string> curveArguments(const AccountingView& view, std::string_view accountant, std::int64_t maxSteps,
                                        int points) {
  std::vector<std::string> args = accountingCommand("curve", view, accountant);
  flag(args, "vary", "K");
  numberFlag(args, "from", 1.0);
  numberFlag(args, "to", static_cast<double>(maxSteps));
  numberFlag(args, "points", points);
  flag(args, "spacing", "log");
  return args;
}

std::vector<std::string> rdpArguments(const AccountingView& view, std::string_view accountant) {
  AccountingView orders = view;
  orders.fixedAlpha = false;  // the profile is over every order
  std::vector<std::string> args = accountingCommand("rdp", orders, accountant);
  // The conversion does not enter ε_α.
  args.erase(args.end() - 2, args.end());
  return args;
}

std::vector<std::string> stepsizeArguments(const AccountingView& view, double targetEpsilon) {
  std::vector<std::string> args = accountingCommand("stepsize", view, {});
  numberFlag(args, "target-epsilon", targetEpsilon);
  return args;
}

std::vector<std::string> trainingKnobArguments(const Params& params) {
  std::vector<std::string> args;
  numericKnobs(args, params, {Knob::kN, Knob::kK, Knob::kAlpha});
  namedKnobs(args, params);
  return args;
}

std::vector<std::string> dataArguments(const training::DatasetKey& data) {
  std::vector<std::string> args;
  flag(args, "data", data.source);
  if (data.features != training::FeatureKind::kRaw) {
    flag(args, "features", std::string(training::featureKindName(data.features)));
  }
  // Always the scaling the data is read with: dpx picks another default for the CNNs.
  flag(args, "scaling",
       std::string(training::featureScalingName(data.scaling.value_or(training::defaultScaling(data.features)))));
  const training::DatasetKey defaults;
  if (data.labelColumn != defaults.labelColumn) flag(args, "label-column", std::to_string(data.labelColumn));
  if (data.testFraction != defaults.testFraction) numberFlag(args, "test-fraction", data.testFraction);
  return args;
}

std::vector<std::string> trainArguments(const training::TrainerConfig& config, const training::DatasetKey& data) {
  std::vector<std::string> args = runArguments("train", config, data);
  flag(args, "mechanism", std::string(training::mechanismId(config.mechanism)));
  // The non-private baseline has no ε to calibrate to.
  if (config.targetEpsilon && training::isPrivate(config.mechanism)) {
    numberFlag(args, "target-epsilon", *config.targetEpsilon);
  }
  return args;
}

std::vector<std::string> auditArguments(const training::TrainerConfig& config, const training::DatasetKey& data,
                                        int shadowModels, std::int64_t canaries) {
  std::vector<std::string> args = runArguments("audit", config, data);
  flag(args, "mechanism", std::string(training::mechanismId(config.mechanism)));
  if (config.targetEpsilon && training::isPrivate(config.mechanism)) {
    numberFlag(args, "target-epsilon", *config.targetEpsilon);
  }
  numberFlag(args, "shadow-models", shadowModels);
  numberFlag(args, "canaries", static_cast<double>(canaries));
  return args;
}

std::vector<std::string> scoreAuditArguments(const std::string& path, const Params& params) {
  std::vector<std::string> args{"audit", "--scores", path};
  for (std::string& a : accountingKnobArguments(params)) args.push_back(std::move(a));
  return args;
}

std::vector<std::string> frontierArguments(const training::FrontierRequest& request, const training::DatasetKey& data) {
  std::vector<std::string> args = runArguments("frontier", request.base, data);
  std::string mechanisms;
  for (training::Mechanism m : request.mechanisms) {
    mechanisms += (mechanisms.empty() ? "" : ",") + std::string(training::mechanismId(m));
  }
  flag(args, "mechanisms", mechanisms);
  const bool byEpochs = request.vary == training::FrontierVary::kEpochs;
  flag(args, "vary", byEpochs ? "epochs" : "epsilon");
  flag(args, "epsilons", numberList(request.epsilons));
  if (byEpochs) flag(args, "epochs-list", numberList(request.epochsList));
  numberFlag(args, "seeds", request.seeds);
  return args;
}

std::vector<std::string> comparisonArguments(const training::ModelComparisonRequest& request) {
  std::vector<std::string> args{"frontier", "--vary", "models"};
  flag(args, "data", request.source);
  std::string recipes;
  for (const std::string& id : request.recipes) recipes += (recipes.empty() ? "" : ",") + id;
  flag(args, "models", recipes);
  flag(args, "epsilons", numberList(request.epsilons));
  numberFlag(args, "delta", request.delta);
  numberFlag(args, "seeds", request.seeds);
  flag(args, "seed", std::to_string(request.seed));
  flag(args, "accountant", request.accountant);
  return args;
}

std::string knobCaption(const Params& p, std::optional<accounting::Conversion> conversion) {
  const auto knob = [&p](Knob k) {
    const KnobInfo& info = knobInfo(k);
    return std::string(info.symbol) + " = " + formatNumber(knobValue(p, k));
  };
  const std::string dot = " · ";
  std::string first = knob(Knob::kN) + dot + knob(Knob::kM) + dot + knob(Knob::kSigma) + dot + knob(Knob::kEta) + dot +
                      knob(Knob::kK) + " (" + formatNumber(nominalEpochs(p), 6) + " epochs)" + dot +
                      knob(Knob::kDelta) + dot + knob(Knob::kAlpha);
  std::string second = knob(Knob::kL) + dot + knob(Knob::kLambda) + dot + knob(Knob::kBeta) + dot + knob(Knob::kW) +
                       dot + knob(Knob::kCurvatureM) + dot + knob(Knob::kD) + dot +
                       std::string(scheduleName(p.schedule)) + " steps";
  second += dot + (p.sampling ? std::string(samplingName(*p.sampling)) + " sampling" : "each analysis's own sampling");
  if (p.neighbouring) second += dot + std::string(neighbouringName(*p.neighbouring)) + " neighbours";
  if (p.optimizer) second += dot + std::string(optimizerName(*p.optimizer));
  if (p.averaged) second += dot + "averaged release";
  if (conversion) second += dot + std::string(accounting::conversionName(*conversion)) + " RDP conversion";
  return first + "\n" + second;
}

}  // namespace dpx::core
