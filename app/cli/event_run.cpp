#include "event_run.h"

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "accounting/phased_run.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "cli.h"
#include "common/format.h"
#include "io/dp_event.h"
#include "io/json_writer.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using core::Result;
using core::Status;
using namespace core::accounting;

namespace {

// The flags that describe the run: the file does, so they conflict with it.
std::vector<std::string> conflictingFlags(const CommandLine& parser) {
  std::vector<std::string> flags;
  for (const core::KnobInfo& info : core::knobInfos()) {
    // δ is the target of the question and α an order of the RDP conversion, not the run's.
    if (info.knob == core::Knob::kDelta || info.knob == core::Knob::kAlpha) continue;
    if (parser.isSet(info.key)) flags.push_back("--" + std::string(info.key));
  }
  for (const char* flag : {"epochs", "schedule", "sampling", "neighbouring", "averaged", "optimizer", "variant"}) {
    if (parser.isSet(flag)) flags.push_back("--" + std::string(flag));
  }
  return flags;
}

// "pld and rdp", from the registry.
std::string eventAccountants() {
  return std::string(accountantOf<PldAccountant>().id()) + " and " + std::string(accountantOf<RdpAccountant>().id());
}

struct EventRun {
  const Accountant* accountant = nullptr;
  bool exact = false;  // the PLD accountant; else the RDP one
  std::vector<Phase> phases;
};

// The shared flags with --events, the accountant, and the file's phases.
Result<EventRun> resolveEventRun(AccountingInvocation& inv) {
  if (const std::vector<std::string> flags = conflictingFlags(inv.parser); !flags.empty()) {
    std::string list;
    for (std::size_t i = 0; i < flags.size(); ++i) list += (i == 0 ? "" : ", ") + flags[i];
    return Status::invalidArgument(list + (flags.size() == 1 ? " conflicts" : " conflict") +
                                   " with --events: the events file describes the run (every phase's sampling "
                                   "probability, noise multiplier and steps); give --delta only");
  }
  DPX_RETURN_IF_ERROR(resolveAccountingFlags(inv));
  EventRun run;
  if (inv.all()) {
    return Status::invalidArgument("--accountant all with --events: an events run is accounted by " +
                                   eventAccountants() + " only; give one of them");
  }
  run.accountant = &inv.accountant();
  run.exact = run.accountant == &accountantOf<PldAccountant>();
  if (!run.exact && run.accountant != &accountantOf<RdpAccountant>()) {
    return Status::invalidArgument("--accountant " + std::string(run.accountant->id()) +
                                   " does not read --events: an events run is accounted by " + eventAccountants());
  }
  DPX_ASSIGN_OR_RETURN(run.phases, core::readDpEventFile(inv.parser.value("events")));
  return run;
}

void writePhasesJson(JsonWriter& json, const std::vector<Phase>& phases) {
  json.key("phases").beginArray();
  for (const Phase& phase : phases) {
    json.beginObject();
    if (const auto* g = std::get_if<GaussianPhase>(&phase)) {
      json.field("sampling_probability", g->samplingProbability)
          .field("noise_multiplier", g->noiseMultiplier)
          .field("steps", g->steps);
    } else {
      const auto& r = std::get<RandomAllocationPhase>(phase);
      json.field("kind", "random_allocation")
          .field("noise_multiplier", r.noiseMultiplier)
          .field("steps_per_epoch", r.stepsPerEpoch)
          .field("selections", r.selections)
          .field("epochs", r.epochs)
          .field("steps", phaseSteps(phase));
    }
    json.endObject();
  }
  json.endArray();
}

void writePhasesText(std::ostream& out, const std::vector<Phase>& phases) {
  for (std::size_t i = 0; i < phases.size(); ++i) {
    out << "  phase " << (i + 1) << ": " << phaseKindName(phases[i]) << ", " << phaseDescription(phases[i]) << "\n";
  }
}

std::int64_t totalSteps(const std::vector<Phase>& phases) {
  std::int64_t steps = 0;
  for (const Phase& p : phases) steps += phaseSteps(p);
  return steps;
}

// The native values of an events run: the computation's own (pld's Δ and bracket), then q and σ
// when the run has one phase, and the steps in all.
std::vector<NativeValue> eventNative(const EventRun& run, const EpsilonResult& eps) {
  std::vector<NativeValue> native = eps.native;
  if (run.phases.size() == 1) {
    if (const auto* g = std::get_if<GaussianPhase>(&run.phases.front())) {
      native.push_back({"q", "sampling rate q", g->samplingProbability});
      native.push_back({"sigma", "noise multiplier σ", g->noiseMultiplier});
    }
  }
  native.push_back({"steps", "steps K (all phases)", static_cast<double>(totalSteps(run.phases))});
  native.push_back({"phases", "phases", static_cast<double>(run.phases.size())});
  return native;
}

void writeEpsilonJson(std::ostream& out, const EventRun& run, const EpsilonResult& eps) {
  const Accountant& a = *run.accountant;
  JsonWriter json;
  json.beginObject();
  json.field("accountant", a.id());
  json.field("epsilon", eps.epsilon);
  json.field("delta", eps.delta);
  if (eps.alpha) {
    json.field("alpha", *eps.alpha);
  } else {
    json.key("alpha").null();
  }
  if (eps.conversion) {
    json.field("conversion", conversionName(*eps.conversion));
  } else {
    json.key("conversion").null();
  }
  if (eps.epsilonUpper) json.field("epsilon_upper", *eps.epsilonUpper);
  if (eps.epsilonLower) json.field("epsilon_lower", *eps.epsilonLower);
  json.field("bound", boundKindName(eps.bound));
  if (!eps.caveats.empty()) {
    json.key("caveats").beginArray();
    for (const std::string& c : eps.caveats) json.value(c);
    json.endArray();
  }
  // The events state Poisson sampling and the Gaussian noise the accountant assumes.
  json.field("applicable", true);
  json.key("violations").beginArray().endArray();
  json.key("native").beginObject();
  std::vector<std::string> written;
  for (const NativeValue& v : eventNative(run, eps)) {
    json.field(v.key, v.value);
    written.push_back(v.key);
  }
  for (const std::string& key : a.info().nativeKeys) {
    if (std::find(written.begin(), written.end(), key) == written.end()) json.key(key).null();
  }
  json.endObject();
  json.field("name", a.name());
  json.field("citation", a.citation());
  writePhasesJson(json, run.phases);
  json.endObject();
  out << json.str() << "\n";
}

void writeEpsilonText(std::ostream& out, const EventRun& run, const EpsilonResult& eps) {
  const Accountant& a = *run.accountant;
  out << a.id() << " — " << a.name() << " (dp_accounting events, " << run.phases.size()
      << (run.phases.size() == 1 ? " phase" : " phases") << ")\n";
  out << "  ε = " << formatNumber(eps.epsilon) << " at δ = " << formatNumber(eps.delta) << " ("
      << boundKindName(eps.bound);
  if (eps.alpha) out << "; α = " << formatNumber(*eps.alpha);
  if (eps.conversion) out << ", " << conversionName(*eps.conversion) << " conversion";
  if (eps.epsilonLower && eps.epsilonUpper) {
    out << "; bracket [" << formatNumber(*eps.epsilonLower) << ", " << formatNumber(*eps.epsilonUpper) << "]";
  }
  out << ")\n";
  for (const std::string& c : eps.caveats) out << "  caveat: " << c << "\n";
  writePhasesText(out, run.phases);
  for (const NativeValue& v : eventNative(run, eps)) out << "  " << v.label << " = " << formatNumber(v.value) << "\n";
  out << "  source: " << a.citation() << "\n";
}

}  // namespace

OptionSpec eventsOption() {
  return {"events",
          "a run as Google dp_accounting DpEvents: the JSON of event.to_named_tuple()._asdict() (pld and rdp; "
          "replaces the knobs that describe the run)",
          "FILE"};
}

bool hasEvents(const AccountingInvocation& inv) { return inv.parser.isSet("events"); }

int epsilonOfEvents(AccountingInvocation& inv, Io& io) {
  Result<EventRun> run = resolveEventRun(inv);
  if (!run) return fail(io, run.status());
  const Result<EpsilonResult> eps = run->exact ? phasedPldEpsilon(run->phases, inv.params.delta, inv.options.exact)
                                               : phasedRdpEpsilon(run->phases, inv.params.delta, inv.options);
  if (!eps) return fail(io, eps.status());
  if (inv.json) {
    writeEpsilonJson(io.out, *run, *eps);
  } else {
    writeEpsilonText(io.out, *run, *eps);
  }
  return kExitOk;
}

int deltaOfEvents(AccountingInvocation& inv, Io& io) {
  Result<EventRun> run = resolveEventRun(inv);
  if (!run) return fail(io, run.status());
  const Result<double> epsilon = numberOption(inv.parser, "epsilon");
  if (!epsilon) return fail(io, epsilon.status());
  if (*epsilon < 0.0) {
    return fail(io, Status::invalidArgument("--epsilon " + formatNumber(*epsilon) + ": ε must be ≥ 0"));
  }
  double delta = 0.0;
  std::optional<double> deltaLower;
  if (run->exact) {
    const Result<std::pair<double, double>> bracket =
        phasedPldDelta(run->phases, *epsilon, inv.params.delta, inv.options.exact);
    if (!bracket) return fail(io, bracket.status());
    delta = bracket->first;
    deltaLower = bracket->second;
  } else {
    const Result<double> d = phasedRdpDelta(run->phases, *epsilon, inv.options);
    if (!d) return fail(io, d.status());
    delta = *d;
  }
  const Accountant& a = *run->accountant;
  if (inv.json) {
    JsonWriter json;
    json.beginObject().field("accountant", a.id()).field("epsilon", *epsilon).field("delta", delta);
    if (deltaLower) json.field("delta_upper", delta).field("delta_lower", *deltaLower);
    json.field("bound", boundKindName(a.boundKind()));
    // As the ε answer: the events state their own sampling and noise, which the analyses assume.
    json.field("applicable", true);
    json.key("violations").beginArray().endArray();
    writePhasesJson(json, run->phases);
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << a.id() << ": δ = " << formatNumber(delta) << " at ε = " << formatNumber(*epsilon) << " ("
           << boundKindName(a.boundKind());
    if (deltaLower) io.out << "; optimistic δ = " << formatNumber(*deltaLower);
    io.out << ")\n";
    writePhasesText(io.out, run->phases);
  }
  return kExitOk;
}

}  // namespace dpx::cli
