// dpx statement | verify: the versioned privacy statement of a run, and its re-check.
//
// `verify` reads a statement, rebuilds the run and the options from it through the same range
// checks as the knob flags, recomputes the statement on this build and compares every field of
// the two documents (numbers exactly: the statement writes each as the shortest decimal that
// reads back to the same double). Exit 0: every value matches; 1: the differing fields are
// listed; 2: the file is not a readable statement (malformed JSON with its byte offset, a missing
// or ill-typed field, a knob out of range).
#include <QCommandLineOption>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSaveFile>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "accounting/handoff_snippets.h"
#include "accounting/privacy_statement.h"
#include "accounting/rdp_conversion.h"
#include "cli.h"
#include "cli_support.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"

namespace dpx::cli {

using core::formatNumber;
using core::Params;
using core::Result;
using core::Status;
using namespace core::accounting;

namespace {

// ---------------------------------------------------------------------------------------------
// dpx statement

struct StatementRequest {
  Params params;
  EpsilonOptions options;
  bool json = false;
  std::optional<HandoffTarget> snippet;
  QString output;
};

void addStatementOptions(QCommandLineParser& parser) {
  addOption(parser, QStringLiteral("conversion"),
            QStringLiteral("RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic (Mironov 2017)"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("alphas"), QStringLiteral("comma-separated Rényi orders in [1.01, 1024]"),
            QStringLiteral("list"));
  addOption(parser, QStringLiteral("discretisation"),
            QStringLiteral("exact accountant: loss grid Δ in (0, 1] (default: chosen to meet --accuracy)"),
            QStringLiteral("D"));
  addOption(parser, QStringLiteral("accuracy"),
            QStringLiteral("exact accountant: relative width of the ε bracket, in (0, 0.5] (default 0.01)"),
            QStringLiteral("A"));
  // Read by the shared option parser; a statement reports headlines, so it is refused below.
  QCommandLineOption variant(QStringLiteral("variant"), QStringLiteral("not used"), QStringLiteral("id"));
  variant.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOption(variant);
  addOption(parser, QStringLiteral("json"), QStringLiteral("the statement as JSON (what dpx verify reads)"));
  addOption(parser, QStringLiteral("snippet"),
            QStringLiteral("print only the run as configuration for opacus | jax-privacy"), QStringLiteral("name"));
  addOption(parser, QStringLiteral("output"), QStringLiteral("write to FILE instead of standard output"),
            QStringLiteral("FILE"));
}

Result<StatementRequest> statementRequest(const QCommandLineParser& parser) {
  StatementRequest r;
  DPX_ASSIGN_OR_RETURN(r.params, knobsFromParser(parser));
  DPX_ASSIGN_OR_RETURN(r.options, epsilonOptionsFromParser(parser));
  if (!r.options.variant.empty()) {
    return Status::invalidArgument("--variant '" + r.options.variant +
                                   "': a privacy statement reports each accountant's headline result");
  }
  r.json = parser.isSet(QStringLiteral("json"));
  if (parser.isSet(QStringLiteral("snippet"))) {
    DPX_ASSIGN_OR_RETURN(r.snippet, parseNamed(QStringLiteral("snippet"), parser.value(QStringLiteral("snippet")),
                                               parseHandoff, "opacus or jax-privacy"));
    if (r.json) return Status::invalidArgument("--snippet and --json: give one (--snippet prints only the snippet)");
  }
  r.output = parser.value(QStringLiteral("output"));
  if (parser.isSet(QStringLiteral("output")) && r.output.isEmpty()) {
    return Status::invalidArgument("--output needs a file name");
  }
  return r;
}

void writeRunText(std::ostream& out, const Params& p) {
  out << "Run: n = " << p.n << ", m = " << p.m << " (q = " << formatNumber(p.q()) << "), σ = " << formatNumber(p.sigma)
      << ", K = " << p.K << " steps (" << formatNumber(core::nominalEpochs(p))
      << " epochs), δ = " << formatNumber(p.delta) << "\n    ";
  bool first = true;
  for (const core::KnobInfo& info : core::knobInfos()) {
    const std::string key = info.key;
    if (key == "n" || key == "m" || key == "sigma" || key == "K" || key == "delta") continue;
    out << (first ? "" : ", ") << info.symbol << " = " << formatNumber(core::knobValue(p, info.knob));
    first = false;
  }
  out << "\n    schedule " << core::scheduleName(p.schedule) << "; sampling: "
      << (p.sampling ? std::string(core::samplingName(*p.sampling)) : std::string(kEachAccountantsOwn))
      << "; neighbouring relation: "
      << (p.neighbouring ? std::string(core::neighbouringName(*p.neighbouring)) : std::string(kEachAccountantsOwn))
      << "; averaged last-epoch release: " << (p.averaged ? "yes" : "no") << "\n";
}

void writeOptionsText(std::ostream& out, const EpsilonOptions& o) {
  out << "ε: " << conversionName(o.conversion) << " conversion of RDP analyses over ";
  if (o.fixedAlpha) {
    out << "the fixed order α = " << formatNumber(*o.fixedAlpha);
  } else {
    out << (o.orders.empty() ? "the default orders" : std::to_string(o.orders.size()) + " given orders");
  }
  out << "; exact accountant: bracket width " << formatNumber(o.exact.accuracy);
  if (o.exact.discretisation) out << ", loss grid Δ = " << formatNumber(*o.exact.discretisation);
  out << "\n";
}

void writeEpsilonText(std::ostream& out, const AccountantVerdict& v) {
  if (!v.applicable()) {
    out << "  not applicable:";
    for (const Violation& x : v.violations) out << "\n    " << x.assumption << ": " << x.reason;
    out << "\n";
    return;
  }
  if (!v.epsilon->isOk()) {
    out << "  no ε: " << v.epsilon->status().message() << "\n";
    return;
  }
  const EpsilonResult& e = v.epsilon->value();
  out << "  ε = " << formatNumber(e.epsilon) << " at δ = " << formatNumber(e.delta);
  if (e.alpha) out << " (α = " << formatNumber(*e.alpha);
  if (e.conversion) out << ", " << conversionName(*e.conversion) << " conversion";
  if (e.alpha) out << ")";
  if (e.epsilonLower && e.epsilonUpper) {
    out << " (bracket [" << formatNumber(*e.epsilonLower) << ", " << formatNumber(*e.epsilonUpper) << "])";
  }
  out << "\n";
}

void writeVerdictText(std::ostream& out, const AccountantVerdict& v, const Params& p) {
  const Accountant& a = *v.accountant;
  out << "\n" << a.id() << " — " << a.name() << " [" << boundKindName(a.boundKind()) << "]\n";
  writeEpsilonText(out, v);
  if (v.native) {
    for (const NativeValue& n : *v.native) out << "  " << n.label << " = " << formatNumber(n.value) << "\n";
  }
  for (const CheckOutcome& c : checkOutcomes(p, v)) {
    out << "  " << (c.holds ? "holds " : "FAILS ") << c.check << ": " << c.detail << "\n";
  }
  out << "  source: " << a.citation() << "\n";
}

std::string statementText(const PrivacyStatement& s) {
  std::ostringstream out;
  out << "Privacy statement — DP Explorer " << s.version << " (" << kStatementFormat << ", format "
      << kStatementFormatVersion << ")\n";
  writeRunText(out, s.params);
  writeOptionsText(out, s.options);
  for (const AccountantVerdict& v : s.verdicts) writeVerdictText(out, v, s.params);
  out << "\n";
  if (s.dpSgdBound) {
    out << "As DP-SGD (Poisson sampling, every iterate released): ε ≤ " << formatNumber(s.dpSgdBound->epsilon)
        << " at δ = " << formatNumber(s.params.delta) << " (" << s.dpSgdBound->accountant << ").\n";
  } else {
    out << "No DP-SGD upper bound applies to this run.\n";
  }
  out << "Configuration for training libraries: --snippet opacus | jax-privacy; the re-checkable statement: --json.\n";
  return out.str();
}

Status writeFile(const QString& path, const std::string& text) {
  QSaveFile file(path);
  const QByteArray bytes = QByteArray::fromStdString(text);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    return Status::ioError("cannot write " + toStd(path) + ": " + toStd(file.errorString()));
  }
  return Status::ok();
}

}  // namespace

int commandStatement(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addKnobOptions(parser);
  addStatementOptions(parser);
  const QString summary = QStringLiteral(
      "The privacy statement of a run: every accountant's verdict (applicable or the violated assumptions), ε at δ,\n"
      "native parameters and the assumptions checked; --json writes the re-checkable document (dpx verify FILE).");
  if (auto code = parseOrExit(parser, args, io, summary)) return *code;
  const Result<StatementRequest> request = statementRequest(parser);
  if (!request) return fail(io, request.status());
  const Result<PrivacyStatement> statement = makePrivacyStatement(request->params, request->options);
  if (!statement) return fail(io, statement.status());
  std::string text;
  if (request->snippet) {
    text = handoffSnippet(*request->snippet, *statement);
  } else {
    text = request->json ? privacyStatementJson(*statement) + "\n" : statementText(*statement);
  }
  if (request->output.isEmpty()) {
    io.out << text;
    return kExitOk;
  }
  if (Status s = writeFile(request->output, text); !s.isOk()) return fail(io, s);
  io.out << (request->snippet ? "configuration" : "privacy statement") << " written to " << toStd(request->output)
         << "\n";
  return kExitOk;
}

namespace {

// ---------------------------------------------------------------------------------------------
// dpx verify: reading the statement

constexpr qint64 kMaxStatementBytes = 16 * 1024 * 1024;

std::string typeName(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Null:
      return "null";
    case QJsonValue::Bool:
      return "a boolean";
    case QJsonValue::Double:
      return "a number";
    case QJsonValue::String:
      return "a string";
    case QJsonValue::Array:
      return "an array";
    case QJsonValue::Object:
      return "an object";
    case QJsonValue::Undefined:
      break;
  }
  return "nothing";
}

// The value at `key`, which must be of `type`; the refusal names the field's path.
Result<QJsonValue> field(const QJsonObject& o, const QString& key, const std::string& path, QJsonValue::Type type,
                         const std::string& expected) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined()) return Status::parseError(path + ": missing (expected " + expected + ")");
  if (v.type() != type) return Status::parseError(path + ": expected " + expected + ", found " + typeName(v));
  return v;
}

Result<QJsonObject> readStatementFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status::ioError("cannot read " + toStd(path) + ": " + toStd(file.errorString()));
  }
  if (file.size() > kMaxStatementBytes) {
    return Status::invalidArgument(toStd(path) + ": " + std::to_string(file.size()) +
                                   " bytes is too large for a privacy statement (at most 16 MiB)");
  }
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
  if (error.error != QJsonParseError::NoError) {
    return Status::parseError(toStd(path) + ": not JSON: " + toStd(error.errorString()) + " at byte " +
                              std::to_string(error.offset));
  }
  if (!doc.isObject()) return Status::parseError(toStd(path) + ": expected a JSON object (a privacy statement)");
  return doc.object();
}

// format, format_version and the version of DP Explorer that wrote it.
Result<std::string> readHeader(const QJsonObject& o) {
  DPX_ASSIGN_OR_RETURN(const QJsonValue format, field(o, QStringLiteral("format"), "format", QJsonValue::String,
                                                      "\"" + std::string(kStatementFormat) + "\""));
  if (format.toString().toStdString() != kStatementFormat) {
    return Status::parseError("format: \"" + format.toString().toStdString() +
                              "\" is not a DP Explorer privacy statement (expected \"" + std::string(kStatementFormat) +
                              "\")");
  }
  DPX_ASSIGN_OR_RETURN(const QJsonValue version,
                       field(o, QStringLiteral("format_version"), "format_version", QJsonValue::Double, "an integer"));
  const double v = version.toDouble();
  if (v != std::floor(v) || v < 1) {
    return Status::invalidArgument("format_version: " + formatNumber(v) + " is not a format version (an integer ≥ 1)");
  }
  if (v > kStatementFormatVersion) {
    return Status::invalidArgument("format_version: " + formatNumber(v) + " is newer than this DP Explorer reads (" +
                                   std::to_string(kStatementFormatVersion) + ")");
  }
  DPX_ASSIGN_OR_RETURN(const QJsonValue written, field(o, QStringLiteral("dpexplorer_version"), "dpexplorer_version",
                                                       QJsonValue::String, "a string"));
  return written.toString().toStdString();
}

// One knob of "run": a number inside the knob's range, as the knob flags accept.
Status readKnob(const QJsonObject& run, const core::KnobInfo& info, Params& p) {
  const std::string path = std::string("run.") + info.key;
  DPX_ASSIGN_OR_RETURN(const QJsonValue v,
                       field(run, QString::fromLatin1(info.key), path, QJsonValue::Double, "a number"));
  if (Status s = core::validateKnob(info.knob, v.toDouble()); !s.isOk()) {
    return Status::invalidArgument(path + ": " + s.message());
  }
  core::setKnobValue(p, info.knob, v.toDouble());
  return Status::ok();
}

// "sampling" or "neighbouring": a name core parses, or "each accountant's own" for unset.
template <typename T>
Result<std::optional<T>> readScheme(const QJsonObject& run, const char* key,
                                    std::optional<T> (*parse)(std::string_view), const std::string& accepted) {
  const std::string path = std::string("run.") + key;
  DPX_ASSIGN_OR_RETURN(const QJsonValue v, field(run, QString::fromLatin1(key), path, QJsonValue::String, "a string"));
  const std::string text = v.toString().toStdString();
  if (text == kEachAccountantsOwn) return std::optional<T>{};
  if (std::optional<T> value = parse(text)) return value;
  return Status::invalidArgument(path + ": \"" + text + "\" must be " + accepted + " or \"" +
                                 std::string(kEachAccountantsOwn) + "\"");
}

Result<Params> readRun(const QJsonObject& statement) {
  DPX_ASSIGN_OR_RETURN(const QJsonValue runValue,
                       field(statement, QStringLiteral("run"), "run", QJsonValue::Object, "an object"));
  const QJsonObject run = runValue.toObject();
  Params p;
  for (const core::KnobInfo& info : core::knobInfos()) DPX_RETURN_IF_ERROR(readKnob(run, info, p));
  DPX_ASSIGN_OR_RETURN(const QJsonValue schedule,
                       field(run, QStringLiteral("schedule"), "run.schedule", QJsonValue::String, "a string"));
  const auto parsedSchedule = core::parseSchedule(schedule.toString().toStdString());
  if (!parsedSchedule) return Status::invalidArgument("run.schedule: must be \"constant\" or \"decreasing\"");
  p.schedule = *parsedSchedule;
  DPX_ASSIGN_OR_RETURN(p.sampling,
                       readScheme(run, "sampling", core::parseSampling, "poisson, uniform, cyclic or shuffle"));
  DPX_ASSIGN_OR_RETURN(p.neighbouring,
                       readScheme(run, "neighbouring", core::parseNeighbouring, "add-remove or replace-one"));
  DPX_ASSIGN_OR_RETURN(const QJsonValue averaged,
                       field(run, QStringLiteral("averaged"), "run.averaged", QJsonValue::Bool, "true or false"));
  p.averaged = averaged.toBool();
  if (p.m > p.n) {
    return Status::invalidArgument("run.m: m = " + std::to_string(p.m) + " exceeds n = " + std::to_string(p.n) +
                                   ": the batch size m must be in [1, n]");
  }
  DPX_RETURN_IF_ERROR(p.validate());
  return p;
}

// "orders": "default" or a list of Rényi orders; "fixed_alpha": null or one order.
Status readOrders(const QJsonObject& o, EpsilonOptions& options) {
  const QJsonValue orders = o.value(QStringLiteral("orders"));
  if (orders.isArray()) {
    std::vector<double> list;
    for (const QJsonValue& x : orders.toArray()) {
      if (!x.isDouble()) return Status::parseError("options.orders: expected numbers, found " + typeName(x));
      list.push_back(x.toDouble());
    }
    Result<std::vector<double>> normalized = normalizeOrders(list);
    if (!normalized) return Status::invalidArgument("options.orders: " + normalized.status().message());
    options.orders = *normalized;
  } else if (orders.toString() != QLatin1String("default")) {
    return Status::parseError("options.orders: expected \"default\" or an array of Rényi orders, found " +
                              typeName(orders));
  }
  const QJsonValue fixed = o.value(QStringLiteral("fixed_alpha"));
  if (fixed.isDouble()) {
    if (Result<std::vector<double>> one = normalizeOrders({fixed.toDouble()}); !one) {
      return Status::invalidArgument("options.fixed_alpha: " + one.status().message());
    }
    options.fixedAlpha = fixed.toDouble();
  } else if (!fixed.isNull()) {
    return Status::parseError("options.fixed_alpha: expected null or a number, found " + typeName(fixed));
  }
  return Status::ok();
}

// "exact": the exact accountant's bracket width and optional loss grid.
Status readExact(const QJsonObject& o, EpsilonOptions& options) {
  DPX_ASSIGN_OR_RETURN(const QJsonValue exactValue,
                       field(o, QStringLiteral("exact"), "options.exact", QJsonValue::Object, "an object"));
  const QJsonObject exact = exactValue.toObject();
  DPX_ASSIGN_OR_RETURN(const QJsonValue accuracy, field(exact, QStringLiteral("accuracy"), "options.exact.accuracy",
                                                        QJsonValue::Double, "a number"));
  options.exact.accuracy = accuracy.toDouble();
  if (!(options.exact.accuracy > 0.0 && options.exact.accuracy <= 0.5)) {
    return Status::invalidArgument("options.exact.accuracy: " + formatNumber(options.exact.accuracy) +
                                   " is out of range: the relative bracket width must be in (0, 0.5]");
  }
  const QJsonValue grid = exact.value(QStringLiteral("discretisation"));
  if (grid.isNull()) return Status::ok();
  if (!grid.isDouble()) {
    return Status::parseError("options.exact.discretisation: expected null or a number, found " + typeName(grid));
  }
  if (!(grid.toDouble() > 0.0 && grid.toDouble() <= 1.0)) {
    return Status::invalidArgument("options.exact.discretisation: " + formatNumber(grid.toDouble()) +
                                   " is out of range: the loss grid Δ must be in (0, 1]");
  }
  options.exact.discretisation = grid.toDouble();
  return Status::ok();
}

Result<EpsilonOptions> readOptions(const QJsonObject& statement) {
  DPX_ASSIGN_OR_RETURN(const QJsonValue value,
                       field(statement, QStringLiteral("options"), "options", QJsonValue::Object, "an object"));
  const QJsonObject o = value.toObject();
  EpsilonOptions options;
  DPX_ASSIGN_OR_RETURN(const QJsonValue conversion, field(o, QStringLiteral("conversion"), "options.conversion",
                                                          QJsonValue::String, "\"improved\" or \"classic\""));
  const auto parsed = parseConversion(conversion.toString().toStdString());
  if (!parsed) return Status::invalidArgument("options.conversion: must be \"improved\" or \"classic\"");
  options.conversion = *parsed;
  DPX_RETURN_IF_ERROR(readOrders(o, options));
  DPX_RETURN_IF_ERROR(readExact(o, options));
  return options;
}

// ---------------------------------------------------------------------------------------------
// dpx verify: comparing the two documents

struct Comparison {
  int matches = 0;
  std::vector<std::string> differences;
};

std::string excerpt(const std::string& text, std::size_t from) {
  constexpr std::size_t kWidth = 48;
  if (text.size() <= kWidth + 12) return text;
  const std::size_t start = from > 16 ? from - 16 : 0;
  return (start > 0 ? "…" : "") + text.substr(start, kWidth) + (start + kWidth < text.size() ? "…" : "");
}

// A value as the difference lines show it; for two long strings, the part where they first differ.
std::string render(const QJsonValue& v, const QJsonValue& other = {}) {
  switch (v.type()) {
    case QJsonValue::Double:
      return core::roundTripNumber(v.toDouble());
    case QJsonValue::String: {
      const std::string text = v.toString().toStdString();
      const std::string o = other.toString().toStdString();
      std::size_t at = 0;
      while (at < text.size() && at < o.size() && text[at] == o[at]) ++at;
      return "\"" + core::jsonEscape(excerpt(text, at)) + "\"";
    }
    case QJsonValue::Array:
    case QJsonValue::Object: {
      const QJsonDocument doc = v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject());
      return excerpt(doc.toJson(QJsonDocument::Compact).toStdString(), 0);
    }
    case QJsonValue::Bool:
      return v.toBool() ? "true" : "false";
    case QJsonValue::Null:
      return "null";
    case QJsonValue::Undefined:
      break;
  }
  return "nothing";
}

void compareValues(const QJsonValue& stated, const QJsonValue& recomputed, const std::string& path, Comparison& c);

// An element's name in a path: its "id", "accountant" or "check" when every element has a
// distinct one (accountants[rdp], checks[sampling]), else its index.
std::vector<std::string> elementLabels(const QJsonArray& a) {
  std::vector<std::string> labels;
  for (qsizetype i = 0; i < a.size(); ++i) {
    const QJsonObject o = a.at(i).toObject();
    std::string label = std::to_string(i);
    for (const char* key : {"id", "accountant", "check"}) {
      if (o.value(QLatin1String(key)).isString()) {
        label = o.value(QLatin1String(key)).toString().toStdString();
        break;
      }
    }
    labels.push_back(label);
  }
  std::vector<std::string> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = std::to_string(i);
  }
  return labels;
}

void compareArrays(const QJsonArray& stated, const QJsonArray& recomputed, const std::string& path, Comparison& c) {
  const std::vector<std::string> statedLabels = elementLabels(stated);
  const std::vector<std::string> recomputedLabels = elementLabels(recomputed);
  std::map<std::string, QJsonValue> statedByLabel;
  for (std::size_t i = 0; i < statedLabels.size(); ++i) {
    statedByLabel[statedLabels[i]] = stated.at(static_cast<qsizetype>(i));
  }
  for (std::size_t i = 0; i < recomputedLabels.size(); ++i) {
    auto it = statedByLabel.find(recomputedLabels[i]);
    const QJsonValue s = it == statedByLabel.end() ? QJsonValue(QJsonValue::Undefined) : it->second;
    compareValues(s, recomputed.at(static_cast<qsizetype>(i)), path + "[" + recomputedLabels[i] + "]", c);
    if (it != statedByLabel.end()) statedByLabel.erase(it);
  }
  for (const std::string& label : statedLabels) {
    if (statedByLabel.count(label)) {
      compareValues(statedByLabel[label], QJsonValue(QJsonValue::Undefined), path + "[" + label + "]", c);
    }
  }
}

void compareObjects(const QJsonObject& stated, const QJsonObject& recomputed, const std::string& path, Comparison& c) {
  const std::string prefix = path.empty() ? "" : path + ".";
  for (auto it = recomputed.begin(); it != recomputed.end(); ++it) {
    // Which build wrote the statement is reported as a note, not a difference.
    if (path.empty() && it.key() == QLatin1String("dpexplorer_version")) continue;
    compareValues(stated.value(it.key()), it.value(), prefix + it.key().toStdString(), c);
  }
  for (auto it = stated.begin(); it != stated.end(); ++it) {
    if (!recomputed.contains(it.key())) {
      compareValues(it.value(), QJsonValue(QJsonValue::Undefined), prefix + it.key().toStdString(), c);
    }
  }
}

void compareValues(const QJsonValue& stated, const QJsonValue& recomputed, const std::string& path, Comparison& c) {
  if (stated.isObject() && recomputed.isObject())
    return compareObjects(stated.toObject(), recomputed.toObject(), path, c);
  if (stated.isArray() && recomputed.isArray()) return compareArrays(stated.toArray(), recomputed.toArray(), path, c);
  // Numbers compare exactly: both sides are the same decimal text parsed by the same parser.
  const bool equal = stated.type() == recomputed.type() &&
                     (stated.isDouble() ? stated.toDouble() == recomputed.toDouble() : stated == recomputed);
  if (equal) {
    ++c.matches;
  } else if (stated.isUndefined()) {
    c.differences.push_back(path + ": missing from the statement, recomputed " + render(recomputed));
  } else if (recomputed.isUndefined()) {
    c.differences.push_back(path + ": statement " + render(stated) + ", not in the recomputed statement");
  } else {
    c.differences.push_back(path + ": statement " + render(stated, recomputed) + " recomputed " +
                            render(recomputed, stated));
  }
}

// Positional arguments (the file) apart from the flags, which the shared parser checks.
QStringList splitFiles(const QStringList& args, QStringList& flags) {
  QStringList files;
  flags = QStringList{args.value(0)};
  for (qsizetype i = 1; i < args.size(); ++i) {
    const QString& a = args.at(i);
    if (a.startsWith(QLatin1Char('-')) && a.size() > 1) {
      flags << a;
    } else {
      files << a;
    }
  }
  return files;
}

struct VerifyInputs {
  QJsonObject statement;
  std::string writtenBy;
  Params params;
  EpsilonOptions options;
};

Result<VerifyInputs> readVerifyInputs(const QString& path) {
  VerifyInputs in;
  DPX_ASSIGN_OR_RETURN(in.statement, readStatementFile(path));
  const std::string where = toStd(path) + ": ";
  auto located = [&](const Status& s) { return Status(s.code(), where + s.message()); };
  Result<std::string> header = readHeader(in.statement);
  if (!header) return located(header.status());
  in.writtenBy = *header;
  Result<Params> params = readRun(in.statement);
  if (!params) return located(params.status());
  in.params = *params;
  Result<EpsilonOptions> options = readOptions(in.statement);
  if (!options) return located(options.status());
  in.options = *options;
  return in;
}

}  // namespace

int commandVerify(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("a privacy statement (dpx statement --json)"));
  QStringList flags;
  const QStringList files = splitFiles(args, flags);
  const QString summary = QStringLiteral(
      "Recompute a privacy statement on this build and compare every field (numbers exactly).\n"
      "Exit 0: every value matches; 1: the differing fields are listed; 2: not a readable statement.");
  if (auto code = parseOrExit(parser, flags, io, summary)) return *code;
  if (files.size() != 1) {
    return fail(io, Status::invalidArgument("give one statement file: dpx verify FILE (" +
                                            std::to_string(files.size()) + " given)"));
  }
  const Result<VerifyInputs> in = readVerifyInputs(files.front());
  if (!in) return fail(io, in.status());
  if (in->writtenBy != dpxVersion()) {
    io.out << "note: the statement was written by DP Explorer " << in->writtenBy << "; this is " << dpxVersion()
           << ": every value is compared all the same\n";
  }
  const Result<PrivacyStatement> statement = makePrivacyStatement(in->params, in->options);
  if (!statement) return fail(io, statement.status());
  const QJsonObject recomputed =
      QJsonDocument::fromJson(QByteArray::fromStdString(privacyStatementJson(*statement))).object();
  Comparison c;
  compareValues(in->statement, recomputed, "", c);
  if (c.differences.empty()) {
    io.out << "verified: " << c.matches << " values match\n";
    return kExitOk;
  }
  for (const std::string& d : c.differences) io.out << d << "\n";
  io.out << "not verified: " << c.differences.size()
         << (c.differences.size() == 1 ? " value differs, " : " values differ, ") << c.matches << " match\n";
  return kExitFailure;
}

}  // namespace dpx::cli
