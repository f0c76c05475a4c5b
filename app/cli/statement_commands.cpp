// dpx statement | verify: the versioned privacy statement of a run, and its re-check.
//
// `verify` reads a statement, rebuilds the run and the options from it through the same range
// checks as the knob flags, recomputes the statement on this build and compares every field of
// the two documents (numbers exactly: the statement writes each as the shortest decimal that
// reads back to the same double). Exit 0: every value matches; 1: the differing fields are
// listed; 2: the file is not a readable statement (malformed JSON with its byte offset, a missing
// or ill-typed field, a knob out of range). The files are read and written by statement_files.h,
// the statement is read back by statement_parsing.h and compared by statement_diff.h.
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "accounting/handoff_snippets.h"
#include "accounting/privacy_statement.h"
#include "cli.h"
#include "cli_support.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_reader.h"
#include "statement_diff.h"
#include "statement_files.h"
#include "statement_parsing.h"

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
  if (Status s = writeWholeFile(request->output, text); !s.isOk()) return fail(io, s);
  if (!isStandardOutput(request->output)) {
    io.out << (request->snippet ? "configuration" : "privacy statement") << " written to " << request->output << "\n";
  }
  return kExitOk;
}

namespace {

// ---------------------------------------------------------------------------------------------
// dpx verify

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
  const Comparison c = compareStatements(in->statement, recomputed);
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
