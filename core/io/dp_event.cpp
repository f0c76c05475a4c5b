#include "io/dp_event.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>

#include "common/format.h"
#include "io/json_reader.h"

namespace dpx::core {

using accounting::GaussianPhase;
using accounting::Phase;
using accounting::RandomAllocationPhase;

namespace {

constexpr std::uintmax_t kMaxEventsBytes = 16 * 1024 * 1024;
// More steps than any run, and room to add counts without overflow.
constexpr std::int64_t kMaxSteps = std::int64_t{1} << 62;

// "events[2].event": where a value sits in the document; the top level is "the top-level event".
std::string where(const std::string& path) { return path.empty() ? "the top-level event" : path; }
std::string member(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

const char* typeName(const JsonValue& v) { return describeJsonType(v); }

// What each class this reader knows carries besides module_name and class_name, and why the
// others are refused.
struct ClassSpec {
  std::string_view name;
  std::set<std::string_view> fields;
};

const ClassSpec kKnownClasses[] = {
    {"NoOpDpEvent", {}},
    {"GaussianDpEvent", {"noise_multiplier"}},
    {"PoissonSampledDpEvent", {"sampling_probability", "event"}},
    {"SelfComposedDpEvent", {"event", "count"}},
    {"ComposedDpEvent", {"events"}},
    {"RandomAllocationDpEvent", {"event", "num_selected", "num_steps"}},
};

// Why a dp_accounting class that is not read here is refused: the mechanism is not one this app
// accounts (its steps are not subsampled-Gaussian or random-allocation steps).
std::string unsupportedReason(std::string_view className) {
  if (className == "NonPrivateDpEvent") return "the operation it stands for is not differentially private (ε = ∞)";
  if (className == "UnsupportedDpEvent") return "dp_accounting marks it as an operation no accountant can account";
  if (className == "SampledWithoutReplacementDpEvent" || className == "SampledWithReplacementDpEvent") {
    return "fixed-size batches are not Poisson sampling, and the accountants here analyse Poisson-subsampled or "
           "randomly allocated Gaussian steps";
  }
  return "the accountants here analyse Poisson-subsampled Gaussian steps and random allocation only";
}

class Flattener {
 public:
  Status flatten(const JsonValue& event, const std::string& path, std::int64_t repeat) {
    if (++m_depth > kMaxJsonDepth) return Status::parseError(where(path) + ": events nested too deeply");
    Status s = flattenObject(event, path, repeat);
    --m_depth;
    return s;
  }
  std::vector<Phase> phases;

 private:
  Status flattenObject(const JsonValue& event, const std::string& path, std::int64_t repeat) {
    if (!event.isObject()) {
      return Status::parseError(where(path) + ": an event must be an object with module_name and class_name, not " +
                                typeName(event));
    }
    DPX_ASSIGN_OR_RETURN(const std::string className, classOf(event, path));
    const ClassSpec* spec = nullptr;
    for (const ClassSpec& c : kKnownClasses) {
      if (c.name == className) spec = &c;
    }
    if (!spec) {
      return Status::invalidArgument(where(path) + ": " + className +
                                     " is not supported: " + unsupportedReason(className));
    }
    for (const JsonMember& m : event.asObject()) {
      if (m.key == "module_name" || m.key == "class_name" || spec->fields.contains(m.key)) continue;
      return Status::parseError(member(path, m.key) + ": " + className + " has no field '" + m.key +
                                "' in the dp_accounting events this reader knows; its meaning cannot be guessed");
    }
    for (std::string_view field : spec->fields) {
      if (!event.find(field)) {
        return Status::parseError(where(path) + ": " + className + " needs the field " + std::string(field));
      }
    }
    if (className == "NoOpDpEvent") return Status::ok();
    if (className == "GaussianDpEvent") {
      DPX_ASSIGN_OR_RETURN(const double sigma, noiseMultiplier(event, path));
      phases.push_back(GaussianPhase{1.0, sigma, repeat});
      return Status::ok();
    }
    if (className == "PoissonSampledDpEvent") return poissonSampled(event, path, repeat);
    if (className == "SelfComposedDpEvent") {
      DPX_ASSIGN_OR_RETURN(const std::int64_t count, integerField(event, path, "count", 1));
      DPX_ASSIGN_OR_RETURN(const std::int64_t total, multiplied(repeat, count, path));
      return flatten(*event.find("event"), member(path, "event"), total);
    }
    if (className == "ComposedDpEvent") {
      const JsonValue& events = *event.find("events");
      const std::string listPath = member(path, "events");
      if (!events.isArray()) {
        return Status::parseError(listPath + ": must be an array of events, not " + std::string(typeName(events)));
      }
      for (std::size_t i = 0; i < events.asArray().size(); ++i) {
        DPX_RETURN_IF_ERROR(flatten(events.asArray()[i], listPath + "[" + std::to_string(i) + "]", repeat));
      }
      return Status::ok();
    }
    return randomAllocation(event, path, repeat);
  }

  // module_name (dp_accounting's) and class_name, both strings.
  Result<std::string> classOf(const JsonValue& event, const std::string& path) {
    const JsonValue* module = event.find("module_name");
    const JsonValue* name = event.find("class_name");
    if (!module || !name) {
      return Status::parseError(where(path) +
                                ": an event needs module_name and class_name (the JSON of a "
                                "dp_accounting DpEvent's to_named_tuple()._asdict())");
    }
    if (!module->isString()) {
      return Status::parseError(member(path, "module_name") + ": must be a string, not " + typeName(*module));
    }
    if (!name->isString()) {
      return Status::parseError(member(path, "class_name") + ": must be a string, not " + typeName(*name));
    }
    if (module->asString() != kDpEventModule) {
      return Status::invalidArgument(member(path, "module_name") + " = '" + module->asString() +
                                     "': not an event of dp_accounting (whose events have module_name '" +
                                     std::string(kDpEventModule) + "'); this reader knows those only");
    }
    return name->asString();
  }

  Result<double> numberField(const JsonValue& event, const std::string& path, std::string_view key) {
    const JsonValue& v = *event.find(key);
    if (!v.isNumber()) {
      return Status::parseError(member(path, key) + ": must be a number, not " + std::string(typeName(v)));
    }
    return v.asNumber();
  }

  // A whole number ≥ minimum (written 10 or 10.0, as Python writes an int or a float).
  Result<std::int64_t> integerField(const JsonValue& event, const std::string& path, std::string_view key,
                                    std::int64_t minimum) {
    DPX_ASSIGN_OR_RETURN(const double value, numberField(event, path, key));
    if (value != std::floor(value) || !(std::abs(value) < static_cast<double>(kMaxSteps))) {
      return Status::invalidArgument(member(path, key) + " = " + v(event, key) + ": must be a whole number");
    }
    if (value < static_cast<double>(minimum)) {
      return Status::invalidArgument(member(path, key) + " = " + v(event, key) + ": must be ≥ " +
                                     std::to_string(minimum));
    }
    return static_cast<std::int64_t>(value);
  }

  static std::string v(const JsonValue& event, std::string_view key) {
    const JsonValue& value = *event.find(key);
    return value.numberText().empty() ? formatNumber(value.asNumber()) : value.numberText();
  }

  Result<double> noiseMultiplier(const JsonValue& gaussian, const std::string& path) {
    DPX_ASSIGN_OR_RETURN(const double sigma, numberField(gaussian, path, "noise_multiplier"));
    if (!(sigma > 0.0)) {
      return Status::invalidArgument(member(path, "noise_multiplier") + " = " + v(gaussian, "noise_multiplier") +
                                     ": the noise multiplier σ must be > 0 (σ = 0 adds no noise: no privacy)");
    }
    return sigma;
  }

  Result<std::int64_t> multiplied(std::int64_t a, std::int64_t b, const std::string& path) {
    if (b != 0 && a > kMaxSteps / b) {
      return Status::invalidArgument(where(path) + ": the run would have more than 2^62 steps");
    }
    return a * b;
  }

  // The event inside a sampling event: a Gaussian (its σ), or nothing (NoOpDpEvent). Anything
  // else is refused by name: a composition inside one sample is not a run of sampled steps.
  Result<std::optional<double>> innerGaussian(const JsonValue& outer, const std::string& path,
                                              std::string_view outerName) {
    const JsonValue& inner = *outer.find("event");
    const std::string innerPath = member(path, "event");
    if (!inner.isObject()) {
      return Status::parseError(innerPath + ": an event must be an object with module_name and class_name, not " +
                                std::string(typeName(inner)));
    }
    DPX_ASSIGN_OR_RETURN(const std::string className, classOf(inner, innerPath));
    if (className == "NoOpDpEvent") {
      DPX_RETURN_IF_ERROR(flatten(inner, innerPath, 1));  // checks its fields
      return std::optional<double>{};
    }
    if (className != "GaussianDpEvent") {
      const bool known = std::any_of(std::begin(kKnownClasses), std::end(kKnownClasses),
                                     [&](const ClassSpec& c) { return c.name == className; });
      return Status::invalidArgument(
          innerPath + ": " + className + " is not supported inside " + std::string(outerName) + ": " +
          (known ? "the sampled mechanism must be a GaussianDpEvent (a composition inside one sample reuses the "
                   "sample, which is not a run of independently sampled steps)"
                 : unsupportedReason(className)));
    }
    Flattener check;  // the Gaussian's fields, with their path
    DPX_RETURN_IF_ERROR(check.flatten(inner, innerPath, 1));
    return std::optional<double>{std::get<GaussianPhase>(check.phases.front()).noiseMultiplier};
  }

  Status poissonSampled(const JsonValue& event, const std::string& path, std::int64_t repeat) {
    DPX_ASSIGN_OR_RETURN(const double q, numberField(event, path, "sampling_probability"));
    if (!(q > 0.0 && q <= 1.0)) {
      return Status::invalidArgument(member(path, "sampling_probability") + " = " + v(event, "sampling_probability") +
                                     ": must be in (0, 1] (the probability that a record joins the sample)");
    }
    DPX_ASSIGN_OR_RETURN(const std::optional<double> sigma, innerGaussian(event, path, "PoissonSampledDpEvent"));
    if (sigma) phases.push_back(GaussianPhase{q, *sigma, repeat});
    return Status::ok();
  }

  Status randomAllocation(const JsonValue& event, const std::string& path, std::int64_t repeat) {
    DPX_ASSIGN_OR_RETURN(const std::int64_t steps, integerField(event, path, "num_steps", 1));
    DPX_ASSIGN_OR_RETURN(const std::int64_t selected, integerField(event, path, "num_selected", 0));
    if (selected > steps) {
      return Status::invalidArgument(member(path, "num_selected") + " = " + std::to_string(selected) +
                                     ": must be ≤ num_steps = " + std::to_string(steps) +
                                     " (a record is placed in at most every step of the epoch)");
    }
    DPX_ASSIGN_OR_RETURN(const std::optional<double> sigma, innerGaussian(event, path, "RandomAllocationDpEvent"));
    // A record selected for no step is never used: no privacy cost, as dp_accounting reads it.
    if (sigma && selected > 0) phases.push_back(RandomAllocationPhase{*sigma, steps, selected, repeat});
    return Status::ok();
  }

  int m_depth = 0;
};

}  // namespace

Result<std::vector<Phase>> phasesFromDpEventJson(std::string_view text) {
  DPX_ASSIGN_OR_RETURN(const JsonValue document, parseJson(text));
  Flattener flattener;
  DPX_RETURN_IF_ERROR(flattener.flatten(document, "", 1));
  if (flattener.phases.empty()) {
    return Status::invalidArgument("the events have no privacy cost (only NoOpDpEvent): there is no run to account");
  }
  std::vector<Phase> phases = accounting::mergedPhases(flattener.phases);
  for (const Phase& p : phases) {
    if (accounting::phaseSteps(p) > kMaxSteps / 2) {
      return Status::invalidArgument("the run would have more than 2^61 steps of " + accounting::phaseDescription(p));
    }
  }
  DPX_RETURN_IF_ERROR(accounting::validatePhases(phases));
  return phases;
}

Result<std::vector<Phase>> readDpEventFile(const std::string& path) {
  const auto cannotRead = [&](const std::string& reason) {
    return Status::ioError("cannot read events file " + path + ": " + reason);
  };
  if (path.empty()) return cannotRead("no file name given");
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return cannotRead("it is a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) return cannotRead(std::strerror(errno));
  std::string bytes(kMaxEventsBytes + 1, '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (file.bad()) return cannotRead(std::strerror(errno));
  bytes.resize(static_cast<std::size_t>(file.gcount()));
  if (bytes.size() > kMaxEventsBytes) {
    return Status::invalidArgument("events file " + path + ": more than 16 MiB is too large for a run's DpEvents");
  }
  Result<std::vector<Phase>> phases = phasesFromDpEventJson(bytes);
  if (!phases) return phases.status().withContext("events file " + path);
  return phases;
}

}  // namespace dpx::core
