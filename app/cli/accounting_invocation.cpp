#include "accounting_invocation.h"

#include <string>

#include "accounting/registry.h"

namespace dpx::cli {

using core::Status;
using namespace core::accounting;

namespace {

void addOptions(QCommandLineParser& parser, const std::vector<OptionSpec>& options) {
  for (const OptionSpec& o : options) addOption(parser, o.name, o.description, o.valueName);
}

// The shared flags of the commands that take an accountant, in their --help order.
void addAccountantOptions(QCommandLineParser& parser, AccountantChoice choice) {
  addOption(parser, QStringLiteral("accountant"),
            QString::fromStdString("accountant id: " + accountantIdList() +
                                   (choice == AccountantChoice::kOneOrAll ? " | all" : "")),
            QStringLiteral("id"));
  addOption(parser, QStringLiteral("conversion"),
            QStringLiteral("RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic (Mironov 2017)"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("alphas"), QStringLiteral("comma-separated Rényi orders in [1.01, 1024]"),
            QStringLiteral("list"));
  addOption(parser, QStringLiteral("variant"),
            QStringLiteral("a named variant of the analysis, e.g. sgld baseline, cyclic first-batch"),
            QStringLiteral("id"));
  addOption(parser, QStringLiteral("discretisation"),
            QStringLiteral("pld: loss grid Δ in (0, 1] (default: chosen to meet --accuracy)"), QStringLiteral("D"));
  addOption(parser, QStringLiteral("accuracy"),
            QStringLiteral("pld: relative width of the ε bracket to reach, in (0, 0.5] (default 0.01)"),
            QStringLiteral("A"));
  addOption(parser, QStringLiteral("json"), QStringLiteral("machine-readable JSON output"));
}

// stepsize's shared flags: no accountant, so neither variants nor pld's controls. Its own
// flags come first and these are described briefly, as its --help has always listed them.
void addStepsizeOptions(QCommandLineParser& parser) {
  addOption(parser, QStringLiteral("conversion"), QStringLiteral("improved (default) | classic"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("alphas"), QStringLiteral("comma-separated Rényi orders"), QStringLiteral("list"));
  addOption(parser, QStringLiteral("json"), QStringLiteral("machine-readable JSON output"));
}

core::Result<std::vector<const Accountant*>> accountantsFromParser(const QCommandLineParser& parser,
                                                                   AccountantChoice choice) {
  const std::string orAll = choice == AccountantChoice::kOneOrAll ? " or all" : "";
  if (!parser.isSet(QStringLiteral("accountant"))) {
    return Status::invalidArgument("--accountant is required: one of " + accountantIdList() + orAll);
  }
  const std::string id = toStd(parser.value(QStringLiteral("accountant")));
  if (choice == AccountantChoice::kOneOrAll && id == "all") {
    return std::vector<const Accountant*>(allAccountants().begin(), allAccountants().end());
  }
  const Accountant* a = findAccountant(id);
  if (!a) {
    return Status::invalidArgument("--accountant '" + id + "' is unknown: must be one of " + accountantIdList() +
                                   orAll);
  }
  return std::vector<const Accountant*>{a};
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

std::optional<int> parseAccountingFlags(const QStringList& args, Io& io, const AccountingCommand& command,
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
  inv.json = inv.parser.isSet(QStringLiteral("json"));
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

std::optional<int> parseAccountingInvocation(const QStringList& args, Io& io, const AccountingCommand& command,
                                             AccountingInvocation& inv) {
  if (auto code = parseAccountingFlags(args, io, command, inv)) return code;
  if (Status s = resolveAccountingFlags(inv); !s.isOk()) return fail(io, s);
  return std::nullopt;
}

}  // namespace dpx::cli
