// Reading a privacy statement back into a run and its ε options, with the refusals verify prints;
// apart from the commands because it follows the statement format (statement_parsing.h).
#include "statement_parsing.h"

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/privacy_statement.h"
#include "accounting/rdp_conversion.h"
#include "common/format.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonValue;
using core::Params;
using core::Result;
using core::Status;
using namespace core::accounting;

namespace {

std::string typeName(const JsonValue* v) { return v == nullptr ? "nothing" : core::describeJsonType(*v); }

// The value at `key`, which must be of `type`; the refusal names the field's path.
Result<const JsonValue*> field(const JsonValue& o, std::string_view key, const std::string& path, JsonValue::Type type,
                               const std::string& expected) {
  const JsonValue* v = o.find(key);
  if (v == nullptr) return Status::parseError(path + ": missing (expected " + expected + ")");
  if (v->type() != type) return Status::parseError(path + ": expected " + expected + ", found " + typeName(v));
  return v;
}

// One knob of "run": a number inside the knob's range, as the knob flags accept.
Status readKnob(const JsonValue& run, const core::KnobInfo& info, Params& p) {
  const std::string path = std::string("run.") + info.key;
  DPX_ASSIGN_OR_RETURN(const JsonValue* v, field(run, info.key, path, JsonValue::Type::kNumber, "a number"));
  if (Status s = core::validateScriptedKnob(info.knob, statementNumber(*v)); !s.isOk()) {
    return Status::invalidArgument(path + ": " + s.message());
  }
  core::setKnobValue(p, info.knob, statementNumber(*v));
  return Status::ok();
}

// "sampling" or "neighbouring": a name core parses, or "each accountant's own" for unset.
template <typename T>
Result<std::optional<T>> readScheme(const JsonValue& run, const char* key, std::optional<T> (*parse)(std::string_view),
                                    const std::string& accepted) {
  const std::string path = std::string("run.") + key;
  DPX_ASSIGN_OR_RETURN(const JsonValue* v, field(run, key, path, JsonValue::Type::kString, "a string"));
  const std::string& text = v->asString();
  if (text == kEachAccountantsOwn) return std::optional<T>{};
  if (std::optional<T> value = parse(text)) return value;
  return Status::invalidArgument(path + ": \"" + text + "\" must be " + accepted + " or \"" +
                                 std::string(kEachAccountantsOwn) + "\"");
}

// "orders": "default" or a list of Rényi orders; "fixed_alpha": null or one order.
Status readOrders(const JsonValue& o, EpsilonOptions& options) {
  const JsonValue* orders = o.find("orders");
  if (orders != nullptr && orders->isArray()) {
    std::vector<double> list;
    for (const JsonValue& x : orders->asArray()) {
      if (!x.isNumber()) return Status::parseError("options.orders: expected numbers, found " + typeName(&x));
      list.push_back(statementNumber(x));
    }
    Result<std::vector<double>> normalized = normalizeOrders(list);
    if (!normalized) return Status::invalidArgument("options.orders: " + normalized.status().message());
    options.orders = *normalized;
  } else if (orders == nullptr || orders->asString() != "default") {
    return Status::parseError("options.orders: expected \"default\" or an array of Rényi orders, found " +
                              typeName(orders));
  }
  const JsonValue* fixed = o.find("fixed_alpha");
  if (fixed != nullptr && fixed->isNumber()) {
    if (Result<std::vector<double>> one = normalizeOrders({statementNumber(*fixed)}); !one) {
      return Status::invalidArgument("options.fixed_alpha: " + one.status().message());
    }
    options.fixedAlpha = statementNumber(*fixed);
  } else if (fixed == nullptr || !fixed->isNull()) {
    return Status::parseError("options.fixed_alpha: expected null or a number, found " + typeName(fixed));
  }
  return Status::ok();
}

// "exact": the exact accountant's bracket width and optional loss grid.
Status readExact(const JsonValue& o, EpsilonOptions& options) {
  DPX_ASSIGN_OR_RETURN(const JsonValue* exact,
                       field(o, "exact", "options.exact", JsonValue::Type::kObject, "an object"));
  DPX_ASSIGN_OR_RETURN(const JsonValue* accuracy,
                       field(*exact, "accuracy", "options.exact.accuracy", JsonValue::Type::kNumber, "a number"));
  options.exact.accuracy = statementNumber(*accuracy);
  if (!(options.exact.accuracy > 0.0 && options.exact.accuracy <= 0.5)) {
    return Status::invalidArgument("options.exact.accuracy: " + formatNumber(options.exact.accuracy) +
                                   " is out of range: the relative bracket width must be in (0, 0.5]");
  }
  const JsonValue* grid = exact->find("discretisation");
  if (grid != nullptr && grid->isNull()) return Status::ok();
  if (grid == nullptr || !grid->isNumber()) {
    return Status::parseError("options.exact.discretisation: expected null or a number, found " + typeName(grid));
  }
  const double delta = statementNumber(*grid);
  if (!(delta > 0.0 && delta <= 1.0)) {
    return Status::invalidArgument("options.exact.discretisation: " + formatNumber(delta) +
                                   " is out of range: the loss grid Δ must be in (0, 1]");
  }
  options.exact.discretisation = delta;
  return Status::ok();
}

}  // namespace

double statementNumber(const JsonValue& v) {
  const double number = v.asNumber();
  return number == 0.0 ? 0.0 : number;
}

Result<std::string> readHeader(const JsonValue& o) {
  DPX_ASSIGN_OR_RETURN(const JsonValue* format, field(o, "format", "format", JsonValue::Type::kString,
                                                      "\"" + std::string(kStatementFormat) + "\""));
  if (format->asString() != kStatementFormat) {
    return Status::parseError("format: \"" + format->asString() +
                              "\" is not a DP Explorer privacy statement (expected \"" + std::string(kStatementFormat) +
                              "\")");
  }
  DPX_ASSIGN_OR_RETURN(const JsonValue* version,
                       field(o, "format_version", "format_version", JsonValue::Type::kNumber, "an integer"));
  const double v = statementNumber(*version);
  if (v != std::floor(v) || v < 1) {
    return Status::invalidArgument("format_version: " + formatNumber(v) + " is not a format version (an integer ≥ 1)");
  }
  if (v > kStatementFormatVersion) {
    return Status::invalidArgument("format_version: " + formatNumber(v) + " is newer than this DP Explorer reads (" +
                                   std::to_string(kStatementFormatVersion) + ")");
  }
  DPX_ASSIGN_OR_RETURN(const JsonValue* written,
                       field(o, "dpexplorer_version", "dpexplorer_version", JsonValue::Type::kString, "a string"));
  return written->asString();
}

Result<Params> readRun(const JsonValue& statement) {
  DPX_ASSIGN_OR_RETURN(const JsonValue* run, field(statement, "run", "run", JsonValue::Type::kObject, "an object"));
  Params p;
  for (const core::KnobInfo& info : core::knobInfos()) DPX_RETURN_IF_ERROR(readKnob(*run, info, p));
  DPX_ASSIGN_OR_RETURN(const JsonValue* schedule,
                       field(*run, "schedule", "run.schedule", JsonValue::Type::kString, "a string"));
  const auto parsedSchedule = core::parseSchedule(schedule->asString());
  if (!parsedSchedule) return Status::invalidArgument("run.schedule: must be \"constant\" or \"decreasing\"");
  p.schedule = *parsedSchedule;
  DPX_ASSIGN_OR_RETURN(p.sampling, readScheme(*run, "sampling", core::parseSampling,
                                              "poisson, uniform, cyclic, shuffle or balls-in-bins"));
  DPX_ASSIGN_OR_RETURN(p.neighbouring,
                       readScheme(*run, "neighbouring", core::parseNeighbouring, "add-remove or replace-one"));
  // Statements written before optimisers were recorded have none: the accountants' own steps.
  if (run->find("optimizer")) {
    DPX_ASSIGN_OR_RETURN(p.optimizer, readScheme(*run, "optimizer", core::parseOptimizer, "sgd, momentum or adam"));
  }
  DPX_ASSIGN_OR_RETURN(const JsonValue* averaged,
                       field(*run, "averaged", "run.averaged", JsonValue::Type::kBool, "true or false"));
  p.averaged = averaged->asBool();
  for (const auto& [key, slot] :
       {std::pair{"selections", &Params::selections}, std::pair{"steps_per_epoch", &Params::stepsPerEpoch}}) {
    if (!run->find(key)) continue;
    DPX_ASSIGN_OR_RETURN(const JsonValue* value,
                         field(*run, key, "run." + std::string(key), JsonValue::Type::kNumber, "an integer ≥ 1"));
    const double number = statementNumber(*value);
    if (!(number >= 1.0) || number > 1e7 || number != std::floor(number)) {
      return Status::invalidArgument("run." + std::string(key) + ": " + formatNumber(number) +
                                     " is not an integer in [1, 1e7]");
    }
    p.*slot = static_cast<std::int64_t>(number);
  }
  if (p.m > p.n) {
    return Status::invalidArgument("run.m: m = " + std::to_string(p.m) + " exceeds n = " + std::to_string(p.n) +
                                   ": the batch size m must be in [1, n]");
  }
  DPX_RETURN_IF_ERROR(p.validate());
  return p;
}

Result<EpsilonOptions> readOptions(const JsonValue& statement) {
  DPX_ASSIGN_OR_RETURN(const JsonValue* o,
                       field(statement, "options", "options", JsonValue::Type::kObject, "an object"));
  EpsilonOptions options;
  DPX_ASSIGN_OR_RETURN(const JsonValue* conversion, field(*o, "conversion", "options.conversion",
                                                          JsonValue::Type::kString, "\"improved\" or \"classic\""));
  const auto parsed = parseConversion(conversion->asString());
  if (!parsed) return Status::invalidArgument("options.conversion: must be \"improved\" or \"classic\"");
  options.conversion = *parsed;
  DPX_RETURN_IF_ERROR(readOrders(*o, options));
  DPX_RETURN_IF_ERROR(readExact(*o, options));
  return options;
}

}  // namespace dpx::cli
