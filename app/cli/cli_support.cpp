#include "cli_support.h"

#include <QRegularExpression>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "accounting/rdp_conversion.h"
#include "cli.h"
#include "common/format.h"

namespace dpx::cli {

using core::Knob;
using core::KnobInfo;
using core::Params;
using core::Result;
using core::Status;

std::string toStd(const QString& text) { return text.toStdString(); }

// What a numeric flag's value must be; nothing for a flag that is not known to take a number.
std::optional<std::string> knownNumberRequirement(const QString& flag) {
  for (const KnobInfo& info : core::knobInfos()) {
    if (flag == QLatin1String(info.key)) return core::knobRequirement(info);
  }
  static const std::map<QString, std::string> kOthers{
      {QStringLiteral("epochs"), "epochs must be a number > 0"},
      {QStringLiteral("alphas"), "Rényi orders must be numbers > 1"},
      {QStringLiteral("alpha"), "the Rényi order α must be a number > 1"},
      {QStringLiteral("epsilon"), "ε must be a number ≥ 0"},
      {QStringLiteral("target-epsilon"), "the target ε must be a number > 0"},
      {QStringLiteral("from"), "must be a number in the varied knob's range"},
      {QStringLiteral("to"), "must be a number in the varied knob's range"},
      {QStringLiteral("points"), "must be an integer ≥ 2"},
      {QStringLiteral("mu"), "μ must be a number in (0, 1000]"},
      {QStringLiteral("confidence"), "must be a number in [0.5, 1)"},
      {QStringLiteral("test-fraction"), "must be a number in [0, 1)"},
      {QStringLiteral("discretisation"), "the loss grid Δ must be a number in (0, 1]"},
      {QStringLiteral("accuracy"), "the relative bracket width must be a number in (0, 0.5]"},
  };
  if (auto it = kOthers.find(flag); it != kOthers.end()) return it->second;
  return std::nullopt;
}

// What a numeric flag accepts, quoted when its value is not a number at all.
std::string numberRequirement(const QString& flag) { return knownNumberRequirement(flag).value_or("must be a number"); }

Result<double> parseNumber(const QString& flag, const QString& text) {
  const std::string s = text.trimmed().toStdString();
  double value = 0.0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (!s.empty() && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (s.empty() || ec != std::errc() || end != last || !std::isfinite(value)) {
    return Status::invalidArgument("--" + toStd(flag) + " '" + toStd(text) +
                                   "' is not a number: " + numberRequirement(flag));
  }
  return value + 0.0;  // −0 is 0 (and is printed so)
}

Result<std::vector<double>> numberList(const QString& flag, const QString& text) {
  std::vector<double> values;
  const QStringList parts = text.split(QLatin1Char(','));
  if (text.trimmed().isEmpty()) {
    return Status::invalidArgument("--" + toStd(flag) + " needs a comma-separated list of numbers");
  }
  for (const QString& part : parts) {
    if (part.trimmed().isEmpty()) {
      return Status::invalidArgument("--" + toStd(flag) + " '" + toStd(text) +
                                     "': an empty entry (a comma with no number beside it)");
    }
    DPX_ASSIGN_OR_RETURN(const double value, parseNumber(flag, part));
    values.push_back(value);
  }
  return values;
}

void addOption(QCommandLineParser& parser, const QString& name, const QString& description, const QString& valueName) {
  if (valueName.isEmpty()) {
    parser.addOption(QCommandLineOption(name, description));
  } else {
    parser.addOption(QCommandLineOption(name, description, valueName));
  }
}

void addKnobOptions(QCommandLineParser& parser) {
  for (const KnobInfo& info : core::knobInfos()) {
    const QString range = QString::fromStdString(core::knobRangeText(info));
    // "noise multiplier σ", but "target δ" (the title already names its symbol).
    const QString title = QString::fromUtf8(info.title);
    const QString symbol = QString::fromUtf8(info.symbol);
    addOption(parser, QString::fromLatin1(info.key),
              (title.endsWith(symbol) ? title : title + QStringLiteral(" ") + symbol) + QStringLiteral(", in ") + range,
              QStringLiteral("value"));
  }
  addOption(parser, QStringLiteral("epochs"), QStringLiteral("epochs E > 0; sets K = ceil(E*n/m)"),
            QStringLiteral("E"));
  addOption(parser, QStringLiteral("schedule"), QStringLiteral("step-size schedule: constant | decreasing"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("sampling"),
            QStringLiteral("the run's sampling: poisson | uniform | cyclic | shuffle (default: each accountant's own)"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("neighbouring"),
            QStringLiteral("neighbouring relation: add-remove | replace-one (default: each accountant's own)"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("averaged"),
            QStringLiteral("outpert: release the average of the last epoch (Prop. 3)"));
}

std::optional<int> parseOrExit(QCommandLineParser& parser, const QStringList& args, Io& io, const QString& summary) {
  parser.setApplicationDescription(summary);
  parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
  const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                QStringLiteral("show this help"));
  parser.addOption(help);
  if (!parser.parse(args)) {
    QString text = parser.errorText();
    // Qt says "Unknown option 'foo'." (or "Unknown options: foo, bar.") without the dashes: name
    // each flag as the user typed it (-x stays -x).
    static const QRegularExpression unknown(QStringLiteral("^Unknown option '([^']*)'"));
    static const QRegularExpression unknownSeveral(QStringLiteral("^Unknown options: (.*)\\.$"));
    static const QRegularExpression missing(QStringLiteral("^Missing value after '([^']*)'\\.?$"));
    static const QRegularExpression unexpected(QStringLiteral("^Unexpected value after '([^']*)'\\.?$"));
    const auto typed = [&args](const QString& name) {
      for (const QString& arg : args) {
        QString bare = arg.section(QLatin1Char('='), 0, 0);
        if (!bare.startsWith(QLatin1Char('-'))) continue;
        while (bare.startsWith(QLatin1Char('-'))) bare.remove(0, 1);
        if (bare == name) return arg.section(QLatin1Char('='), 0, 0);
      }
      return QStringLiteral("--") + name;
    };
    const QString seeHelp = QStringLiteral(" (see 'dpx %1 --help')").arg(QString::fromStdString(io.command));
    if (auto m = unknown.match(text); m.hasMatch()) {
      text = QStringLiteral("unknown option ") + typed(m.captured(1)) + seeHelp;
    } else if (auto several = unknownSeveral.match(text); several.hasMatch()) {
      QStringList names;
      for (const QString& name : several.captured(1).split(QStringLiteral(", "))) names << typed(name);
      text = QStringLiteral("unknown options ") + names.join(QStringLiteral(", ")) + seeHelp;
    } else if (auto m2 = missing.match(text); m2.hasMatch()) {
      QString flag = m2.captured(1);
      while (flag.startsWith(QLatin1Char('-'))) flag.remove(0, 1);
      const std::optional<std::string> requirement = knownNumberRequirement(flag);
      text = requirement
                 ? QStringLiteral("%1 needs a value: %2").arg(m2.captured(1), QString::fromStdString(*requirement))
                 : QStringLiteral("%1 needs a value").arg(m2.captured(1)) + seeHelp;
    } else if (auto m3 = unexpected.match(text); m3.hasMatch()) {
      text = QStringLiteral("%1 takes no value").arg(m3.captured(1));
    }
    io.err << "dpx " << io.command << ": " << toStd(text) << "\n";
    return kExitUsage;
  }
  if (parser.isSet(help)) {
    // Qt names the program as invoked (./dpx, /usr/bin/dpx); the help names the command.
    static const QRegularExpression usage(QStringLiteral("^Usage: \\S+"));
    io.out << toStd(
        parser.helpText().replace(usage, QStringLiteral("Usage: dpx ") + QString::fromStdString(io.command)));
    return kExitOk;
  }
  if (!parser.positionalArguments().isEmpty()) {
    io.err << "dpx " << io.command << ": unexpected argument '" << toStd(parser.positionalArguments().first())
           << "' (options start with --)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

Result<double> numberOption(const QCommandLineParser& parser, const QString& name) {
  if (!parser.isSet(name)) return Status::invalidArgument("--" + toStd(name) + " is required");
  return parseNumber(name, parser.value(name));
}

Status oneOutputFormat(const QCommandLineParser& parser) {
  if (parser.isSet(QStringLiteral("json")) && parser.isSet(QStringLiteral("csv"))) {
    return Status::invalidArgument("--json and --csv: choose one output format");
  }
  return Status::ok();
}

Result<double> targetEpsilonOption(const QCommandLineParser& parser) {
  DPX_ASSIGN_OR_RETURN(const double target, numberOption(parser, QStringLiteral("target-epsilon")));
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
    // Training defaults for unit-norm rows (the explorer's defaults describe MNIST's Table 1 run,
    // whose η = 0.1 and λ = 0.01 learn slowly here); any flag given wins.
    p.m = 64;
    p.eta = 0.5;
    p.lambda = 1e-3;
  }
  return p;
}

// --n, --m, --sigma, …: each a number in its knob's range, which the message names.
Status readNumericKnobs(const QCommandLineParser& parser, Params& p) {
  for (const KnobInfo& info : core::knobInfos()) {
    const QString flag = QString::fromLatin1(info.key);
    if (!parser.isSet(flag)) continue;
    const QString raw = parser.value(flag);
    DPX_ASSIGN_OR_RETURN(const double value, parseNumber(flag, raw));
    if (Status s = core::validateKnob(info.knob, value); !s.isOk()) {
      return Status::invalidArgument("--" + std::string(info.key) + " " + toStd(raw) + ": " +
                                     core::knobRequirement(info));
    }
    core::setKnobValue(p, info.knob, value);
  }
  return Status::ok();
}

// --epochs E sets K = ⌈E·n/m⌉, so it cannot come with --K.
Status readEpochs(const QCommandLineParser& parser, Params& p) {
  if (!parser.isSet(QStringLiteral("epochs"))) return Status::ok();
  if (parser.isSet(QStringLiteral("K"))) return Status::invalidArgument("--K and --epochs both set K: give one");
  const QString raw = parser.value(QStringLiteral("epochs"));
  DPX_ASSIGN_OR_RETURN(const double epochs, parseNumber(QStringLiteral("epochs"), raw));
  Result<std::int64_t> steps = core::stepsForEpochs(epochs, p.n, p.m);
  if (!steps) return Status::invalidArgument("--epochs " + toStd(raw) + ": " + steps.status().message());
  p.K = *steps;
  return Status::ok();
}

// --schedule, --sampling, --neighbouring and --averaged.
Status readNamedKnobs(const QCommandLineParser& parser, Params& p) {
  if (parser.isSet(QStringLiteral("schedule"))) {
    DPX_ASSIGN_OR_RETURN(p.schedule, parseNamed(QStringLiteral("schedule"), parser.value(QStringLiteral("schedule")),
                                                core::parseSchedule, "constant or decreasing"));
  }
  if (parser.isSet(QStringLiteral("sampling"))) {
    DPX_ASSIGN_OR_RETURN(p.sampling, parseNamed(QStringLiteral("sampling"), parser.value(QStringLiteral("sampling")),
                                                core::parseSampling, "poisson, uniform, cyclic or shuffle"));
  }
  if (parser.isSet(QStringLiteral("neighbouring"))) {
    DPX_ASSIGN_OR_RETURN(p.neighbouring,
                         parseNamed(QStringLiteral("neighbouring"), parser.value(QStringLiteral("neighbouring")),
                                    core::parseNeighbouring, "add-remove or replace-one"));
  }
  p.averaged = parser.isSet(QStringLiteral("averaged"));
  return Status::ok();
}

// A number in (0, max]; the refusal reads "--flag <as typed>: <requirement>".
Result<double> positiveUpTo(const QCommandLineParser& parser, const QString& name, double max,
                            const std::string& requirement) {
  const QString raw = parser.value(name);
  DPX_ASSIGN_OR_RETURN(const double value, parseNumber(name, raw));
  if (!(value > 0.0) || value > max) {
    return Status::invalidArgument("--" + toStd(name) + " " + toStd(raw) + ": " + requirement);
  }
  return value;
}

}  // namespace

Result<Params> knobsFromParser(const QCommandLineParser& parser, KnobContext context) {
  Params p = defaultKnobs(context);
  DPX_RETURN_IF_ERROR(readNumericKnobs(parser, p));
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

Result<core::accounting::EpsilonOptions> epsilonOptionsFromParser(const QCommandLineParser& parser, bool withVariant) {
  core::accounting::EpsilonOptions options;
  if (parser.isSet(QStringLiteral("conversion"))) {
    DPX_ASSIGN_OR_RETURN(options.conversion,
                         parseNamed(QStringLiteral("conversion"), parser.value(QStringLiteral("conversion")),
                                    core::accounting::parseConversion, "improved or classic"));
  }
  if (parser.isSet(QStringLiteral("alphas"))) {
    DPX_ASSIGN_OR_RETURN(const std::vector<double> list,
                         numberList(QStringLiteral("alphas"), parser.value(QStringLiteral("alphas"))));
    Result<std::vector<double>> orders = core::accounting::normalizeOrders(list);
    if (!orders) return Status::invalidArgument("--" + orders.status().message());
    options.orders = *orders;
  }
  if (parser.isSet(QStringLiteral("alpha"))) {
    DPX_ASSIGN_OR_RETURN(options.fixedAlpha,
                         parseNumber(QStringLiteral("alpha"), parser.value(QStringLiteral("alpha"))));
  }
  // stepsize has no accountant, so none of its variants or pld's controls.
  if (!withVariant) return options;
  if (parser.isSet(QStringLiteral("variant"))) options.variant = toStd(parser.value(QStringLiteral("variant")));
  if (parser.isSet(QStringLiteral("discretisation"))) {
    DPX_ASSIGN_OR_RETURN(options.exact.discretisation, positiveUpTo(parser, QStringLiteral("discretisation"), 1.0,
                                                                    "the loss grid Δ must be in (0, 1]"));
  }
  if (parser.isSet(QStringLiteral("accuracy"))) {
    DPX_ASSIGN_OR_RETURN(options.exact.accuracy, positiveUpTo(parser, QStringLiteral("accuracy"), 0.5,
                                                              "the relative bracket width must be in (0, 0.5]"));
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
