#include "cli_support.h"

#include <QRegularExpression>
#include <charconv>
#include <cmath>
#include <map>
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

// What a numeric flag accepts, quoted when its value is not a number at all.
std::string numberRequirement(const QString& flag) {
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
  return "must be a number";
}

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
  return value;
}

Result<std::vector<double>> numberList(const QString& flag, const QString& text) {
  std::vector<double> values;
  const QStringList parts = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
  if (parts.isEmpty()) return Status::invalidArgument("--" + toStd(flag) + " needs a comma-separated list of numbers");
  for (const QString& part : parts) {
    Result<double> v = parseNumber(flag, part);
    if (!v) return v.status();
    values.push_back(*v);
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
    addOption(parser, QString::fromLatin1(info.key),
              QString::fromUtf8(info.title) + QStringLiteral(" ") + QString::fromUtf8(info.symbol) +
                  QStringLiteral(", in ") + range,
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
    // Qt says "Unknown option 'foo'." — say which flag, as the user typed it.
    static const QRegularExpression unknown(QStringLiteral("^Unknown options?:? '([^']*)'"));
    static const QRegularExpression missing(QStringLiteral("^Missing value after '([^']*)'\\.?$"));
    static const QRegularExpression unexpected(QStringLiteral("^Unexpected value after '([^']*)'\\.?$"));
    if (auto m = unknown.match(text); m.hasMatch()) {
      text = QStringLiteral("unknown option --%1 (see 'dpx %2 --help')")
                 .arg(m.captured(1), QString::fromStdString(io.command));
    } else if (auto m2 = missing.match(text); m2.hasMatch()) {
      QString flag = m2.captured(1);
      while (flag.startsWith(QLatin1Char('-'))) flag.remove(0, 1);
      text =
          QStringLiteral("%1 needs a value: %2").arg(m2.captured(1), QString::fromStdString(numberRequirement(flag)));
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

Result<Params> knobsFromParser(const QCommandLineParser& parser, KnobContext context) {
  Params p;
  const bool training = context == KnobContext::kTraining;
  if (training) {
    p.n = static_cast<std::int64_t>(core::knobInfo(Knob::kN).max);  // the data sets n
    // Training defaults for unit-norm rows (the explorer's defaults describe MNIST's Table 1 run,
    // whose η = 0.1 and λ = 0.01 learn slowly here); any flag given wins.
    p.m = 64;
    p.eta = 0.5;
    p.lambda = 1e-3;
  }
  for (const KnobInfo& info : core::knobInfos()) {
    const QString flag = QString::fromLatin1(info.key);
    if (!parser.isSet(flag)) continue;
    const QString raw = parser.value(flag);
    Result<double> v = parseNumber(flag, raw);
    if (!v) return v.status();
    if (Status s = core::validateKnob(info.knob, *v); !s.isOk()) {
      return Status::invalidArgument("--" + std::string(info.key) + " " + toStd(raw) + ": " +
                                     core::knobRequirement(info));
    }
    core::setKnobValue(p, info.knob, *v);
  }
  if (!training && parser.isSet(QStringLiteral("epochs"))) {
    if (parser.isSet(QStringLiteral("K"))) return Status::invalidArgument("--K and --epochs both set K: give one");
    Result<double> e = parseNumber(QStringLiteral("epochs"), parser.value(QStringLiteral("epochs")));
    if (!e) return e.status();
    Result<std::int64_t> steps = core::stepsForEpochs(*e, p.n, p.m);
    if (!steps) {
      return Status::invalidArgument("--epochs " + toStd(parser.value(QStringLiteral("epochs"))) + ": " +
                                     steps.status().message());
    }
    p.K = *steps;
  }
  if (parser.isSet(QStringLiteral("schedule"))) {
    auto s = core::parseSchedule(toStd(parser.value(QStringLiteral("schedule"))));
    if (!s) {
      return Status::invalidArgument("--schedule '" + toStd(parser.value(QStringLiteral("schedule"))) +
                                     "': must be constant or decreasing");
    }
    p.schedule = *s;
  }
  if (parser.isSet(QStringLiteral("sampling"))) {
    auto s = core::parseSampling(toStd(parser.value(QStringLiteral("sampling"))));
    if (!s) {
      return Status::invalidArgument("--sampling '" + toStd(parser.value(QStringLiteral("sampling"))) +
                                     "': must be poisson, uniform, cyclic or shuffle");
    }
    p.sampling = *s;
  }
  if (parser.isSet(QStringLiteral("neighbouring"))) {
    auto s = core::parseNeighbouring(toStd(parser.value(QStringLiteral("neighbouring"))));
    if (!s) {
      return Status::invalidArgument("--neighbouring '" + toStd(parser.value(QStringLiteral("neighbouring"))) +
                                     "': must be add-remove or replace-one");
    }
    p.neighbouring = *s;
  }
  p.averaged = parser.isSet(QStringLiteral("averaged"));
  if (training) return p;
  if (p.m > p.n) {
    return Status::invalidArgument("--m " + std::to_string(p.m) + " exceeds --n " + std::to_string(p.n) +
                                   ": the batch size m must be in [1, n]");
  }
  if (Status s = p.validate(); !s.isOk()) return s;
  return p;
}

Result<core::accounting::EpsilonOptions> epsilonOptionsFromParser(const QCommandLineParser& parser, bool withVariant) {
  core::accounting::EpsilonOptions options;
  if (parser.isSet(QStringLiteral("conversion"))) {
    auto c = core::accounting::parseConversion(toStd(parser.value(QStringLiteral("conversion"))));
    if (!c) {
      return Status::invalidArgument("--conversion '" + toStd(parser.value(QStringLiteral("conversion"))) +
                                     "': must be improved or classic");
    }
    options.conversion = *c;
  }
  if (parser.isSet(QStringLiteral("alphas"))) {
    Result<std::vector<double>> list = numberList(QStringLiteral("alphas"), parser.value(QStringLiteral("alphas")));
    if (!list) return list.status();
    Result<std::vector<double>> orders = core::accounting::normalizeOrders(*list);
    if (!orders) return Status::invalidArgument("--" + orders.status().message());
    options.orders = *orders;
  }
  if (parser.isSet(QStringLiteral("alpha"))) {
    Result<double> a = parseNumber(QStringLiteral("alpha"), parser.value(QStringLiteral("alpha")));
    if (!a) return a.status();
    options.fixedAlpha = *a;
  }
  if (withVariant && parser.isSet(QStringLiteral("variant"))) {
    options.variant = toStd(parser.value(QStringLiteral("variant")));
  }
  if (withVariant && parser.isSet(QStringLiteral("discretisation"))) {
    Result<double> d = parseNumber(QStringLiteral("discretisation"), parser.value(QStringLiteral("discretisation")));
    if (!d) return d.status();
    if (!(*d > 0.0) || *d > 1.0) {
      return Status::invalidArgument("--discretisation " + toStd(parser.value(QStringLiteral("discretisation"))) +
                                     ": the loss grid Δ must be in (0, 1]");
    }
    options.exact.discretisation = *d;
  }
  if (withVariant && parser.isSet(QStringLiteral("accuracy"))) {
    Result<double> a = parseNumber(QStringLiteral("accuracy"), parser.value(QStringLiteral("accuracy")));
    if (!a) return a.status();
    if (!(*a > 0.0) || *a > 0.5) {
      return Status::invalidArgument("--accuracy " + toStd(parser.value(QStringLiteral("accuracy"))) +
                                     ": the relative bracket width must be in (0, 0.5]");
    }
    options.exact.accuracy = *a;
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
