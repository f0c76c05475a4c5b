// dpx statement | verify: the versioned privacy statement of a run, and its re-check.
//
// `verify` reads a statement, rebuilds the run and the options from it through the same range
// checks as the knob flags, recomputes the statement on this build and compares every field of
// the two documents (numbers exactly: the statement writes each as the shortest decimal that
// reads back to the same double). Exit 0: every value matches; 1: the differing fields are
// listed; 2: the file is not a readable statement (malformed JSON with its byte offset, a missing
// or ill-typed field, a knob out of range).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "accounting/handoff_snippets.h"
#include "accounting/privacy_statement.h"
#include "accounting/rdp_conversion.h"
#include "cli.h"
#include "cli_support.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_reader.h"
#include "io/json_writer.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonValue;
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
  std::string output;
};

void addStatementOptions(CommandLine& parser) {
  parser.addOption("conversion",
                   "RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic (Mironov 2017)", "name");
  parser.addOption("alphas", "comma-separated Rényi orders in [1.01, 1024]", "list");
  parser.addOption("discretisation", "exact accountant: loss grid Δ in (0, 1] (default: chosen to meet --accuracy)",
                   "D");
  parser.addOption("accuracy", "exact accountant: relative width of the ε bracket, in (0, 0.5] (default 0.01)", "A");
  // Read by the shared option parser; a statement reports headlines, so it is refused below.
  parser.addOption("variant", "not used", "id", {}, /*hidden=*/true);
  parser.addOption("json", "the statement as JSON (what dpx verify reads)");
  parser.addOption("snippet", "print only the run as configuration for opacus | jax-privacy", "name");
  parser.addOption("output", "write to FILE instead of standard output", "FILE");
}

Result<StatementRequest> statementRequest(const CommandLine& parser) {
  StatementRequest r;
  DPX_ASSIGN_OR_RETURN(r.params, knobsFromParser(parser));
  DPX_ASSIGN_OR_RETURN(r.options, epsilonOptionsFromParser(parser));
  if (!r.options.variant.empty()) {
    return Status::invalidArgument("--variant '" + r.options.variant +
                                   "': a privacy statement reports each accountant's headline result");
  }
  r.json = parser.isSet("json");
  if (parser.isSet("snippet")) {
    DPX_ASSIGN_OR_RETURN(r.snippet,
                         parseNamed("snippet", parser.value("snippet"), parseHandoff, "opacus or jax-privacy"));
    if (r.json) return Status::invalidArgument("--snippet and --json: give one (--snippet prints only the snippet)");
  }
  r.output = parser.value("output");
  if (parser.isSet("output") && r.output.empty()) {
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

// Whether `path` names an open file descriptor: /dev/fd/N, /proc/<pid>/fd/N, or a symbolic link
// (like /dev/stdout) leading through one.
bool namesADescriptor(const std::string& path) {
  namespace fs = std::filesystem;
  const auto isDescriptorName = [](const std::string& p) {
    return p.starts_with("/dev/fd/") || (p.starts_with("/proc/") && p.find("/fd/") != std::string::npos);
  };
  fs::path name = path;
  std::error_code error;
  for (int depth = 0; depth < 40; ++depth) {
    if (isDescriptorName(name.lexically_normal().string())) return true;
    if (!fs::is_symlink(fs::symlink_status(name, error))) return false;
    const fs::path link = fs::read_symlink(name, error);
    if (error) return false;
    name = link.is_absolute() ? link : name.parent_path() / link;
  }
  return false;
}

// Whether `path` is the file standard output writes to (then the statement went there, and a
// line saying so would follow it into whatever reads it).
bool isStandardOutput(const std::string& path) {
  struct stat target {};
  struct stat out {};
  return ::stat(path.c_str(), &target) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 && target.st_dev == out.st_dev &&
         target.st_ino == out.st_ino;
}

// Where writing `path` lands: through a symbolic link (and a link to a link) to its target, so
// that the link survives the rename.
std::filesystem::path writeTarget(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target = path;
  std::error_code error;
  for (int depth = 0; fs::is_symlink(fs::symlink_status(target, error)); ++depth) {
    const fs::path link = fs::read_symlink(target, error);
    if (error || depth == 127) return path;  // a loop: writing replaces the link itself
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

// The text in place of `path`, whole or not at all: written to a temporary file beside it and
// renamed over it (a device or a pipe is written into instead), so that a reader never sees half a statement and a
// failed write leaves the old file as it was. An existing file keeps its mode bits (not its owner, group, ACLs or
// extended attributes). The refusals are worded as they always have been (the operating system's reason), since scripts
// may match them.
Status writeFile(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const auto cannotWrite = [&](const std::string& reason) {
    return Status::ioError("cannot write " + path + ": " + reason);
  };
  std::error_code error;
  const fs::file_status existing = fs::status(path, error);
  const bool exists = fs::exists(existing);
  if (exists && ::access(path.c_str(), W_OK) != 0) return cannotWrite("Existing file " + path + " is not writable");
  if (fs::is_directory(existing)) return cannotWrite("Filename refers to a directory");
  // A device or a pipe (/dev/null, a FIFO), or a name for an open descriptor (/dev/stdout,
  // /proc/self/fd/1: maybe the file a shell opened with >>), is written into, the descriptor's
  // file appended to: a file renamed over it would replace the device, or the shell's file.
  const bool descriptor = namesADescriptor(path);
  if (exists && (descriptor || !fs::is_regular_file(existing))) {
    std::FILE* sink = std::fopen(path.c_str(), descriptor ? "ab" : "wb");
    if (sink == nullptr) return cannotWrite(std::strerror(errno));
    int failure = 0;
    if (std::fwrite(text.data(), 1, text.size(), sink) != text.size() || std::fflush(sink) != 0) {
      failure = errno != 0 ? errno : EIO;
    }
    if (std::fclose(sink) != 0 && failure == 0) failure = errno;
    return failure == 0 ? Status::ok() : cannotWrite(std::strerror(failure));
  }
  const fs::path target = writeTarget(path);

  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::mt19937_64 random(std::random_device{}());
  std::uniform_int_distribution<std::size_t> letter(0, sizeof kLetters - 2);
  fs::path temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    std::string suffix = ".";
    for (int i = 0; i < 6; ++i) suffix += kLetters[letter(random)];
    temporary = target;
    temporary += suffix;
    // O_EXCL: a new file, never someone else's. Replacing a file: private until it has the old
    // file's mode, so no one can open the new statement in between.
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 99)) return cannotWrite(std::strerror(errno));
  }
  int failure = 0;
  if (exists && ::fchmod(fd, static_cast<mode_t>(existing.permissions() & fs::perms::all)) != 0) failure = errno;
  std::FILE* file = failure == 0 ? ::fdopen(fd, "wb") : nullptr;
  if (file == nullptr) {
    if (failure == 0) failure = errno;
    ::close(fd);
    fs::remove(temporary, error);
    return cannotWrite(std::strerror(failure));
  }
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0) {
    failure = errno != 0 ? errno : EIO;
  }
  // Durable before it replaces the old file. A file system that cannot sync says so (EINVAL,
  // ENOTSUP, EROFS); any other error (ENOSPC, EDQUOT, EIO on a network file system) may be the
  // only report of a lost write.
  if (failure == 0 && ::fsync(fileno(file)) != 0 && errno != EINVAL && errno != ENOTSUP && errno != EROFS) {
    failure = errno;
  }
  if (std::fclose(file) != 0 && failure == 0) failure = errno;
  if (failure == 0 && std::rename(temporary.c_str(), target.c_str()) != 0) failure = errno;
  if (failure != 0) {
    fs::remove(temporary, error);
    return cannotWrite(std::strerror(failure));
  }
  return Status::ok();
}

}  // namespace

int commandStatement(const Arguments& args, Io& io) {
  CommandLine parser;
  addKnobOptions(parser);
  addStatementOptions(parser);
  const std::string summary =
      "The privacy statement of a run: every accountant's verdict (applicable or the violated assumptions), ε at δ,\n"
      "native parameters and the assumptions checked; --json writes the re-checkable document (dpx verify FILE).";
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
  if (request->output.empty()) {
    io.out << text;
    return kExitOk;
  }
  if (Status s = writeFile(request->output, text); !s.isOk()) return fail(io, s);
  if (!isStandardOutput(request->output)) {
    io.out << (request->snippet ? "configuration" : "privacy statement") << " written to " << request->output << "\n";
  }
  return kExitOk;
}

namespace {

// ---------------------------------------------------------------------------------------------
// dpx verify: reading the statement

constexpr std::uintmax_t kMaxStatementBytes = 16 * 1024 * 1024;

std::string typeName(const JsonValue* v) {
  if (v == nullptr) return "nothing";
  switch (v->type()) {
    case JsonValue::Type::kNull:
      return "null";
    case JsonValue::Type::kBool:
      return "a boolean";
    case JsonValue::Type::kNumber:
      return "a number";
    case JsonValue::Type::kString:
      return "a string";
    case JsonValue::Type::kArray:
      return "an array";
    case JsonValue::Type::kObject:
      return "an object";
  }
  return "nothing";
}

// A number as verify has always read it: -0 is 0, which the messages and difference lines print.
double numberOf(const JsonValue& v) {
  const double number = v.asNumber();
  return number == 0.0 ? 0.0 : number;
}

// The value at `key`, which must be of `type`; the refusal names the field's path.
Result<const JsonValue*> field(const JsonValue& o, std::string_view key, const std::string& path, JsonValue::Type type,
                               const std::string& expected) {
  const JsonValue* v = o.find(key);
  if (v == nullptr) return Status::parseError(path + ": missing (expected " + expected + ")");
  if (v->type() != type) return Status::parseError(path + ": expected " + expected + ", found " + typeName(v));
  return v;
}

// The failures are worded as they always have been (the operating system's reason, or "file to
// open is a directory"), since scripts may match them.
Result<std::string> readStatementBytes(const std::string& path) {
  const auto cannotRead = [&](const std::string& reason) {
    return Status::ioError("cannot read " + path + ": " + reason);
  };
  if (path.empty()) return cannotRead("No file name specified");
  std::ifstream file(path, std::ios::binary);
  if (!file) return cannotRead(std::strerror(errno));
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return cannotRead("file to open is a directory");
  const std::uintmax_t size =
      std::filesystem::is_regular_file(path, error) ? std::filesystem::file_size(path, error) : 0;
  if (!error && size > kMaxStatementBytes) {
    return Status::invalidArgument(path + ": " + std::to_string(size) +
                                   " bytes is too large for a privacy statement (at most 16 MiB)");
  }
  // A pipe has no size to check beforehand: read one byte past the limit at most.
  std::string bytes(kMaxStatementBytes + 1, '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (file.bad()) return cannotRead(std::strerror(errno));
  bytes.resize(static_cast<std::size_t>(file.gcount()));
  if (bytes.size() > kMaxStatementBytes) {
    return Status::invalidArgument(path + ": more than " + std::to_string(kMaxStatementBytes) +
                                   " bytes is too large for a privacy statement (at most 16 MiB)");
  }
  return bytes;
}

Result<JsonValue> readStatementFile(const std::string& path) {
  DPX_ASSIGN_OR_RETURN(const std::string bytes, readStatementBytes(path));
  Result<JsonValue> doc = core::parseJson(bytes);
  if (!doc) return Status::parseError(path + ": not JSON: " + doc.status().message());
  if (!doc->isObject()) return Status::parseError(path + ": expected a JSON object (a privacy statement)");
  return std::move(doc).value();
}

// format, format_version and the version of DP Explorer that wrote it.
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
  const double v = numberOf(*version);
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

// One knob of "run": a number inside the knob's range, as the knob flags accept.
Status readKnob(const JsonValue& run, const core::KnobInfo& info, Params& p) {
  const std::string path = std::string("run.") + info.key;
  DPX_ASSIGN_OR_RETURN(const JsonValue* v, field(run, info.key, path, JsonValue::Type::kNumber, "a number"));
  if (Status s = core::validateKnob(info.knob, numberOf(*v)); !s.isOk()) {
    return Status::invalidArgument(path + ": " + s.message());
  }
  core::setKnobValue(p, info.knob, numberOf(*v));
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

Result<Params> readRun(const JsonValue& statement) {
  DPX_ASSIGN_OR_RETURN(const JsonValue* run, field(statement, "run", "run", JsonValue::Type::kObject, "an object"));
  Params p;
  for (const core::KnobInfo& info : core::knobInfos()) DPX_RETURN_IF_ERROR(readKnob(*run, info, p));
  DPX_ASSIGN_OR_RETURN(const JsonValue* schedule,
                       field(*run, "schedule", "run.schedule", JsonValue::Type::kString, "a string"));
  const auto parsedSchedule = core::parseSchedule(schedule->asString());
  if (!parsedSchedule) return Status::invalidArgument("run.schedule: must be \"constant\" or \"decreasing\"");
  p.schedule = *parsedSchedule;
  DPX_ASSIGN_OR_RETURN(p.sampling,
                       readScheme(*run, "sampling", core::parseSampling, "poisson, uniform, cyclic or shuffle"));
  DPX_ASSIGN_OR_RETURN(p.neighbouring,
                       readScheme(*run, "neighbouring", core::parseNeighbouring, "add-remove or replace-one"));
  // Statements written before optimisers were recorded have none: the accountants' own steps.
  if (run->find("optimizer")) {
    DPX_ASSIGN_OR_RETURN(p.optimizer, readScheme(*run, "optimizer", core::parseOptimizer, "sgd, momentum or adam"));
  }
  DPX_ASSIGN_OR_RETURN(const JsonValue* averaged,
                       field(*run, "averaged", "run.averaged", JsonValue::Type::kBool, "true or false"));
  p.averaged = averaged->asBool();
  if (p.m > p.n) {
    return Status::invalidArgument("run.m: m = " + std::to_string(p.m) + " exceeds n = " + std::to_string(p.n) +
                                   ": the batch size m must be in [1, n]");
  }
  DPX_RETURN_IF_ERROR(p.validate());
  return p;
}

// "orders": "default" or a list of Rényi orders; "fixed_alpha": null or one order.
Status readOrders(const JsonValue& o, EpsilonOptions& options) {
  const JsonValue* orders = o.find("orders");
  if (orders != nullptr && orders->isArray()) {
    std::vector<double> list;
    for (const JsonValue& x : orders->asArray()) {
      if (!x.isNumber()) return Status::parseError("options.orders: expected numbers, found " + typeName(&x));
      list.push_back(numberOf(x));
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
    if (Result<std::vector<double>> one = normalizeOrders({numberOf(*fixed)}); !one) {
      return Status::invalidArgument("options.fixed_alpha: " + one.status().message());
    }
    options.fixedAlpha = numberOf(*fixed);
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
  options.exact.accuracy = numberOf(*accuracy);
  if (!(options.exact.accuracy > 0.0 && options.exact.accuracy <= 0.5)) {
    return Status::invalidArgument("options.exact.accuracy: " + formatNumber(options.exact.accuracy) +
                                   " is out of range: the relative bracket width must be in (0, 0.5]");
  }
  const JsonValue* grid = exact->find("discretisation");
  if (grid != nullptr && grid->isNull()) return Status::ok();
  if (grid == nullptr || !grid->isNumber()) {
    return Status::parseError("options.exact.discretisation: expected null or a number, found " + typeName(grid));
  }
  const double delta = numberOf(*grid);
  if (!(delta > 0.0 && delta <= 1.0)) {
    return Status::invalidArgument("options.exact.discretisation: " + formatNumber(delta) +
                                   " is out of range: the loss grid Δ must be in (0, 1]");
  }
  options.exact.discretisation = delta;
  return Status::ok();
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

// ---------------------------------------------------------------------------------------------
// dpx verify: comparing the two documents

struct Comparison {
  int matches = 0;
  std::vector<std::string> differences;
  // Numbers that differ in their last bits, within their accountant's recorded tolerance.
  std::vector<std::string> withinTolerance;
  // Each accountant's relative tolerance, as this build records it (accountant.h says why).
  std::map<std::string, double> toleranceOf;
};

std::string excerpt(const std::string& text, std::size_t from) {
  constexpr std::size_t kWidth = 48;
  if (text.size() <= kWidth + 12) return text;
  const std::size_t start = from > 16 ? from - 16 : 0;
  return (start > 0 ? "…" : "") + text.substr(start, kWidth) + (start + kWidth < text.size() ? "…" : "");
}

// An object's members in the order the difference lines have always followed: by name (in the
// byte order of their UTF-8), a name given twice once, with its last value (the one find() reads).
std::vector<const core::JsonMember*> sortedMembers(const JsonValue& object) {
  std::vector<const core::JsonMember*> members;
  for (const core::JsonMember& m : object.asObject()) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(),
                   [](const core::JsonMember* a, const core::JsonMember* b) { return a->key < b->key; });
  std::vector<const core::JsonMember*> lastOfEach;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i + 1 < members.size() && members[i + 1]->key == members[i]->key) continue;
    lastOfEach.push_back(members[i]);
  }
  return lastOfEach;
}

// A string in a compact document: quote, backslash and control characters escaped (\b \f \n \r \t
// by name, the others as \u00XX), everything else as its UTF-8.
std::string compactString(const std::string& text) {
  std::string out(1, '"');
  out += core::jsonEscape(text);
  out += '"';
  return out;
}

// A number in a compact document: an integer within 64 bits in full (as written, or as the double
// it reads as), any other number with its shortest round-trip digits, in decimal form unless the
// exponent form is shorter ("1e-05", "1.5e+300", but "12345678901234567000").
std::string compactNumber(const JsonValue& v) {
  const std::string& text = v.numberText();
  if (text.find_first_of(".eE") == std::string::npos) {
    std::int64_t integer = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
    if (error == std::errc() && end == text.data() + text.size()) return std::to_string(integer);
  }
  const double d = v.asNumber();
  if (d == std::floor(d) && d >= -0x1p63 && d < 0x1p63) return std::to_string(static_cast<std::int64_t>(d));
  // "d.ddde±x": the shortest digits and the decimal exponent.
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  if (error != std::errc()) return core::roundTripNumber(d);
  const std::string scientific(buffer, end);
  const bool negative = scientific.front() == '-';
  const std::size_t e = scientific.find('e');
  std::string digits = scientific.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int point = std::stoi(scientific.substr(e + 1)) + 1;  // digits[0] is followed by `point - 1` places
  const int count = static_cast<int>(digits.size());
  // Characters the decimal form saves over the exponent form, the two-digit exponent and its
  // "e±" being 4, a point only in one of the forms shifting it by one.
  int bias = 4;
  if (count <= point && count > 1) {
    ++bias;
  } else if (count == 1 && point <= 0) {
    --bias;
  }
  const bool decimal = point <= 0 ? 1 - point <= bias : point <= count ? true : point <= count + bias;
  std::string out = negative ? "-" : "";
  if (decimal) {
    if (point <= 0) {
      out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    } else if (point < count) {
      out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
    } else {
      out += digits + std::string(static_cast<std::size_t>(point - count), '0');
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (count > 1) out += "." + digits.substr(1);
  const int exponent = point - 1;
  out += exponent < 0 ? "e-" : "e+";
  const std::string magnitude = std::to_string(exponent < 0 ? -exponent : exponent);
  return out + (magnitude.size() < 2 ? "0" : "") + magnitude;
}

// The compact JSON text of a value as the difference lines show an array or an object: members
// by name, no white space.
std::string compactJson(const JsonValue& v) {
  switch (v.type()) {
    case JsonValue::Type::kNull:
      return "null";
    case JsonValue::Type::kBool:
      return v.asBool() ? "true" : "false";
    case JsonValue::Type::kNumber:
      return compactNumber(v);
    case JsonValue::Type::kString:
      return compactString(v.asString());
    case JsonValue::Type::kArray: {
      std::string out = "[";
      for (const JsonValue& x : v.asArray()) out += (out.size() > 1 ? "," : "") + compactJson(x);
      return out + "]";
    }
    case JsonValue::Type::kObject: {
      std::string out = "{";
      for (const core::JsonMember* m : sortedMembers(v)) {
        out += (out.size() > 1 ? "," : "") + compactString(m->key) + ":" + compactJson(m->value);
      }
      return out + "}";
    }
  }
  return "null";
}

// A value as the difference lines show it; for two long strings, the part where they first differ.
std::string render(const JsonValue* v, const JsonValue* other = nullptr) {
  if (v == nullptr) return "nothing";
  switch (v->type()) {
    case JsonValue::Type::kNumber:
      return core::roundTripNumber(numberOf(*v));
    case JsonValue::Type::kString: {
      const std::string& text = v->asString();
      const std::string& o = other != nullptr ? other->asString() : std::string();
      std::size_t at = 0;
      while (at < text.size() && at < o.size() && text[at] == o[at]) ++at;
      return "\"" + core::jsonEscape(excerpt(text, at)) + "\"";
    }
    case JsonValue::Type::kArray:
    case JsonValue::Type::kObject:
      return excerpt(compactJson(*v), 0);
    case JsonValue::Type::kBool:
      return v->asBool() ? "true" : "false";
    case JsonValue::Type::kNull:
      return "null";
  }
  return "nothing";
}

// Numbers compare exactly: both sides are the same decimal text parsed by the same parser.
bool sameValue(const JsonValue* a, const JsonValue* b) {
  if (a == nullptr || b == nullptr || a->type() != b->type()) return false;
  switch (a->type()) {
    case JsonValue::Type::kNull:
      return true;
    case JsonValue::Type::kBool:
      return a->asBool() == b->asBool();
    case JsonValue::Type::kNumber:
      return a->asNumber() == b->asNumber();
    case JsonValue::Type::kString:
      return a->asString() == b->asString();
    case JsonValue::Type::kArray:
    case JsonValue::Type::kObject:
      break;
  }
  return false;
}

// `stated` or `recomputed` is nullptr where the field is missing from that document. Numbers
// within `tolerance` (relative; 0: exactly) match.
void compareValues(const JsonValue* stated, const JsonValue* recomputed, const std::string& path, Comparison& c,
                   double tolerance = 0.0);

// |x − y| ≤ tolerance · max(|x|, |y|, 1): relative, and absolute below 1, where a difference of
// two close values (a bracket's relative width) has lost the leading digits it would be relative to.
bool closeNumbers(double x, double y, double tolerance) {
  if (!std::isfinite(x) || !std::isfinite(y)) return false;
  return std::fabs(x - y) <= tolerance * std::max({std::fabs(x), std::fabs(y), 1.0});
}

// A text's runs of digits (with a decimal point and an exponent) apart from the words between them.
struct NumbersInText {
  std::vector<std::string> words;
  std::vector<double> numbers;
};

NumbersInText splitNumbers(const std::string& text) {
  NumbersInText out;
  std::string word;
  std::size_t i = 0;
  auto digit = [&](std::size_t at) { return at < text.size() && text[at] >= '0' && text[at] <= '9'; };
  while (i < text.size()) {
    if (!digit(i)) {
      word += text[i++];
      continue;
    }
    std::size_t end = i;
    while (digit(end) || (end < text.size() && text[end] == '.' && digit(end + 1))) ++end;
    if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
      std::size_t exponent = end + 1;
      if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
      if (digit(exponent)) {
        end = exponent;
        while (digit(end)) ++end;
      }
    }
    out.words.push_back(word);
    word.clear();
    out.numbers.push_back(std::strtod(text.substr(i, end - i).c_str(), nullptr));
    i = end;
  }
  out.words.push_back(word);
  return out;
}

// Two values that differ only in the last bits another CPU's arithmetic moves: numbers within the
// tolerance, or texts (the hand-off snippets quote ε) whose words agree and whose numbers do.
bool withinTolerance(const JsonValue* a, const JsonValue* b, double tolerance) {
  if (tolerance <= 0.0 || a == nullptr || b == nullptr || a->type() != b->type()) return false;
  if (a->isNumber()) return closeNumbers(a->asNumber(), b->asNumber(), tolerance);
  if (!a->isString()) return false;
  const NumbersInText x = splitNumbers(a->asString());
  const NumbersInText y = splitNumbers(b->asString());
  if (x.words != y.words || x.numbers.size() != y.numbers.size()) return false;
  for (std::size_t i = 0; i < x.numbers.size(); ++i) {
    if (!closeNumbers(x.numbers[i], y.numbers[i], tolerance)) return false;
  }
  return true;
}

// The tolerance each accountant's entry records, read from the recomputed document (this build's,
// so a statement cannot widen its own; the stated "tolerance" fields are compared exactly).
std::map<std::string, double> tolerancesOf(const JsonValue& statement) {
  std::map<std::string, double> out;
  const JsonValue* accountants = statement.find("accountants");
  if (accountants == nullptr || !accountants->isArray()) return out;
  for (const JsonValue& a : accountants->asArray()) {
    const JsonValue* id = a.find("id");
    const JsonValue* tolerance = a.find("tolerance");
    const JsonValue* relative = tolerance != nullptr ? tolerance->find("relative") : nullptr;
    if (id != nullptr && id->isString() && relative != nullptr && relative->isNumber()) {
      out[id->asString()] = relative->asNumber();
    }
  }
  return out;
}

// An element's name in a path: its "id", "accountant" or "check" when every element has a
// distinct one (accountants[rdp], checks[sampling]), else its index.
std::vector<std::string> elementLabels(const JsonValue::Array& a) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::string label = std::to_string(i);
    for (const char* key : {"id", "accountant", "check"}) {
      if (const JsonValue* name = a[i].find(key); name != nullptr && name->isString()) {
        label = name->asString();
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

void compareArrays(const JsonValue::Array& stated, const JsonValue::Array& recomputed, const std::string& path,
                   Comparison& c, double tolerance) {
  const std::vector<std::string> statedLabels = elementLabels(stated);
  const std::vector<std::string> recomputedLabels = elementLabels(recomputed);
  std::map<std::string, const JsonValue*> statedByLabel;
  for (std::size_t i = 0; i < statedLabels.size(); ++i) statedByLabel[statedLabels[i]] = &stated[i];
  for (std::size_t i = 0; i < recomputedLabels.size(); ++i) {
    auto it = statedByLabel.find(recomputedLabels[i]);
    const JsonValue* s = it == statedByLabel.end() ? nullptr : it->second;
    compareValues(s, &recomputed[i], path + "[" + recomputedLabels[i] + "]", c, tolerance);
    if (it != statedByLabel.end()) statedByLabel.erase(it);
  }
  for (const std::string& label : statedLabels) {
    if (statedByLabel.count(label)) {
      compareValues(statedByLabel[label], nullptr, path + "[" + label + "]", c, tolerance);
    }
  }
}

void compareObjects(const JsonValue& stated, const JsonValue& recomputed, const std::string& path, Comparison& c,
                    double tolerance) {
  const std::string prefix = path.empty() ? "" : path + ".";
  // An accountant's entry carries its own tolerance; the hand-off's ε is the named accountant's.
  const JsonValue* owner = recomputed.find(path == "handoff" ? "dp_sgd_epsilon_from" : "id");
  if ((path == "handoff" || path.rfind("accountants[", 0) == 0) && owner != nullptr && owner->isString()) {
    const auto it = c.toleranceOf.find(owner->asString());
    if (it != c.toleranceOf.end()) tolerance = it->second;
  }
  for (const core::JsonMember* m : sortedMembers(recomputed)) {
    // Which build wrote the statement is reported as a note, not a difference.
    if (path.empty() && m->key == "dpexplorer_version") continue;
    compareValues(stated.find(m->key), &m->value, prefix + m->key, c, m->key == "tolerance" ? 0.0 : tolerance);
  }
  for (const core::JsonMember* m : sortedMembers(stated)) {
    if (recomputed.find(m->key) == nullptr) compareValues(&m->value, nullptr, prefix + m->key, c);
  }
}

void compareValues(const JsonValue* stated, const JsonValue* recomputed, const std::string& path, Comparison& c,
                   double tolerance) {
  if (stated != nullptr && recomputed != nullptr) {
    if (stated->isObject() && recomputed->isObject()) return compareObjects(*stated, *recomputed, path, c, tolerance);
    if (stated->isArray() && recomputed->isArray())
      return compareArrays(stated->asArray(), recomputed->asArray(), path, c, tolerance);
  }
  if (sameValue(stated, recomputed)) {
    ++c.matches;
  } else if (withinTolerance(stated, recomputed, tolerance)) {
    ++c.matches;
    c.withinTolerance.push_back(path + ": statement " + render(stated, recomputed) + " recomputed " +
                                render(recomputed, stated) + " (within the tolerance " +
                                core::roundTripNumber(tolerance) + " its accountant records)");
  } else if (stated == nullptr) {
    c.differences.push_back(path + ": missing from the statement, recomputed " + render(recomputed));
  } else if (recomputed == nullptr) {
    c.differences.push_back(path + ": statement " + render(stated) + ", not in the recomputed statement");
  } else {
    c.differences.push_back(path + ": statement " + render(stated, recomputed) + " recomputed " +
                            render(recomputed, stated));
  }
}

// Positional arguments (the file) apart from the flags, which the shared parser checks.
std::vector<std::string> splitFiles(const Arguments& args, Arguments& flags) {
  std::vector<std::string> files;
  flags = Arguments{args.empty() ? std::string() : args.front()};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 1 && a.front() == '-') {
      flags.push_back(a);
    } else {
      files.push_back(a);
    }
  }
  return files;
}

struct VerifyInputs {
  JsonValue statement;
  std::string writtenBy;
  Params params;
  EpsilonOptions options;
};

Result<VerifyInputs> readVerifyInputs(const std::string& path) {
  VerifyInputs in;
  DPX_ASSIGN_OR_RETURN(in.statement, readStatementFile(path));
  const std::string where = path + ": ";
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

int commandVerify(const Arguments& args, Io& io) {
  CommandLine parser;
  parser.addPositionalArgument("FILE", "a privacy statement (dpx statement --json)");
  Arguments flags;
  const std::vector<std::string> files = splitFiles(args, flags);
  const std::string summary =
      "Recompute a privacy statement on this build and compare every field (numbers exactly, or within the\n"
      "relative tolerance each accountant's entry records: another CPU moves the last bits).\n"
      "Exit 0: every value matches; 1: the differing fields are listed; 2: not a readable statement.";
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
  Result<JsonValue> written = core::parseJson(privacyStatementJson(*statement));
  const JsonValue recomputed =
      written && written->isObject() ? std::move(written).value() : JsonValue(JsonValue::Object{});
  Comparison c;
  c.toleranceOf = tolerancesOf(recomputed);
  compareValues(&in->statement, &recomputed, "", c);
  for (const std::string& d : c.withinTolerance) io.out << "≈ " << d << "\n";
  if (c.differences.empty()) {
    io.out << "verified: " << c.matches << " values match";
    if (!c.withinTolerance.empty()) {
      io.out << " (" << c.withinTolerance.size()
             << " of them in their last bits, within their accountant's recorded tolerance)";
    }
    io.out << "\n";
    return kExitOk;
  }
  for (const std::string& d : c.differences) io.out << d << "\n";
  io.out << "not verified: " << c.differences.size()
         << (c.differences.size() == 1 ? " value differs, " : " values differ, ") << c.matches << " match\n";
  return kExitFailure;
}

}  // namespace dpx::cli
