#include "compute/score_audit_job.h"

#include "accounting/accountant.h"
#include "audit/score_audit.h"
#include "audit/score_import.h"

namespace dpx::ui {

core::Result<std::shared_ptr<const core::audit::AuditReport>> computeScoreAudit(const std::string& path,
                                                                                const core::Params& params,
                                                                                double confidence,
                                                                                const std::atomic<bool>& cancel) {
  DPX_ASSIGN_OR_RETURN(const core::audit::ImportedScores scores, core::audit::readScoresFile(path));
  if (cancel.load()) return core::Status::cancelled("import cancelled");
  core::accounting::EpsilonOptions options;
  options.exact.cancel = &cancel;
  DPX_ASSIGN_OR_RETURN(const core::audit::ClaimedGuarantee claim,
                       core::audit::claimOfConfiguration(params, options, "the knobs at import"));
  if (cancel.load()) return core::Status::cancelled("import cancelled");
  DPX_ASSIGN_OR_RETURN(core::audit::AuditReport report, core::audit::auditScores(scores, claim, confidence));
  return std::make_shared<const core::audit::AuditReport>(std::move(report));
}

}  // namespace dpx::ui
