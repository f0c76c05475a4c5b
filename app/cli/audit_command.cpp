// dpx audit (SPEC §5).
#include "cli.h"
#include "commands.h"

namespace dpx::cli {

int commandAudit(const QStringList&, Io& io) {
  io.err << "dpx audit: not available in this build yet (the audit lands with the audit issue)\n";
  return kExitUsage;
}

}  // namespace dpx::cli
