// The dpx subcommands; each parses its own arguments (args[0] is "dpx <command>").
#pragma once

#include <QStringList>

#include "cli_support.h"

namespace dpx::cli {

int commandEpsilon(const QStringList& args, Io& io);
int commandRdp(const QStringList& args, Io& io);
int commandDelta(const QStringList& args, Io& io);
int commandCurve(const QStringList& args, Io& io);
int commandTradeoff(const QStringList& args, Io& io);
int commandCalibrate(const QStringList& args, Io& io);
int commandStepsize(const QStringList& args, Io& io);
int commandTrain(const QStringList& args, Io& io);
int commandAudit(const QStringList& args, Io& io);
int commandUtility(const QStringList& args, Io& io);
int commandFrontier(const QStringList& args, Io& io);
int commandCheck(const QStringList& args, Io& io);
int commandStatement(const QStringList& args, Io& io);
int commandVerify(const QStringList& args, Io& io);

}  // namespace dpx::cli
