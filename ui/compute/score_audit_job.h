// The audit of imported membership scores (File → Import audit scores…), computed off the GUI
// thread: read the file, build the claim of the knobs (the exact composition's curve and ε, which
// takes from milliseconds to seconds) and audit the scores against it (core/audit/score_audit.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "audit/membership_inference.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::ui {

// The report, or why there is none: the file's line and field, a claim outside the exact
// accountant's assumptions, or kCancelled when `cancel` fired during the claim's composition.
core::Result<std::shared_ptr<const core::audit::AuditReport>> computeScoreAudit(const std::string& path,
                                                                                const core::Params& params,
                                                                                double confidence,
                                                                                const std::atomic<bool>& cancel);

}  // namespace dpx::ui
