#include "cli_support.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "accounting/rdp_conversion.h"
#include "cli.h"
#include "common/format.h"
#include "common/utf8.h"

namespace dpx::cli {

using core::Knob;
using core::KnobInfo;
using core::Params;
using core::Result;
using core::Status;

std::string trimmed(std::string_view text) { return std::string(core::trimmedUtf8(text)); }

// What a numeric flag's value must be; nothing for a flag that is not known to take a number.
std::optional<std::string> knownNumberRequirement(std::string_view flag) {
  for (const KnobInfo& info : core::knobInfos()) {
    if (flag == info.key) return core::knobRequirement(info);
  }
  static const std::map<std::string, std::string, std::less<>> kOthers{
      {"epochs", "epochs must be a number > 0"},
      {"selections", "the steps k a record is in per epoch must be an integer in [1, t]"},
      {"steps-per-epoch", "the steps per epoch t must be an integer in [1, 1e7]"},
      {"alphas", "Rényi orders must be numbers > 1"},
      {"alpha", "the Rényi order α must be a number > 1"},
      {"epsilon", "ε must be a number ≥ 0"},
      {"target-epsilon", "the target ε must be a number > 0"},
      {"target-accuracy", "must be a fraction in (0, 1] or a percentage such as 85%"},
      {"best-at-epsilon", "the ε budget must be a number > 0"},
      {"from", "must be a number in the varied knob's range"},
      {"to", "must be a number in the varied knob's range"},
      {"points", "must be an integer ≥ 2"},
      {"mu", "μ must be a number in (0, 1000]"},
      {"confidence", "must be a number in [0.5, 1)"},
      {"test-fraction", "must be a number in [0, 1)"},
      {"discretisation", "the loss grid Δ must be a number in (0, 1]"},
      {"accuracy", "the relative bracket width must be a number in (0, 0.5]"},
  };
  if (auto it = kOthers.find(flag); it != kOthers.end()) return it->second;
  return std::nullopt;
}

// What a numeric flag accepts, quoted when its value is not a number at all.
std::string numberRequirement(std::string_view flag) {
  return knownNumberRequirement(flag).value_or("must be a number");
}

Result<double> parseNumber(std::string_view flag, std::string_view text) {
  const std::string s = trimmed(text);
  double value = 0.0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (!s.empty() && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (s.empty() || ec != std::errc() || end != last || !std::isfinite(value)) {
    return Status::invalidArgument("--" + std::string(flag) + " '" + std::string(text) +
                                   "' is not a number: " + numberRequirement(flag));
  }
  return value + 0.0;  // −0 is 0 (and is printed so)
}

Result<std::vector<double>> numberList(std::string_view flag, std::string_view text) {
  std::vector<double> values;
  if (trimmed(text).empty()) {
    return Status::invalidArgument("--" + std::string(flag) + " needs a comma-separated list of numbers");
  }
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (trimmed(part).empty()) {
      return Status::invalidArgument("--" + std::string(flag) + " '" + std::string(text) +
                                     "': an empty entry (a comma with no number beside it)");
    }
    DPX_ASSIGN_OR_RETURN(const double value, parseNumber(flag, part));
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

void addKnobOptions(CommandLine& parser) {
  for (const KnobInfo& info : core::knobInfos()) {
    const std::string range = core::knobRangeText(info);
    // "noise multiplier σ", but "target δ" (the title already names its symbol).
    const std::string title = info.title;
    const std::string symbol = info.symbol;
    const bool named =
        title.size() >= symbol.size() && title.compare(title.size() - symbol.size(), symbol.size(), symbol) == 0;
    parser.addOption(info.key, (named ? title : title + " " + symbol) + ", in " + range, "value");
  }
  parser.addOption("epochs", "epochs E > 0; sets K = ceil(E*n/m)", "E");
  parser.addOption("schedule", "step-size schedule: constant | decreasing", "name");
  parser.addOption("sampling",
                   "the run's sampling: poisson | uniform | cyclic | shuffle | balls-in-bins (default: each "
                   "accountant's own)",
                   "name");
  parser.addOption("selections", "balls-in-bins: steps k of every epoch a record is in (default 1)", "k");
  parser.addOption("steps-per-epoch", "balls-in-bins: steps t per epoch (default ceil(n/m))", "t");
  parser.addOption("neighbouring", "neighbouring relation: add-remove | replace-one (default: each accountant's own)",
                   "name");
  parser.addOption("averaged", "outpert: release the average of the last epoch (Prop. 3)");
  parser.addOption("optimizer",
                   "the run's optimiser: sgd | momentum | adam (default: each mechanism's own — momentum 0.9 for "
                   "sgd, plain steps for the private mechanisms)",
                   "name");
}

namespace {

// The one line a parse mistake is reported in: each flag named as the user typed it (-x stays
// -x), a missing number with what it must be.
std::string parseMistakeText(const CommandLine& parser, const Io& io) {
  const std::string seeHelp = " (see 'dpx " + io.command + " --help')";
  const std::string& option = parser.mistakenOption();
  // An option with a quote in its name is reported as given, in the parser's own words.
  const bool quoted = option.find('\'') != std::string::npos;
  switch (parser.mistake()) {
    case CommandLine::Mistake::kMissingValue: {
      if (quoted) return "Missing value after '" + option + "'.";
      const std::optional<std::string> requirement =
          knownNumberRequirement(option.substr(std::min(option.find_first_not_of('-'), option.size())));
      return requirement ? option + " needs a value: " + *requirement : option + " needs a value" + seeHelp;
    }
    case CommandLine::Mistake::kUnexpectedValue:
      return quoted ? "Unexpected value after '" + option + "'." : option + " takes no value";
    case CommandLine::Mistake::kUnknownOptions: {
      const std::vector<std::string>& unknown = parser.unknownOptionNames();
      if (unknown.size() == 1) {
        return "unknown option " + parser.typed(unknown.front().substr(0, unknown.front().find('\''))) + seeHelp;
      }
      std::string names;
      for (const std::string& name : unknown) names += (names.empty() ? "" : ", ") + parser.typed(name);
      return "unknown options " + names + seeHelp;
    }
    case CommandLine::Mistake::kNone:
      break;
  }
  return "invalid command line" + seeHelp;
}

}  // namespace

std::optional<int> parseOrExit(CommandLine& parser, const Arguments& args, Io& io, const std::string& summary) {
  parser.setDescription(summary);
  parser.addOption("h", "show this help", {}, {"help"});
  if (!parser.parse(args)) {
    io.err << "dpx " << io.command << ": " << parseMistakeText(parser, io) << "\n";
    return kExitUsage;
  }
  if (parser.isSet("help")) {
    io.out << parser.helpText("dpx " + io.command);
    return kExitOk;
  }
  if (!parser.positionalArguments().empty()) {
    io.err << "dpx " << io.command << ": unexpected argument '" << parser.positionalArguments().front()
           << "' (options start with --)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

Result<double> numberOption(const CommandLine& parser, std::string_view name) {
  if (!parser.isSet(name)) return Status::invalidArgument("--" + std::string(name) + " is required");
  return parseNumber(name, parser.value(name));
}

Status oneOutputFormat(const CommandLine& parser) {
  if (parser.isSet("json") && parser.isSet("csv")) {
    return Status::invalidArgument("--json and --csv: choose one output format");
  }
  return Status::ok();
}

Result<double> targetEpsilonOption(const CommandLine& parser) {
  DPX_ASSIGN_OR_RETURN(const double target, numberOption(parser, "target-epsilon"));
  if (!(target > 0.0)) {
    return Status::invalidArgument("--target-epsilon " + core::formatNumber(target) + ": the target ε must be > 0");
  }
  return target;
}

namespace {

// knobsFromParser's phases, in the order their errors are reported.

Params defaultKnobs(KnobContext context) {
  Params p;
  if (context == KnobContext::kTraining) {
    p.n = static_cast<std::int64_t>(core::knobInfo(Knob::kN).max);  // the data sets n
    // Training runs default to batches of 64 (more steps per epoch than the explorer's 256 of
    // MNIST's Table 1 run); η and λ are the knobs' own defaults. Any flag given wins.
    p.m = 64;
  }
  return p;
}

// --n, --m, --sigma, …: each a number in its knob's range, which the message names. Training
// also takes --eta auto (the trainer sets η = 1/(2β) from the data's smoothness bound).
Status readNumericKnobs(const CommandLine& parser, Params& p, KnobContext context) {
  for (const KnobInfo& info : core::knobInfos()) {
    const std::string flag = std::string(info.key);
    if (!parser.isSet(flag)) continue;
    const std::string raw = parser.value(flag);
    if (context == KnobContext::kTraining && info.knob == Knob::kEta && raw == "auto") continue;
    DPX_ASSIGN_OR_RETURN(const double value, parseNumber(flag, raw));
    if (Status s = core::validateKnob(info.knob, value); !s.isOk()) {
      return Status::invalidArgument("--" + std::string(info.key) + " " + raw + ": " + core::knobRequirement(info));
    }
    core::setKnobValue(p, info.knob, value);
  }
  return Status::ok();
}

// --epochs E sets K = ⌈E·n/m⌉, so it cannot come with --K.
Status readEpochs(const CommandLine& parser, Params& p) {
  if (!parser.isSet("epochs")) return Status::ok();
  if (parser.isSet("K")) return Status::invalidArgument("--K and --epochs both set K: give one");
  const std::string raw = parser.value("epochs");
  DPX_ASSIGN_OR_RETURN(const double epochs, parseNumber("epochs", raw));
  Result<std::int64_t> steps = core::stepsForEpochs(epochs, p.n, p.m);
  if (!steps) return Status::invalidArgument("--epochs " + raw + ": " + steps.status().message());
  p.K = *steps;
  return Status::ok();
}

// --schedule, --sampling, --neighbouring and --averaged.
Status readNamedKnobs(const CommandLine& parser, Params& p) {
  if (parser.isSet("schedule")) {
    DPX_ASSIGN_OR_RETURN(
        p.schedule, parseNamed("schedule", parser.value("schedule"), core::parseSchedule, "constant or decreasing"));
  }
  if (parser.isSet("sampling")) {
    DPX_ASSIGN_OR_RETURN(p.sampling, parseNamed("sampling", parser.value("sampling"), core::parseSampling,
                                                "poisson, uniform, cyclic, shuffle or balls-in-bins"));
  }
  for (const auto& [flag, field] :
       {std::pair{"selections", &Params::selections}, std::pair{"steps-per-epoch", &Params::stepsPerEpoch}}) {
    if (!parser.isSet(flag)) continue;
    const std::string raw = parser.value(flag);
    DPX_ASSIGN_OR_RETURN(const double value, parseNumber(flag, raw));
    if (!(value >= 1.0) || value > 1e7 || value != std::floor(value)) {
      return Status::invalidArgument("--" + std::string(flag) + " " + raw + ": " + *knownNumberRequirement(flag));
    }
    p.*field = static_cast<std::int64_t>(value);
  }
  if (parser.isSet("neighbouring")) {
    DPX_ASSIGN_OR_RETURN(p.neighbouring, parseNamed("neighbouring", parser.value("neighbouring"),
                                                    core::parseNeighbouring, "add-remove or replace-one"));
  }
  if (parser.isSet("optimizer")) {
    DPX_ASSIGN_OR_RETURN(
        p.optimizer, parseNamed("optimizer", parser.value("optimizer"), core::parseOptimizer, "sgd, momentum or adam"));
  }
  p.averaged = parser.isSet("averaged");
  return Status::ok();
}

// A number in (0, max]; the refusal reads "--flag <as typed>: <requirement>".
Result<double> positiveUpTo(const CommandLine& parser, std::string_view name, double max,
                            const std::string& requirement) {
  const std::string raw = parser.value(name);
  DPX_ASSIGN_OR_RETURN(const double value, parseNumber(name, raw));
  if (!(value > 0.0) || value > max) {
    return Status::invalidArgument("--" + std::string(name) + " " + raw + ": " + requirement);
  }
  return value;
}

}  // namespace

Result<Params> knobsFromParser(const CommandLine& parser, KnobContext context) {
  Params p = defaultKnobs(context);
  DPX_RETURN_IF_ERROR(readNumericKnobs(parser, p, context));
  // Training counts epochs itself, and n comes from the data: no K to set, nothing to cross-check.
  if (context == KnobContext::kTraining) {
    DPX_RETURN_IF_ERROR(readNamedKnobs(parser, p));
    return p;
  }
  DPX_RETURN_IF_ERROR(readEpochs(parser, p));
  DPX_RETURN_IF_ERROR(readNamedKnobs(parser, p));
  if (p.m > p.n) {
    return Status::invalidArgument("--m " + std::to_string(p.m) + " exceeds --n " + std::to_string(p.n) +
                                   ": the batch size m must be in [1, n]");
  }
  DPX_RETURN_IF_ERROR(p.validate());
  return p;
}

Result<core::accounting::EpsilonOptions> epsilonOptionsFromParser(const CommandLine& parser, bool withVariant) {
  core::accounting::EpsilonOptions options;
  if (parser.isSet("conversion")) {
    DPX_ASSIGN_OR_RETURN(options.conversion, parseNamed("conversion", parser.value("conversion"),
                                                        core::accounting::parseConversion, "improved or classic"));
  }
  if (parser.isSet("alphas")) {
    DPX_ASSIGN_OR_RETURN(const std::vector<double> list, numberList("alphas", parser.value("alphas")));
    Result<std::vector<double>> orders = core::accounting::normalizeOrders(list);
    if (!orders) return Status::invalidArgument("--" + orders.status().message());
    options.orders = *orders;
  }
  if (parser.isSet("alpha")) {
    DPX_ASSIGN_OR_RETURN(options.fixedAlpha, parseNumber("alpha", parser.value("alpha")));
  }
  // stepsize has no accountant, so none of its variants or pld's controls.
  if (!withVariant) return options;
  if (parser.isSet("variant")) options.variant = (parser.value("variant"));
  if (parser.isSet("discretisation")) {
    DPX_ASSIGN_OR_RETURN(options.exact.discretisation,
                         positiveUpTo(parser, "discretisation", 1.0, "the loss grid Δ must be in (0, 1]"));
  }
  if (parser.isSet("accuracy")) {
    DPX_ASSIGN_OR_RETURN(options.exact.accuracy,
                         positiveUpTo(parser, "accuracy", 0.5, "the relative bracket width must be in (0, 0.5]"));
  }
  return options;
}

int fail(Io& io, const Status& status) {
  io.err << "dpx " << io.command << ": " << status.message() << "\n";
  // Input the user gave that cannot be used — a value out of range, a file that is missing or
  // malformed — is a usage error (2); anything else is a failure of the computation (1).
  switch (status.code()) {
    case core::StatusCode::kInvalidArgument:
    case core::StatusCode::kIoError:
    case core::StatusCode::kParseError:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

}  // namespace dpx::cli
