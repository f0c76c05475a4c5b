// dpx audit --scores FILE (knobs | --statement F) [--confidence c] [--json]: reads the scores
// (core/audit/score_import.h), builds the claimed guarantee and audits the scores against it
// (core/audit/score_audit.h). Prints the one-line verdict first; a contradiction is repeated on
// stderr, as the training audit does, so no script can miss it. The exit status is 0 whatever the
// verdict (it is the result, not an error); 2 for a file or flag that cannot be read.
#include "audit_scores.h"

#include <array>
#include <string>
#include <string_view>

#include "accounting/accountant.h"
#include "audit/score_audit.h"
#include "audit/score_import.h"
#include "cli.h"
#include "common/format.h"
#include "common/params.h"
#include "io/dp_event.h"
#include "io/json_writer.h"
#include "statement_files.h"
#include "statement_parsing.h"

namespace dpx::cli {

using core::JsonWriter;
using core::Params;
using core::Result;
using core::Status;
using core::audit::ClaimedGuarantee;

namespace {

// The training audit's flags: they describe a model trained here, which a scores audit has not.
constexpr std::array<std::string_view, 15> kTrainingOnlyFlags = {
    "data",     "mechanism", "accountant", "target-epsilon", "seed",   "threads",    "test-fraction", "label-column",
    "features", "scaling",   "momentum",   "model",          "hidden", "activation", "shadow-models"};

// The knob flags: with --statement the configuration is the statement's.
bool anyKnobFlag(const CommandLine& parser, std::string& which) {
  for (const core::KnobInfo& info : core::knobInfos()) {
    if (parser.isSet(info.key)) {
      which = parser.typed(info.key);
      return true;
    }
  }
  for (std::string_view flag : {"epochs", "schedule", "sampling", "neighbouring", "averaged", "optimizer"}) {
    if (parser.isSet(flag)) {
      which = parser.typed(flag);
      return true;
    }
  }
  return false;
}

Status refuseTrainingFlags(const CommandLine& parser) {
  for (std::string_view flag : kTrainingOnlyFlags) {
    if (parser.isSet(flag)) {
      return Status::invalidArgument(parser.typed(flag) +
                                     ": not used with --scores (the scores come from a model trained elsewhere; "
                                     "give the claimed configuration as knob flags or --statement FILE)");
    }
  }
  if (parser.isSet("canaries")) {
    return Status::invalidArgument(parser.typed("canaries") +
                                   ": not used with --scores (mark audited canaries with a 'canary' column in the "
                                   "scores file)");
  }
  return Status::ok();
}

// The claim of a privacy statement: its run and its exact accountant's options.
Result<ClaimedGuarantee> claimOfStatement(const std::string& path) {
  DPX_ASSIGN_OR_RETURN(const core::JsonValue statement, readStatementFile(path));
  const auto located = [&](const Status& s) { return Status(s.code(), path + ": " + s.message()); };
  if (Result<std::string> header = readHeader(statement); !header) return located(header.status());
  Result<Params> params = readRun(statement);
  if (!params) return located(params.status());
  Result<core::accounting::EpsilonOptions> options = readOptions(statement);
  if (!options) return located(options.status());
  return core::audit::claimOfConfiguration(*params, *options, "the statement " + path);
}

// The guarantee the scores are checked against. Every source of a claim ends in a
// ClaimedGuarantee (a curve and an ε at δ): a new source — a dp_accounting event list, say — is
// one more branch here that builds it from its own accountant.
Result<ClaimedGuarantee> claimFromParser(const CommandLine& parser) {
  if (parser.isSet("events")) {
    if (parser.isSet("statement")) return Status::invalidArgument("--events and --statement: give one claim");
    std::string knob;
    // δ is the one knob an events run leaves open: the claim's ε is read at it.
    if (anyKnobFlag(parser, knob) && knob != parser.typed("delta")) {
      return Status::invalidArgument(knob + " and --events: give one (the events file carries the run)");
    }
    const std::string path = parser.value("events");
    if (path.empty()) return Status::invalidArgument("--events needs a file name");
    DPX_ASSIGN_OR_RETURN(const std::vector<core::accounting::Phase> phases, core::readDpEventFile(path));
    double delta = Params{}.delta;
    if (parser.isSet("delta")) {
      DPX_ASSIGN_OR_RETURN(const Params knobs, knobsFromParser(parser));
      delta = knobs.delta;
    }
    return core::audit::claimOfPhases(phases, delta, {}, "events file " + path);
  }
  if (parser.isSet("statement")) {
    std::string knob;
    if (anyKnobFlag(parser, knob)) {
      return Status::invalidArgument(knob + " and --statement: give one (the statement carries the configuration)");
    }
    const std::string path = parser.value("statement");
    if (path.empty()) return Status::invalidArgument("--statement needs a file name");
    return claimOfStatement(path);
  }
  DPX_ASSIGN_OR_RETURN(const Params params, knobsFromParser(parser));
  return core::audit::claimOfConfiguration(params, {}, "the knob flags");
}

Result<double> confidenceOption(const CommandLine& parser) {
  if (!parser.isSet("confidence")) return 0.95;
  DPX_ASSIGN_OR_RETURN(const double c, parseNumber("confidence", parser.value("confidence")));
  if (!(c >= 0.5 && c < 1.0)) {
    return Status::invalidArgument("--confidence " + core::formatNumber(c) + ": must be in [0.5, 1)");
  }
  return c;
}

void writeClaimJson(JsonWriter& json, const ClaimedGuarantee& claim) {
  json.key("claim").beginObject().field("epsilon", claim.epsilon).field("delta", claim.delta);
  json.field("accountant", claim.accountant).field("source", claim.source).endObject();
}

}  // namespace

void addScoreAuditOptions(CommandLine& parser) {
  parser.addOption("scores",
                   "audit membership scores computed elsewhere instead of training: a CSV with columns score and "
                   "member (0/1; optional canary 0/1) or JSON {\"scores\":[{\"score\":…,\"member\":0|1},…]}; the "
                   "claim is the knob flags' DP-SGD run or --statement",
                   "FILE");
  parser.addOption("statement",
                   "with --scores: the claimed configuration from a privacy statement (dpx statement --json)", "FILE");
  parser.addOption(
      "events", "with --scores: the claimed run from a dp_accounting DpEvent's JSON (its ε read at --delta)", "FILE");
}

int runScoreAudit(const CommandLine& parser, Io& io) {
  if (Status s = refuseTrainingFlags(parser); !s.isOk()) return fail(io, s);
  const Result<double> confidence = confidenceOption(parser);
  if (!confidence) return fail(io, confidence.status());
  const std::string path = parser.value("scores");
  if (path.empty()) return fail(io, Status::invalidArgument("--scores needs a file name"));
  // The file first: it is the cheap check, and the claim's exact composition takes a moment.
  const Result<core::audit::ImportedScores> scores = core::audit::readScoresFile(path);
  if (!scores) return fail(io, scores.status());
  const Result<ClaimedGuarantee> claim = claimFromParser(parser);
  if (!claim) return fail(io, claim.status());
  const Result<core::audit::AuditReport> report = core::audit::auditScores(*scores, *claim, *confidence);
  if (!report) return fail(io, report.status());
  if (report->contradiction) io.err << "dpx audit: " << report->message << "\n";
  if (parser.isSet("json")) {
    JsonWriter writer;
    writer.beginObject();
    writer.field("scores_file", path);
    writeClaimJson(writer, *claim);
    core::audit::writeAuditJson(writer, *report);
    writer.endObject();
    io.out << writer.str() << "\n";
  } else {
    io.out << core::audit::describeAudit(*report);
  }
  return kExitOk;
}

}  // namespace dpx::cli
