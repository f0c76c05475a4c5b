// dpx calibrate with an attack-risk target (Kulynych et al. 2024): --target-tpr T --at-fpr F or
// --target-advantage A, read from the pessimistic PLD trade-off curve, so only with --accountant
// pld. The ε target stays in accounting_commands.cpp; this file decides which target was asked for
// and runs the risk one.
#pragma once

#include <vector>

#include "accounting_invocation.h"
#include "cli_support.h"
#include "common/status.h"

namespace dpx::cli {

enum class CalibrationTarget { kEpsilon, kRisk };

// The ε target's flag followed by the risk targets' flags, for dpx calibrate's --help.
std::vector<OptionSpec> calibrationTargetOptions(const OptionSpec& targetEpsilon);

// Which target the command line gives: exactly one of --target-epsilon, --target-tpr (with
// --at-fpr) and --target-advantage; --at-fpr only with --target-tpr; a risk target only with
// --accountant pld. Otherwise an InvalidArgument naming the flags.
core::Result<CalibrationTarget> calibrationTargetFromParser(const AccountingInvocation& inv);

// Calibrates σ to the risk target and prints text or JSON; returns the exit status (2 for a target
// no trade-off curve can meet, 1 for one this run cannot reach).
int calibrateToRisk(const AccountingInvocation& inv, Io& io);

}  // namespace dpx::cli
