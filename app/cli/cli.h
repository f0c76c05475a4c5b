// `dpx`, the headless face of DP Explorer: every accountant, the step-size analysis,
// the trainer and the audit, for scripts, tests and audits. JSON is the machine interface.
// Exit status: 0 success, 1 a computation that could not be done (the message says why),
// 2 invalid input — one line on stderr naming the flag and the accepted range.
#pragma once

#include <ostream>

#include "command_line.h"

namespace dpx::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// arguments[0] is the program name (argv[0]).
int run(const Arguments& arguments, std::ostream& out, std::ostream& err);

}  // namespace dpx::cli
