#include "cli_support.h"

#include <algorithm>
#include <cctype>
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

using core::formatNumber;
using core::Knob;
using core::KnobInfo;
using core::Params;
using core::Result;
using core::Status;

std::string trimmed(std::string_view text) { return std::string(core::trimmedUtf8(text)); }

// What a numeric flag's value must be; nothing for a flag that is not known to take a number.
std::optional<std::string> knownNumberRequirement(std::string_view flag) {
  for (const KnobInfo& info : core::knobInfos()) {
    if (flag == info.key) return core::scriptedKnobRequirement(info);
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
    const std::string range = info.hasScriptRange() ? "(" + core::formatNumber(info.scriptMin, 6) + ", " +
                                                          core::formatNumber(info.scriptMax, 6) + ")"
                                                    : core::knobRangeText(info);
    // "noise multiplier σ", but "target δ" (the title already names its symbol).
    const std::string title = info.title;
    const std::string symbol = info.symbol;
    const bool named =
        title.size() >= symbol.size() && title.compare(title.size() - symbol.size(), symbol.size(), symbol) == 0;
    // The ecosystem's names of the same knobs (Opacus, dp_accounting, TF Privacy).
    std::vector<std::string> aliases;
    if (info.knob == Knob::kSigma) aliases = {"noise-multiplier"};
    if (info.knob == Knob::kK) aliases = {"steps"};
    parser.addOption(info.key, (named ? title : title + " " + symbol) + ", in " + range, "value", aliases);
  }
  parser.addOption(
      "sample-rate",
      "sampling probability q = m/n in (0, 1], as Opacus and dp_accounting name it: with --n sets m = q*n, "
      "with --m sets n = m/q, alone picks whole m and n with m/n = q exactly",
      "q");
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

// What the other libraries call dpx's knobs (Opacus, dp_accounting, TF Privacy, the papers'
// letters), in their spellings with '_' read as '-'.
const std::map<std::string, std::string, std::less<>>& ecosystemNames() {
  static const std::map<std::string, std::string, std::less<>> kNames{
      {"q", "--sample-rate (or --m and --n: q = m/n)"},
      {"sampling-rate", "--sample-rate"},
      {"sampling-probability", "--sample-rate"},
      {"sample-rate", "--sample-rate"},
      {"noise", "--sigma (the noise multiplier; --noise-multiplier also works)"},
      {"noise-multiplier", "--noise-multiplier"},
      {"z", "--sigma (the noise multiplier)"},
      {"batch-size", "--m (the batch size)"},
      {"batch", "--m (the batch size)"},
      {"b", "--m (the batch size)"},
      {"dataset-size", "--n (the number of records)"},
      {"num-examples", "--n (the number of records)"},
      {"steps", "--steps (or --K)"},
      {"num-steps", "--steps (or --K)"},
      {"iterations", "--steps (or --K)"},
      {"t", "--steps (or --K)"},
      {"count", "--steps (or --K)"},
      {"target-delta", "--delta"},
      {"target-epsilon", "--target-epsilon (calibrate) or --epsilon (delta)"},
      {"eps", "--epsilon"},
      {"max-grad-norm", "--L (the clip norm)"},
      {"clip", "--L (the clip norm)"},
      {"lr", "--eta (the step size)"},
      {"learning-rate", "--eta (the step size)"},
      {"orders", "--alphas"},
  };
  return kNames;
}

// "did you mean …": the ecosystem's name for a knob, else a flag of this command one or two
// edits away (a typo), else nothing.
std::optional<std::string> optionHint(const CommandLine& parser, std::string_view typed) {
  std::string name(typed);
  std::replace(name.begin(), name.end(), '_', '-');
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::vector<std::string> known = parser.optionNames();
  const auto& names = ecosystemNames();
  if (auto it = names.find(name); it != names.end()) {
    // Only a flag this command takes: --epsilon is delta's, not calibrate's.
    const std::string flag = it->second.substr(2, it->second.find_first_of(" (") - 2);
    if (std::find(known.begin(), known.end(), flag) != known.end()) return "did you mean " + it->second + "?";
  }
  const auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::optional<std::string> best;
  std::size_t bestDistance = name.size() <= 3 ? 1 : 2;
  for (const std::string& option : known) {
    if (option.size() < 2) continue;
    const std::size_t d = distance(name, option);
    if (d <= bestDistance && (!best || d < distance(name, *best))) best = option;
  }
  if (best) return "did you mean --" + *best + "?";
  return std::nullopt;
}

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
        const std::string name = unknown.front().substr(0, unknown.front().find('\''));
        if (std::optional<std::string> hint = optionHint(parser, name)) {
          return "unknown option " + parser.typed(name) + ": " + *hint + seeHelp;
        }
        return "unknown option " + parser.typed(name) + seeHelp;
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
    if (Status s = core::validateScriptedKnob(info.knob, value); !s.isOk()) {
      return Status::invalidArgument("--" + std::string(info.key) + " " + raw + ": " +
                                     core::scriptedKnobRequirement(info));
    }
    core::setKnobValue(p, info.knob, value);
  }
  return Status::ok();
}

// --sample-rate q: two of q, n and m decide the third, and m/n must equal q exactly (a library's
// q is a double; the accountants read m/n). Alone, the default batch if m/q is whole, else the
// smallest whole batch that makes it so.
Status readSampleRate(const CommandLine& parser, Params& p, KnobContext context) {
  if (!parser.isSet("sample-rate")) return Status::ok();
  const std::string raw = parser.value("sample-rate");
  if (context == KnobContext::kTraining) {
    return Status::invalidArgument("--sample-rate " + raw +
                                   ": training reads n from the data; give the batch size --m (q = m/n)");
  }
  DPX_ASSIGN_OR_RETURN(const double q, parseNumber("sample-rate", raw));
  if (!(q > 0.0 && q <= 1.0)) {
    return Status::invalidArgument("--sample-rate " + raw + ": the sampling probability q must be in (0, 1]");
  }
  const double maxN = core::knobInfo(Knob::kN).max;
  const auto exact = [q](double m, double n) { return n >= 1.0 && m >= 1.0 && m <= n && m / n == q; };
  const bool nGiven = parser.isSet("n"), mGiven = parser.isSet("m");
  if (nGiven && mGiven) {
    return Status::invalidArgument("--sample-rate, --n and --m: give two of them (q = m/n decides the third)");
  }
  if (nGiven) {
    const double m = std::round(q * static_cast<double>(p.n));
    if (!exact(m, static_cast<double>(p.n))) {
      return Status::invalidArgument("--sample-rate " + raw + " with --n " + std::to_string(p.n) +
                                     ": no whole batch size m gives m/n = q exactly (m = " + formatNumber(m) +
                                     " gives " + formatNumber(m / static_cast<double>(p.n)) +
                                     "); give an n with q·n whole, or --m instead of --n");
    }
    p.m = static_cast<std::int64_t>(m);
    return Status::ok();
  }
  const auto tryBatch = [&](double m) {
    const double n = std::round(m / q);
    if (n > maxN || !exact(m, n)) return false;
    p.m = static_cast<std::int64_t>(m);
    p.n = static_cast<std::int64_t>(n);
    return true;
  };
  if (mGiven) {
    if (tryBatch(static_cast<double>(p.m))) return Status::ok();
    return Status::invalidArgument(
        "--sample-rate " + raw + " with --m " + std::to_string(p.m) + ": no whole n ≤ " + formatNumber(maxN) +
        " gives m/n = q exactly (n = " + formatNumber(std::round(static_cast<double>(p.m) / q)) +
        "); give --n instead of --m, or another --m");
  }
  if (tryBatch(static_cast<double>(p.m))) return Status::ok();
  constexpr double kLargestBatch = 1e6;
  for (double m = 1.0; m <= kLargestBatch; m += 1.0) {
    if (tryBatch(m)) return Status::ok();
  }
  return Status::invalidArgument("--sample-rate " + raw + ": no batch m ≤ " + formatNumber(kLargestBatch) +
                                 " and n ≤ " + formatNumber(maxN) +
                                 " have m/n = q exactly; give --n (or --m) with it, or --n and --m");
}

// --epochs E sets K = ⌈E·n/m⌉, so it cannot come with --K.
Status readEpochs(const CommandLine& parser, Params& p) {
  if (!parser.isSet("epochs")) return Status::ok();
  if (parser.isSet("K")) {
    return Status::invalidArgument(parser.typed("K") + " and --epochs both set K: give one");
  }
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
  DPX_RETURN_IF_ERROR(readSampleRate(parser, p, context));
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
