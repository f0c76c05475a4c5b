// The command line shared by dpx epsilon | rdp | delta | curve | tradeoff | calibrate | stepsize,
// parsed in one place: the knob flags, --accountant, --conversion, --alphas, --variant, pld's
// --discretisation and --accuracy, and --json, then each command's own flags. A command reads
// its own flags from the invocation's parser after the shared ones have been checked, so every
// command reports the same mistake with the same line and exit status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.h"
#include "cli_support.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::cli {

// The accountants a command works with: exactly one (--accountant ID), one or every one
// (--accountant ID|all), or none (stepsize, which runs its own analysis of DP-SGLD).
enum class AccountantChoice { kNone, kOne, kOneOrAll };

// What an accounting command adds to the shared flags.
struct AccountingCommand {
  std::string summary;  // the description line of --help
  AccountantChoice accountants = AccountantChoice::kOne;
  std::vector<OptionSpec> options;  // the command's own flags, in --help order
};

// One accounting command line: the parser (which also holds the command's own flags) and the
// shared flags' values. CommandLine cannot be moved, so the caller owns the invocation
// and the functions below fill it in.
struct AccountingInvocation {
  CommandLine parser;
  AccountantChoice choice = AccountantChoice::kOne;
  bool json = false;
  core::Params params;
  // With --accountant all the variant is cleared: variants are per accountant.
  core::accounting::EpsilonOptions options;
  std::vector<const core::accounting::Accountant*> accountants;  // empty for AccountantChoice::kNone

  const core::accounting::Accountant& accountant() const { return *accountants.front(); }
  bool all() const { return accountants.size() > 1; }
};

// Sets up inv.parser with the knobs, the shared flags and command.options and parses args.
// Returns the exit status when the command is already done — 0 after --help, 2 after one line on
// stderr for an unknown flag, a missing value or a stray argument — and std::nullopt to go on.
// Sets inv.choice and inv.json only: no value is read yet.
std::optional<int> parseAccountingFlags(const Arguments& args, Io& io, const AccountingCommand& command,
                                        AccountingInvocation& inv);

// Reads the shared flags into inv, in the order their errors are reported: the knobs, then
// --conversion/--alphas/--alpha/--variant/--discretisation/--accuracy, then --accountant, then
// whether the accountant has the --variant asked for.
core::Status resolveAccountingFlags(AccountingInvocation& inv);

// parseAccountingFlags then resolveAccountingFlags, a refusal printed as one line (fail()): how
// every accounting command starts but tradeoff, which checks --points and --mu first and reads
// the shared flags only without --mu.
std::optional<int> parseAccountingInvocation(const Arguments& args, Io& io, const AccountingCommand& command,
                                             AccountingInvocation& inv);

}  // namespace dpx::cli
