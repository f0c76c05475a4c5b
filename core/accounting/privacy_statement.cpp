#include "accounting/privacy_statement.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "accounting/handoff_snippets.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "io/json_writer.h"

#ifndef DPX_VERSION
#define DPX_VERSION "unknown"
#endif

namespace dpx::core::accounting {
namespace {

// The violation tags Accountant::check() gives its common checks.
constexpr std::string_view kParametersTag = "parameters";
constexpr std::string_view kSamplingTag = "sampling";
constexpr std::string_view kNeighbouringTag = "neighbouring relation";

Status validateOptions(const EpsilonOptions& options) {
  if (!options.variant.empty()) {
    return Status::invalidArgument("variant '" + options.variant +
                                   "': a privacy statement reports each accountant's headline result");
  }
  DPX_RETURN_IF_ERROR(ordersFor(options));
  return validateExactOptions(options.exact);
}

// What the statement records of the options: the choices, not the callbacks.
EpsilonOptions recordedOptions(const EpsilonOptions& options) {
  EpsilonOptions out;
  out.conversion = options.conversion;
  out.orders = options.orders;
  out.fixedAlpha = options.fixedAlpha;
  out.exact.discretisation = options.exact.discretisation;
  out.exact.accuracy = options.exact.accuracy;
  return out;
}

std::vector<NativeValue> mergedNative(std::vector<NativeValue> out, const std::vector<NativeValue>& specific) {
  for (const NativeValue& v : specific) {
    auto it = std::find_if(out.begin(), out.end(), [&](const NativeValue& o) { return o.key == v.key; });
    if (it != out.end()) {
      *it = v;
    } else {
      out.push_back(v);
    }
  }
  return out;
}

Result<AccountantVerdict> verdictOf(const Accountant& a, const Params& params, const EpsilonOptions& options) {
  AccountantVerdict v;
  v.accountant = &a;
  v.violations = a.check(params);
  v.native = a.native(params);
  if (!v.applicable()) return v;
  Result<EpsilonResult> eps = a.epsilon(params, options);
  if (!eps && eps.status().code() == StatusCode::kCancelled) return eps.status();
  if (eps && v.native) v.native = mergedNative(*v.native, eps->native);
  v.epsilon = std::move(eps);
  return v;
}

bool isDpSgdAnalysis(const Accountant& a) {
  const AccountantInfo& info = a.info();
  return info.bound == BoundKind::kUpper && info.noiseSetBySigma && info.assumptions.sampling == Sampling::kPoisson &&
         info.assumptions.release == Release::kAllIterates;
}

std::optional<DpSgdBound> tightestDpSgdBound(const std::vector<AccountantVerdict>& verdicts) {
  std::optional<DpSgdBound> best;
  for (const AccountantVerdict& v : verdicts) {
    if (!v.epsilon || !v.epsilon->isOk() || !isDpSgdAnalysis(*v.accountant)) continue;
    const double eps = v.epsilon->value().epsilon;
    if (!best || eps < best->epsilon) best = DpSgdBound{eps, std::string(v.accountant->id())};
  }
  return best;
}

}  // namespace

std::string_view dpxVersion() { return DPX_VERSION; }

Result<PrivacyStatement> makePrivacyStatement(const Params& params, const EpsilonOptions& options) {
  DPX_RETURN_IF_ERROR(params.validate());
  DPX_RETURN_IF_ERROR(validateOptions(options));
  PrivacyStatement s;
  s.version = std::string(dpxVersion());
  s.params = params;
  s.options = recordedOptions(options);
  EpsilonOptions run = s.options;
  run.exact.progress = options.exact.progress;
  run.exact.cancel = options.exact.cancel;
  for (const Accountant* a : allAccountants()) {
    if (options.exact.cancel && options.exact.cancel->load()) return Status::cancelled();
    DPX_ASSIGN_OR_RETURN(AccountantVerdict verdict, verdictOf(*a, params, run));
    s.verdicts.push_back(std::move(verdict));
  }
  s.dpSgdBound = tightestDpSgdBound(s.verdicts);
  return s;
}

namespace {

std::string schemeText(const std::optional<Sampling>& s) {
  return s ? std::string(samplingName(*s)) : std::string(kEachAccountantsOwn);
}
std::string relationText(const std::optional<Neighbouring>& r) {
  return r ? std::string(neighbouringName(*r)) : std::string(kEachAccountantsOwn);
}

std::vector<const Violation*> violationsTagged(const AccountantVerdict& v, std::string_view tag) {
  std::vector<const Violation*> out;
  for (const Violation& x : v.violations) {
    if (x.assumption == tag) out.push_back(&x);
  }
  return out;
}

std::string reasons(const std::vector<const Violation*>& violations, bool withTag) {
  std::string out;
  for (const Violation* v : violations) {
    if (!out.empty()) out += "; ";
    out += withTag ? v->text() : v->reason;
  }
  return out;
}

CheckOutcome tagOutcome(const AccountantVerdict& v, std::string_view tag, std::string compared) {
  const std::vector<const Violation*> found = violationsTagged(v, tag);
  CheckOutcome c{std::string(tag), found.empty(), std::move(compared)};
  if (!found.empty()) c.detail += ": " + reasons(found, false);
  return c;
}

std::string assumedSampling(const Assumptions& a) {
  std::string text = "assumes " + std::string(samplingName(a.sampling)) + " sampling";
  for (std::size_t i = 0; i < a.alsoValidFor.size(); ++i) {
    text += (i == 0 ? " (also valid for " : ", ") + std::string(samplingName(a.alsoValidFor[i]));
    if (i + 1 == a.alsoValidFor.size()) text += ")";
  }
  return text;
}

}  // namespace

std::vector<CheckOutcome> checkOutcomes(const Params& params, const AccountantVerdict& verdict) {
  const Assumptions& a = verdict.accountant->assumptions();
  std::vector<CheckOutcome> out;
  out.push_back(tagOutcome(verdict, kParametersTag, "every knob within its range and m ≤ n"));
  out.push_back(tagOutcome(verdict, kSamplingTag, assumedSampling(a) + "; the run: " + schemeText(params.sampling)));
  out.push_back(tagOutcome(verdict, kNeighbouringTag,
                           "assumes " + std::string(neighbouringName(a.neighbouring)) +
                               " neighbours; the run: " + relationText(params.neighbouring)));
  std::vector<const Violation*> own;
  for (const Violation& x : verdict.violations) {
    if (x.assumption != kParametersTag && x.assumption != kSamplingTag && x.assumption != kNeighbouringTag) {
      own.push_back(&x);
    }
  }
  out.push_back({"conditions of the analysis", own.empty(),
                 own.empty() ? "none of the conditions the analysis checks is violated" : reasons(own, true)});
  return out;
}

namespace {

void writeRun(JsonWriter& json, const Params& p) {
  json.key("run").beginObject();
  for (const KnobInfo& info : knobInfos()) {
    const double value = knobValue(p, info.knob);
    if (info.integer) {
      json.field(info.key, static_cast<std::int64_t>(value));
    } else {
      json.field(info.key, value);
    }
  }
  json.field("schedule", scheduleName(p.schedule));
  json.field("sampling", schemeText(p.sampling));
  json.field("neighbouring", relationText(p.neighbouring));
  json.field("optimizer", p.optimizer ? std::string(optimizerName(*p.optimizer)) : std::string(kEachAccountantsOwn));
  json.field("averaged", p.averaged);
  // Balls-in-bins k and t, only when set (statements without them read as k = 1, t = ⌈n/m⌉).
  if (p.selections) json.field("selections", *p.selections);
  if (p.stepsPerEpoch) json.field("steps_per_epoch", *p.stepsPerEpoch);
  json.field("epochs", p.epochs());
  json.field("sampling_rate", p.q());
  json.endObject();
}

void writeOptions(JsonWriter& json, const EpsilonOptions& o) {
  json.key("options").beginObject();
  json.field("conversion", conversionName(o.conversion));
  if (o.orders.empty()) {
    json.field("orders", "default");
  } else {
    json.key("orders").numberArray(o.orders);
  }
  if (o.fixedAlpha) {
    json.field("fixed_alpha", *o.fixedAlpha);
  } else {
    json.key("fixed_alpha").null();
  }
  json.key("exact").beginObject();
  json.field("accuracy", o.exact.accuracy);
  if (o.exact.discretisation) {
    json.field("discretisation", *o.exact.discretisation);
  } else {
    json.key("discretisation").null();
  }
  json.endObject();
  json.endObject();
}

void writeEpsilon(JsonWriter& json, const AccountantVerdict& v, const Params& p) {
  const bool computed = v.epsilon && v.epsilon->isOk();
  json.field("status", computed ? "computed" : v.epsilon ? "error" : "not applicable");
  if (!computed) {
    json.key("epsilon").null();
    json.field("delta", p.delta);
    json.key("alpha").null();
    json.key("conversion").null();
    if (v.epsilon) json.field("error", v.epsilon->status().message());
    return;
  }
  const EpsilonResult& e = v.epsilon->value();
  json.field("epsilon", e.epsilon);
  json.field("delta", e.delta);
  if (e.alpha) {
    json.field("alpha", *e.alpha);
  } else {
    json.key("alpha").null();
  }
  if (e.conversion) {
    json.field("conversion", conversionName(*e.conversion));
  } else {
    json.key("conversion").null();
  }
  if (e.epsilonUpper) json.field("epsilon_upper", *e.epsilonUpper);
  if (e.epsilonLower) json.field("epsilon_lower", *e.epsilonLower);
}

void writeNative(JsonWriter& json, const AccountantVerdict& v) {
  const std::vector<NativeValue> none;
  const std::vector<NativeValue>& native = v.native ? *v.native : none;
  json.key("native").beginObject();
  for (const NativeValue& n : native) json.field(n.key, n.value);
  // The keys the accountant promises are always there: null where undefined.
  for (const std::string& key : v.accountant->info().nativeKeys) {
    auto it = std::find_if(native.begin(), native.end(), [&](const NativeValue& n) { return n.key == key; });
    if (it == native.end()) json.key(key).null();
  }
  json.endObject();
  json.key("native_labels").beginObject();
  for (const NativeValue& n : native) json.field(n.key, n.label);
  json.endObject();
  if (!v.native) json.field("native_error", v.native.status().message());
}

void writeVerdict(JsonWriter& json, const AccountantVerdict& v, const Params& p) {
  const Accountant& a = *v.accountant;
  json.beginObject();
  json.field("id", a.id());
  json.field("name", a.name());
  json.field("citation", a.citation());
  json.field("bound", boundKindName(a.boundKind()));
  json.field("applicable", v.applicable());
  // Where another machine's recomputation of the numbers below may differ (accountant.h).
  json.key("tolerance").beginObject().field("relative", a.info().crossMachineTolerance).endObject();
  json.key("violations").beginArray();
  for (const Violation& x : v.violations) {
    json.beginObject().field("assumption", x.assumption).field("reason", x.reason).endObject();
  }
  json.endArray();
  writeEpsilon(json, v, p);
  writeNative(json, v);
  json.endObject();
}

void writeAssumptionsChecked(JsonWriter& json, const PrivacyStatement& s) {
  json.key("assumptions_checked").beginArray();
  for (const AccountantVerdict& v : s.verdicts) {
    const Assumptions& a = v.accountant->assumptions();
    json.beginObject();
    json.field("accountant", v.accountant->id());
    json.field("sampling", samplingName(a.sampling));
    json.field("neighbouring", neighbouringName(a.neighbouring));
    json.field("release", releaseName(a.release));
    json.key("checks").beginArray();
    for (const CheckOutcome& c : checkOutcomes(s.params, v)) {
      json.beginObject().field("check", c.check).field("holds", c.holds).field("detail", c.detail).endObject();
    }
    json.endArray();
    json.key("statements").beginArray();
    for (const std::string& statement : a.statements) json.value(statement);
    json.endArray();
    json.endObject();
  }
  json.endArray();
}

void writeHandoff(JsonWriter& json, const PrivacyStatement& s) {
  json.key("handoff").beginObject();
  if (s.dpSgdBound) {
    json.field("dp_sgd_epsilon", s.dpSgdBound->epsilon);
    json.field("dp_sgd_epsilon_from", s.dpSgdBound->accountant);
  } else {
    json.key("dp_sgd_epsilon").null();
    json.key("dp_sgd_epsilon_from").null();
  }
  json.field("opacus", handoffSnippet(HandoffTarget::kOpacus, s));
  json.field("jax_privacy", handoffSnippet(HandoffTarget::kJaxPrivacy, s));
  json.endObject();
}

}  // namespace

std::string privacyStatementJson(const PrivacyStatement& s) {
  JsonWriter json(JsonNumbers::kRoundTrip);
  json.beginObject();
  json.field("format", kStatementFormat);
  json.field("format_version", kStatementFormatVersion);
  json.field("dpexplorer_version", s.version);
  writeRun(json, s.params);
  writeOptions(json, s.options);
  json.key("accountants").beginArray();
  for (const AccountantVerdict& v : s.verdicts) writeVerdict(json, v, s.params);
  json.endArray();
  writeAssumptionsChecked(json, s);
  writeHandoff(json, s);
  json.endObject();
  return json.str();
}

}  // namespace dpx::core::accounting
