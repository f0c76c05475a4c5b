// dpx audit: the `train` options plus --shadow-models, --canaries and --confidence (with --scores
// FILE the audit of imported scores instead: audit_scores.h);
// trains the target and reference models, runs the loss-threshold, LiRA and RMIA attacks and
// prints the ROC with its confidence band, the Gaussian-DP fit, the f-DP one-run audit and the
// empirical ε lower bounds (core/audit/membership_inference.h). A lower bound
// above the proven ε is printed on stderr as well, so no script can miss it.
#include <functional>
#include <string>

#include "audit/membership_inference.h"
#include "audit_scores.h"
#include "cli.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"
#include "training_support.h"

namespace dpx::cli {

using core::JsonWriter;
using core::Result;
using core::Status;

namespace {

void addAuditOptions(CommandLine& parser) {
  addTrainingOptions(parser);
  parser.addOption("shadow-models",
                   "reference models trained on random halves for the likelihood-ratio attack, in [1, 1024] "
                   "(default 16)",
                   "N");
  parser.addOption("canaries",
                   "crafted worst-case records (random directions, random labels) audited instead of the "
                   "pool, in [0, n] (default 0)",
                   "k");
  parser.addOption("confidence", "confidence of the ε lower bounds, in [0.5, 1) (default 0.95)", "c");
  addScoreAuditOptions(parser);
}

// The audit's own options: cheap to check and needing no data, so they are checked first.
Result<core::audit::AuditConfig> auditConfigFromParser(const CommandLine& parser) {
  DPX_ASSIGN_OR_RETURN(const std::int64_t shadows,
                       integerOption(parser, "shadow-models", 16, 1, core::audit::kMaxShadowModels));
  DPX_ASSIGN_OR_RETURN(const std::int64_t canaries, integerOption(parser, "canaries", 0, 0, core::audit::kMaxCanaries));
  core::audit::AuditConfig config;
  if (parser.isSet("confidence")) {
    DPX_ASSIGN_OR_RETURN(const double c, parseNumber("confidence", parser.value("confidence")));
    if (!(c >= 0.5 && c < 1.0)) {
      return Status::invalidArgument("--confidence " + core::formatNumber(c) + ": must be in [0.5, 1)");
    }
    config.confidence = c;
  }
  config.shadowModels = static_cast<int>(shadows);
  config.canaries = canaries;
  return config;
}

// Progress on stderr, from the first training step on: every check that can refuse the input has
// passed by then, so an error stays the only line.
std::function<void(double)> auditProgress(Io& io, const TrainingSetup& setup, const core::audit::AuditConfig& config) {
  const std::string header = setup.description + "\nauditing " +
                             std::string(core::training::mechanismName(setup.trainer->resolved().mechanism)) +
                             " with " + std::to_string(config.shadowModels) + " shadow models" +
                             (config.canaries > 0 ? " and " + std::to_string(config.canaries) + " canaries" : "");
  return [&io, header, next = 0.0](double fraction) mutable {
    if (next == 0.0) io.err << header << "\n";
    if (fraction < next) return;
    io.err << "audit " << static_cast<int>(100.0 * fraction) << "%\n";
    io.err.flush();
    while (next <= fraction) next += 0.1;
  };
}

}  // namespace

int commandAudit(const Arguments& args, Io& io) {
  CommandLine parser;
  addAuditOptions(parser);
  if (auto code = parseOrExit(
          parser, args, io,
          "membership-inference audit: empirical ε lower bound of a trained model, or with --scores FILE\n"
          "of membership scores computed elsewhere, against the claim of the knob flags, --statement or --events")) {
    return *code;
  }
  if (parser.isSet("scores")) return runScoreAudit(parser, io);
  for (const char* claim : {"statement", "events"}) {
    if (parser.isSet(claim)) {
      return fail(io, Status::invalidArgument("--" + std::string(claim) +
                                              " is the claim of a scores audit: give --scores FILE with it"));
    }
  }
  Result<core::audit::AuditConfig> config = auditConfigFromParser(parser);
  if (!config) return fail(io, config.status());
  const Result<TrainingSetup> setup = setupTraining(parser);
  if (!setup) return fail(io, setup.status());
  if (!parser.isSet("quiet")) config->progress = auditProgress(io, *setup, *config);
  const Result<core::audit::AuditReport> report = core::audit::runAudit(*setup->trainer, setup->data, *config);
  if (!report) return fail(io, report.status());
  if (report->contradiction) io.err << "dpx audit: " << report->message << "\n";
  if (parser.isSet("json")) {
    JsonWriter writer;
    writer.beginObject();
    writeTrainingJson(writer, *setup, report->training);
    core::audit::writeAuditJson(writer, *report);
    writer.endObject();
    io.out << writer.str() << "\n";
  } else {
    io.out << core::audit::describeAudit(*report);
  }
  return kExitOk;
}

}  // namespace dpx::cli
