// dpx audit --scores FILE: the audit of membership scores computed elsewhere against the guarantee
// claimed for their run (core/audit/score_audit.h). Apart from the training audit: no data, no
// trainer; the claim comes from the knob flags or a privacy statement.
#pragma once

#include "cli_support.h"
#include "command_line.h"

namespace dpx::cli {

// The options only the scores audit reads (--scores, --statement); the rest are the training audit's.
void addScoreAuditOptions(CommandLine& parser);

// Runs the audit of --scores (set) with the claim of the knob flags or --statement.
int runScoreAudit(const CommandLine& parser, Io& io);

}  // namespace dpx::cli
