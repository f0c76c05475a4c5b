#include "accounting_invocation.h"

#include <algorithm>
#include <string>

#include "accounting/registry.h"

namespace dpx::cli {

using core::Status;
using namespace core::accounting;

namespace {

void addOptions(CommandLine& parser, const std::vector<OptionSpec>& options) {
  for (const OptionSpec& o : options) parser.addOption(o.name, o.description, o.valueName);
}

// The shared flags of the commands that take an accountant, in their --help order.
void addAccountantOptions(CommandLine& parser, AccountantChoice choice) {
  parser.addOption("accountant",
                   ("accountant id: " + accountantIdList() +
                    (choice == AccountantChoice::kOneOrAll ? " | a comma-separated list of them | all" : "")),
                   "id");
  parser.addOption("conversion",
                   "RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic (Mironov 2017)", "name");
  parser.addOption("alphas", "comma-separated Rényi orders in [1.01, 1024]", "list");
  parser.addOption("variant", "a named variant of the analysis, e.g. sgld baseline, cyclic first-batch", "id");
  parser.addOption("discretisation", "pld: loss grid Δ in (0, 1] (default: chosen to meet --accuracy)", "D");
  parser.addOption("accuracy", "pld: relative width of the ε bracket to reach, in (0, 0.5] (default 0.01)", "A");
  parser.addOption("json", "machine-readable JSON output");
}

// stepsize's shared flags: no accountant, so neither variants nor pld's controls. Its own
// flags come first and these are described briefly, as its --help has always listed them.
void addStepsizeOptions(CommandLine& parser) {
  parser.addOption("conversion", "improved (default) | classic", "name");
  parser.addOption("alphas", "comma-separated Rényi orders", "list");
  parser.addOption("json", "machine-readable JSON output");
}

core::Result<std::vector<const Accountant*>> accountantsFromParser(const CommandLine& parser, AccountantChoice choice) {
  const std::string orAll = choice == AccountantChoice::kOneOrAll ? " or all" : "";
  if (!parser.isSet("accountant")) {
    return Status::invalidArgument("--accountant is required: one of " + accountantIdList() + orAll);
  }
  const std::string id = (parser.value("accountant"));
  if (choice == AccountantChoice::kOneOrAll && id == "all") {
    return std::vector<const Accountant*>(allAccountants().begin(), allAccountants().end());
  }
  // A comma-separated list where all are allowed: the ε chart's groups of curves, each at its
  // own density, are one command each.
  std::vector<const Accountant*> chosen;
  for (std::size_t start = 0; start <= id.size();) {
    const std::size_t comma =
        choice == AccountantChoice::kOneOrAll ? std::min(id.find(',', start), id.size()) : id.size();
    const std::string one = id.substr(start, comma - start);
    start = comma + 1;
    const Accountant* a = findAccountant(one);
    if (!a) {
      return Status::invalidArgument(
          "--accountant '" + one + "' is unknown: must be one of " + accountantIdList() +
          (choice == AccountantChoice::kOneOrAll ? ", a comma-separated list of them, or all" : ""));
    }
    if (std::find(chosen.begin(), chosen.end(), a) == chosen.end()) chosen.push_back(a);
  }
  return chosen;
}

// An unknown --variant is invalid input: the message names the flag and the variants there are.
Status variantStatus(const std::vector<const Accountant*>& accountants, const EpsilonOptions& options) {
  if (options.variant.empty() || accountants.size() != 1) return Status::ok();  // `all` drops variants
  const Accountant& a = *accountants.front();
  std::string known;
  for (const Variant& v : a.variants()) {
    if (v.id == options.variant) return Status::ok();
    if (!v.id.empty()) known += (known.empty() ? "" : ", ") + v.id;
  }
  return Status::invalidArgument("--variant '" + options.variant + "': accountant " + std::string(a.id()) +
                                 (known.empty() ? " has no variants" : " has the variants " + known));
}

}  // namespace

std::optional<int> parseAccountingFlags(const Arguments& args, Io& io, const AccountingCommand& command,
                                        AccountingInvocation& inv) {
  inv.choice = command.accountants;
  addKnobOptions(inv.parser);
  if (command.accountants == AccountantChoice::kNone) {
    addOptions(inv.parser, command.options);
    addStepsizeOptions(inv.parser);
  } else {
    addAccountantOptions(inv.parser, command.accountants);
    addOptions(inv.parser, command.options);
  }
  if (auto code = parseOrExit(inv.parser, args, io, command.summary)) return code;
  inv.json = inv.parser.isSet("json");
  return std::nullopt;
}

Status resolveAccountingFlags(AccountingInvocation& inv) {
  const bool withAccountant = inv.choice != AccountantChoice::kNone;
  DPX_ASSIGN_OR_RETURN(inv.params, knobsFromParser(inv.parser));
  DPX_ASSIGN_OR_RETURN(inv.options, epsilonOptionsFromParser(inv.parser, withAccountant));
  if (!withAccountant) return Status::ok();
  DPX_ASSIGN_OR_RETURN(inv.accountants, accountantsFromParser(inv.parser, inv.choice));
  DPX_RETURN_IF_ERROR(variantStatus(inv.accountants, inv.options));
  if (inv.all()) inv.options.variant.clear();
  return Status::ok();
}

std::optional<int> parseAccountingInvocation(const Arguments& args, Io& io, const AccountingCommand& command,
                                             AccountingInvocation& inv) {
  if (auto code = parseAccountingFlags(args, io, command, inv)) return code;
  if (Status s = resolveAccountingFlags(inv); !s.isOk()) return fail(io, s);
  return std::nullopt;
}

}  // namespace dpx::cli
