// dpx train | audit (SPEC §5).
#include "cli.h"
#include "commands.h"

namespace dpx::cli {

int commandTrain(const QStringList&, Io& io) {
  io.err << "dpx train: not available in this build yet (the trainer lands with the trainer issue)\n";
  return kExitUsage;
}

int commandAudit(const QStringList&, Io& io) {
  io.err << "dpx audit: not available in this build yet (the audit lands with the audit issue)\n";
  return kExitUsage;
}

}  // namespace dpx::cli
