#include "calibrate_risk.h"

#include <string>
#include <string_view>

#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "accounting/risk_calibration.h"
#include "cli.h"
#include "common/format.h"
#include "io/json_writer.h"

namespace dpx::cli {

using core::formatNumber;
using core::Result;
using core::Status;
using core::accounting::RiskCalibration;
using core::accounting::RiskTarget;

namespace {

// Attack risk is read from the exact trade-off curve: the pld accountant's.
const core::accounting::PldAccountant& riskAccountant() {
  return core::accounting::accountantOf<core::accounting::PldAccountant>();
}

constexpr std::string_view kTargetEpsilon = "target-epsilon";
constexpr std::string_view kTargetTpr = "target-tpr";
constexpr std::string_view kAtFpr = "at-fpr";
constexpr std::string_view kTargetAdvantage = "target-advantage";

Result<RiskTarget> riskTargetFromParser(const CommandLine& parser) {
  RiskTarget target;
  if (parser.isSet(kTargetAdvantage)) {
    DPX_ASSIGN_OR_RETURN(const double a, numberOption(parser, kTargetAdvantage));
    target = RiskTarget::maxAdvantage(a);
  } else {
    DPX_ASSIGN_OR_RETURN(const double tpr, numberOption(parser, kTargetTpr));
    DPX_ASSIGN_OR_RETURN(const double fpr, numberOption(parser, kAtFpr));
    target = RiskTarget::tprAt(tpr, fpr);
  }
  // The core's message starts with the parameter's name: make it the flag's.
  if (Status s = target.validate(); !s.isOk()) return Status::invalidArgument("--" + s.message());
  return target;
}

// The PLD curve is that of DP-SGD with Poisson sampling: a run that breaks its assumptions is told so.
std::vector<std::string> violations(const core::Params& params) {
  std::vector<std::string> out;
  for (const core::accounting::Violation& v : riskAccountant().check(params)) {
    out.push_back(v.text());
  }
  return out;
}

void writeRiskJson(std::ostream& out, const RiskTarget& target, const RiskCalibration& c, const core::Params& p) {
  const double delta = p.delta;
  core::JsonWriter json;
  json.beginObject()
      .field("accountant", riskAccountant().id())
      .field("sigma", c.sigma)
      .field("tpr", c.tpr)
      .field("fpr", c.fpr);
  json.field("advantage", c.advantage).field("epsilon", c.epsilon).field("delta", delta);
  if (target.kind == RiskTarget::Kind::kAdvantage) {
    json.field("target_advantage", target.advantage);
  } else {
    json.field("target_tpr", target.tpr).field("at_fpr", target.fpr);
  }
  // tpr and advantage come from the pessimistic curve: upper bounds on every attack's.
  json.field("curve", "pessimistic").field("bound", "upper").field("at_lower_limit", c.atLowerLimit);
  const std::vector<std::string> broken = violations(p);
  json.field("applicable", broken.empty()).key("violations").beginArray();
  for (const std::string& v : broken) json.value(v);
  json.endArray().endObject();
  out << json.str() << "\n";
}

void writeRiskText(std::ostream& out, const RiskTarget& target, const RiskCalibration& c, const core::Params& p) {
  const double delta = p.delta;
  out << riskAccountant().id() << ": σ = " << formatNumber(c.sigma)
      << " keeps every membership-inference attack at TPR ≤ " << formatNumber(c.tpr) << " at FPR "
      << formatNumber(c.fpr);
  if (target.kind == RiskTarget::Kind::kTprAtFpr) out << " (target " << formatNumber(target.tpr) << ")";
  out << "\n  advantage max(TPR − FPR) ≤ " << formatNumber(c.advantage);
  if (target.kind == RiskTarget::Kind::kAdvantage) out << " (target " << formatNumber(target.advantage) << ")";
  out << "; ε = " << formatNumber(c.epsilon) << " at δ = " << formatNumber(delta)
      << "\n  (pessimistic PLD trade-off curve: upper bounds; Kulynych et al. 2024)\n";
  if (c.atLowerLimit) out << "  (the target holds even at the smallest σ allowed: privacy does not limit σ)\n";
  for (const std::string& v : violations(p)) out << "  violated: " << v << "\n";
}

}  // namespace

std::vector<OptionSpec> calibrationTargetOptions(const OptionSpec& targetEpsilon) {
  return {targetEpsilon,
          {std::string(kTargetTpr),
           "pld: the largest TPR in (0, 1] a membership-inference attack may reach at --at-fpr", "T"},
          {std::string(kAtFpr), "pld: the attack's false positive rate in (0, 1), with --target-tpr", "F"},
          {std::string(kTargetAdvantage), "pld: the largest attack advantage max(TPR − FPR), in [0, 1)", "A"}};
}

Result<CalibrationTarget> calibrationTargetFromParser(const AccountingInvocation& inv) {
  const CommandLine& p = inv.parser;
  std::string given;
  for (std::string_view flag : {kTargetEpsilon, kTargetTpr, kTargetAdvantage}) {
    if (p.isSet(flag)) given += (given.empty() ? "--" : ", --") + std::string(flag);
  }
  if (given.empty() || given.find(',') != std::string::npos) {
    return Status::invalidArgument((given.empty() ? std::string("no target given") : "targets " + given + " together") +
                                   ": give exactly one of --target-epsilon E, --target-tpr T --at-fpr F, "
                                   "--target-advantage A");
  }
  if (p.isSet(kTargetTpr) && !p.isSet(kAtFpr)) {
    return Status::invalidArgument(
        "--at-fpr is required with --target-tpr: the false positive rate in (0, 1) "
        "at which the attack's TPR is bounded");
  }
  if (!p.isSet(kTargetTpr) && p.isSet(kAtFpr)) {
    return Status::invalidArgument("--at-fpr goes with --target-tpr only");
  }
  if (p.isSet(kTargetEpsilon)) return CalibrationTarget::kEpsilon;
  if (inv.accountant().id() != riskAccountant().id()) {
    return Status::invalidArgument("--" + std::string(p.isSet(kTargetTpr) ? kTargetTpr : kTargetAdvantage) +
                                   " needs --accountant " + std::string(riskAccountant().id()) + " (got " +
                                   std::string(inv.accountant().id()) +
                                   "): attack risk is read from the exact PLD trade-off curve");
  }
  return CalibrationTarget::kRisk;
}

int calibrateToRisk(const AccountingInvocation& inv, Io& io) {
  const Result<RiskTarget> target = riskTargetFromParser(inv.parser);
  if (!target) return fail(io, target.status());
  const Result<RiskCalibration> c = core::accounting::calibrateSigmaToRisk(inv.params, *target, inv.options.exact);
  if (!c) return fail(io, c.status());  // an unreachable target is a fact about the run: exit 1
  if (inv.json) {
    writeRiskJson(io.out, *target, *c, inv.params);
  } else {
    writeRiskText(io.out, *target, *c, inv.params);
  }
  return kExitOk;
}

}  // namespace dpx::cli
