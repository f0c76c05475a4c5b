// The dpx subcommands; each parses its own arguments (args[0] is "dpx <command>").
#pragma once

#include "cli_support.h"

namespace dpx::cli {

int commandEpsilon(const Arguments& args, Io& io);
int commandRdp(const Arguments& args, Io& io);
int commandDelta(const Arguments& args, Io& io);
int commandCurve(const Arguments& args, Io& io);
int commandTradeoff(const Arguments& args, Io& io);
int commandCalibrate(const Arguments& args, Io& io);
int commandStepsize(const Arguments& args, Io& io);
int commandTrain(const Arguments& args, Io& io);
int commandAudit(const Arguments& args, Io& io);
int commandUtility(const Arguments& args, Io& io);
int commandFrontier(const Arguments& args, Io& io);
int commandCheck(const Arguments& args, Io& io);
int commandStatement(const Arguments& args, Io& io);
int commandVerify(const Arguments& args, Io& io);
int commandReproduce(const Arguments& args, Io& io);

}  // namespace dpx::cli
