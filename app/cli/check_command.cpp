// dpx check: the mismatches between how a run is done and what its reported ε assumes
// (core/accounting/configuration_check.h). Exit 0 when no finding is an error (warnings allowed),
// 1 when one is, 2 for invalid input — so a script can gate a release on it.
#include <string>

#include "accounting/configuration_check.h"
#include "accounting/registry.h"
#include "accounting_invocation.h"
#include "cli.h"
#include "commands.h"
#include "io/json_writer.h"
#include "training/mechanism.h"

namespace dpx::cli {

using core::Result;
using core::Status;
using namespace core::accounting;

namespace {

AccountingCommand checkCommand() {
  return {
      "Checks a run's configuration against the ε it reports: the sampler against the reported "
      "accountant's, replace-one neighbours analysed as add/remove, averaging by the realised "
      "batch size under Poisson sampling, δ ≥ 1/n, and an ε outside [0.01, 50].\n"
      "Exit status: 0 no error (warnings allowed), 1 at least one error-severity finding, "
      "2 invalid input.",
      AccountantChoice::kNone,
      {{"accountant",
        "the accountant whose ε the run reports: " + accountantIdList() +
            " (default: rdp and pld, what DP-SGD libraries report)",
        "id"},
       {"mechanism",
        "or the training mechanism, reported by its accountants and (without "
        "--sampling) run on its own sampler: " +
            core::training::mechanismIdList(/*privateOnly=*/true),
        "id"},
       {"batch-average",
        "how the noisy gradient sum is averaged: expected (divided by m, default) | realised "
        "(divided by each step's |B|)",
        "name"},
       {"target-epsilon", "the ε the run is calibrated to, > 0", "E"}}};
}

// --accountant / --mechanism, --batch-average and --target-epsilon, after the shared flags.
Result<CheckOptions> checkOptionsFromParser(const AccountingInvocation& inv) {
  const CommandLine& parser = inv.parser;
  CheckOptions options;
  options.epsilon = inv.options;
  const bool accountant = parser.isSet("accountant");
  if (accountant && parser.isSet("mechanism")) {
    return Status::invalidArgument("--accountant and --mechanism both name what the run reports: give one");
  }
  if (accountant) {
    options.reported = parser.value("accountant");
    if (!findAccountant(options.reported)) {
      return Status::invalidArgument("--accountant '" + options.reported + "' is unknown: must be one of " +
                                     accountantIdList());
    }
  }
  if (parser.isSet("mechanism")) {
    options.reported = parser.value("mechanism");
    const auto mechanism = core::training::parseMechanism(options.reported);
    if (!mechanism || !core::training::isPrivate(*mechanism)) {
      return Status::invalidArgument("--mechanism '" + options.reported + "': must be one of " +
                                     core::training::mechanismIdList(/*privateOnly=*/true));
    }
  }
  if (parser.isSet("batch-average")) {
    DPX_ASSIGN_OR_RETURN(options.batchAverage, parseNamed("batch-average", parser.value("batch-average"),
                                                          parseBatchAverage, "expected or realised"));
  }
  if (parser.isSet("target-epsilon")) {
    DPX_ASSIGN_OR_RETURN(options.targetEpsilon, targetEpsilonOption(parser));
  }
  return options;
}

void writeCheckJson(std::ostream& out, const ConfigurationCheck& check) {
  core::JsonWriter w;
  w.beginObject().key("findings").beginArray();
  for (const Finding& f : check.findings) {
    w.beginObject().field("severity", severityName(f.severity)).field("knob", f.knob).field("message", f.message);
    w.endObject();
  }
  w.endArray().key("accountants").beginArray();
  for (const std::string& id : check.accountants) w.value(id);
  w.endArray().endObject();
  out << w.str() << "\n";
}

void writeCheckText(std::ostream& out, const ConfigurationCheck& check) {
  if (check.findings.empty()) out << "no findings\n";
  for (const Finding& f : check.findings)
    out << severityName(f.severity) << ": " << f.knob << ": " << f.message << "\n";
}

}  // namespace

int commandCheck(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  if (auto code = parseAccountingInvocation(args, io, checkCommand(), inv)) return *code;
  const Result<CheckOptions> options = checkOptionsFromParser(inv);
  if (!options) return fail(io, options.status());
  const Result<ConfigurationCheck> check = checkConfiguration(inv.params, *options);
  if (!check) return fail(io, check.status());
  if (inv.json) {
    writeCheckJson(io.out, *check);
  } else {
    writeCheckText(io.out, *check);
  }
  return check->hasError() ? kExitFailure : kExitOk;
}

}  // namespace dpx::cli
