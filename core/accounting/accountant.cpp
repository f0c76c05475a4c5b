#include "accounting/accountant.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

#include "common/format.h"

namespace dpx::core::accounting {

std::string_view boundKindName(BoundKind kind) {
  switch (kind) {
    case BoundKind::kUpper:
      return "upper";
    case BoundKind::kEstimate:
      return "estimate";
    case BoundKind::kLower:
      return "lower";
  }
  return "upper";
}

std::string_view conversionName(Conversion conversion) {
  return conversion == Conversion::kImproved ? "improved" : "classic";
}

std::string_view releaseName(Release release) {
  return release == Release::kAllIterates ? "all iterates" : "last iterate";
}

std::optional<Conversion> parseConversion(std::string_view text) {
  if (text == "improved") return Conversion::kImproved;
  if (text == "classic") return Conversion::kClassic;
  return std::nullopt;
}

Result<double> Accountant::rdp(const Params&, double, std::string_view) const {
  return Status::notApplicable(std::string(id()) + " is not an RDP analysis: rdp(α) is not defined");
}

Accountant::Accountant(AccountantInfo info) : m_info(std::move(info)) {
  // Variant 0 is the headline by contract (checkVariant, the CLI and the GUI rely on it).
  if (m_info.variants.empty() || !m_info.variants.front().id.empty()) {
    m_info.variants.insert(m_info.variants.begin(), Variant{"", m_info.name, ""});
  }
  assert(!m_info.id.empty() && !m_info.name.empty() && !m_info.citation.empty());
}

std::vector<Violation> Accountant::check(const Params& params) const {
  std::vector<Violation> out;
  if (Status s = params.validate(); !s.isOk()) {
    out.push_back({"parameters", s.message()});
    return out;
  }
  const Assumptions& a = assumptions();
  if (params.sampling && *params.sampling != a.sampling &&
      std::find(a.alsoValidFor.begin(), a.alsoValidFor.end(), *params.sampling) == a.alsoValidFor.end()) {
    out.push_back({"sampling", "the analysis assumes " + std::string(samplingName(a.sampling)) +
                                   " sampling; the run uses " + std::string(samplingName(*params.sampling))});
  }
  if (params.neighbouring && *params.neighbouring != a.neighbouring) {
    out.push_back({"neighbouring relation", "the analysis is for " + std::string(neighbouringName(a.neighbouring)) +
                                                " neighbours; the run asks for " +
                                                std::string(neighbouringName(*params.neighbouring))});
  }
  if (a.plainGradientSteps && params.optimizer && *params.optimizer != Optimizer::kSgd) {
    out.push_back({"optimizer", "the analysis follows plain gradient steps θ ← θ − η·g; the run uses " +
                                    std::string(optimizerName(*params.optimizer)) +
                                    ", whose iterates it does not bound (composition accountants still apply: "
                                    "an optimiser only post-processes a privatised gradient)"});
  }
  if (!a.convexLossReason.empty() && !params.convexLoss) out.push_back({"non-convex model", a.convexLossReason});
  addViolations(params, out);
  return out;
}

void Accountant::addViolations(const Params&, std::vector<Violation>&) const {}

Status Accountant::checkVariant(std::string_view variant) const {
  if (variant.empty()) return Status::ok();  // the headline always exists
  for (const Variant& v : variants()) {
    if (v.id == variant) return Status::ok();
  }
  std::string known;
  for (const Variant& v : variants()) {
    if (!v.id.empty()) known += (known.empty() ? "" : ", ") + v.id;
  }
  return Status::invalidArgument("accountant " + std::string(id()) + " has no variant '" + std::string(variant) + "'" +
                                 (known.empty() ? "" : " (variants: " + known + ")"));
}

Result<double> finiteOrStatus(double value, std::string_view what) {
  if (std::isnan(value)) return Status::numericalIssue(std::string(what) + " is not a number");
  if (!std::isfinite(value) || std::fabs(value) > 1e300) {
    return Status::numericalIssue(std::string(what) + " exceeds 1e300");
  }
  return value;
}

}  // namespace dpx::core::accounting
