// Reading a privacy statement back: the run and the ε options from its JSON, through the same
// range checks as the knob flags, each refusal naming the field's path. Apart from the commands
// and the comparison: this reader follows the statement format, whoever asks for the run.
#pragma once

#include <string>

#include "accounting/accountant.h"
#include "common/params.h"
#include "common/status.h"
#include "io/json_reader.h"

namespace dpx::cli {

// A number as verify has always read it: -0 is 0, which the messages and difference lines print.
double statementNumber(const core::JsonValue& v);

// format, format_version and the version of DP Explorer that wrote it.
core::Result<std::string> readHeader(const core::JsonValue& statement);

// "run": every knob, the schedule, the sampling, neighbouring and optimizer schemes and the
// averaged release, as the knob flags accept them.
core::Result<core::Params> readRun(const core::JsonValue& statement);

// "options": the RDP conversion, the Rényi orders and the exact accountant's bracket and grid.
core::Result<core::accounting::EpsilonOptions> readOptions(const core::JsonValue& statement);

}  // namespace dpx::cli
