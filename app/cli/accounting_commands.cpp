// dpx epsilon | rdp | delta | curve | tradeoff | calibrate | stepsize: the accounting commands.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accounting/calibration.h"
#include "accounting/curves.h"
#include "accounting/gdp_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "accounting/stepsize_analysis.h"
#include "accounting/tradeoff.h"
#include "accounting_invocation.h"
#include "calibrate_risk.h"
#include "cli.h"
#include "cli_support.h"
#include "commands.h"
#include "common/format.h"
#include "common/parallel.h"
#include "event_run.h"
#include "io/json_writer.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using core::Params;
using core::Result;
using core::Status;
using namespace core::accounting;

namespace {

// The accountant's native parameters, then the values specific to this computation (pld's Δ
// and bracket), which win on a shared key.
std::vector<NativeValue> mergedNative(const Accountant& a, const Params& p, const Result<EpsilonResult>& eps) {
  std::vector<NativeValue> out;
  if (Result<std::vector<NativeValue>> native = a.native(p)) out = *native;
  if (eps) {
    for (const NativeValue& v : eps->native) {
      auto it = std::find_if(out.begin(), out.end(), [&](const NativeValue& o) { return o.key == v.key; });
      if (it != out.end()) {
        *it = v;
      } else {
        out.push_back(v);
      }
    }
  }
  return out;
}

void writeNative(JsonWriter& json, const Accountant& a, const std::vector<NativeValue>& native) {
  json.key("native").beginObject();
  std::vector<std::string> written;
  for (const NativeValue& v : native) {
    json.field(v.key, v.value);
    written.push_back(v.key);
  }
  // The keys the accountant promises are always there: null where undefined (Δ_∞ when ρ ≥ 1).
  for (const std::string& key : a.info().nativeKeys) {
    if (std::find(written.begin(), written.end(), key) == written.end()) json.key(key).null();
  }
  json.endObject();
}

// Every accounting command states whether the run meets the analysis' assumptions the same way:
// "applicable" and the "violations" in words (JSON), or one VIOLATED line each (text).
void writeApplicability(JsonWriter& json, const std::vector<Violation>& violations) {
  json.field("applicable", violations.empty());
  json.key("violations").beginArray();
  for (const Violation& v : violations) json.value(v.text());
  json.endArray();
}

void writeApplicabilityText(std::ostream& out, const std::vector<Violation>& violations) {
  for (const Violation& v : violations) out << "  VIOLATED " << v.text() << "\n";
}

void writeEpsilonJson(JsonWriter& json, const Accountant& a, const Params& p, const Result<EpsilonResult>& eps,
                      const std::vector<Violation>& violations) {
  json.beginObject();
  json.field("accountant", a.id());
  if (eps) {
    json.field("epsilon", eps->epsilon);
    json.field("delta", eps->delta);
    // Every object carries alpha and conversion: null where the analysis has no Rényi order.
    if (eps->alpha) {
      json.field("alpha", *eps->alpha);
    } else {
      json.key("alpha").null();
    }
    if (eps->conversion) {
      json.field("conversion", conversionName(*eps->conversion));
    } else {
      json.key("conversion").null();
    }
    if (eps->epsilonUpper) json.field("epsilon_upper", *eps->epsilonUpper);
    if (eps->epsilonLower) json.field("epsilon_lower", *eps->epsilonLower);
    json.field("bound", boundKindName(eps->bound));
    if (!eps->caveats.empty()) {
      json.key("caveats").beginArray();
      for (const std::string& c : eps->caveats) json.value(c);
      json.endArray();
    }
  } else {
    json.key("epsilon").null();
    json.field("delta", p.delta);
    json.key("alpha").null();
    json.key("conversion").null();
    json.field("bound", boundKindName(a.boundKind()));
    json.field("error", eps.status().message());
  }
  // An accountant that could not answer does not apply either.
  json.field("applicable", violations.empty() && eps.isOk());
  json.key("violations").beginArray();
  for (const Violation& v : violations) json.value(v.text());
  json.endArray();
  writeNative(json, a, mergedNative(a, p, eps));
  json.field("name", a.name());
  json.field("citation", a.citation());
  json.endObject();
}

void writeEpsilonText(std::ostream& out, const Accountant& a, const Params& p, const Result<EpsilonResult>& eps,
                      const std::vector<Violation>& violations) {
  out << a.id() << " — " << a.name() << "\n";
  if (eps) {
    out << "  ε = " << formatNumber(eps->epsilon) << " at δ = " << formatNumber(eps->delta) << " ("
        << boundKindName(eps->bound);
    if (eps->alpha) out << "; α = " << formatNumber(*eps->alpha);
    if (eps->conversion) out << ", " << conversionName(*eps->conversion) << " conversion";
    if (eps->epsilonLower && eps->epsilonUpper) {
      out << "; bracket [" << formatNumber(*eps->epsilonLower) << ", " << formatNumber(*eps->epsilonUpper) << "]";
    }
    out << ")\n";
    for (const std::string& c : eps->caveats) out << "  caveat: " << c << "\n";
  } else {
    out << "  no ε: " << eps.status().message() << "\n";
  }
  for (const NativeValue& v : mergedNative(a, p, eps)) out << "  " << v.label << " = " << formatNumber(v.value) << "\n";
  if (violations.empty()) {
    out << "  assumptions: all hold\n";
  } else {
    for (const Violation& v : violations) out << "  VIOLATED " << v.text() << "\n";
  }
  out << "  source: " << a.citation() << "\n";
}

}  // namespace

int commandEpsilon(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{"ε at δ of one accountant, or of all", AccountantChoice::kOneOrAll, {eventsOption()}};
  if (auto code = parseAccountingFlags(args, io, command, inv)) return *code;
  if (hasEvents(inv)) return epsilonOfEvents(inv, io);
  if (Status s = resolveAccountingFlags(inv); !s.isOk()) return fail(io, s);
  JsonWriter writer;
  if (inv.all() && inv.json) writer.beginArray();
  int failures = 0;
  for (const Accountant* a : inv.accountants) {
    Result<EpsilonResult> eps = a->epsilon(inv.params, inv.options);
    if (!eps) {
      ++failures;
      // Alone, an accountant refusing the input is a usage error; in `all` it is that entry's reason.
      if (!inv.all() && eps.status().code() == core::StatusCode::kInvalidArgument) return fail(io, eps.status());
    }
    const std::vector<Violation> violations = a->check(inv.params);
    if (inv.json) {
      writeEpsilonJson(writer, *a, inv.params, eps, violations);
    } else {
      writeEpsilonText(io.out, *a, inv.params, eps, violations);
    }
  }
  if (inv.all() && inv.json) writer.endArray();
  if (inv.json) io.out << writer.str() << "\n";
  return (!inv.all() && failures > 0) ? kExitFailure : kExitOk;
}

namespace {

struct RdpValues {
  std::vector<double> orders;
  std::vector<double> rdp;
};

// "rdp, sgld, cyclic, outpert and sgmcmc": the accountants that define rdp(α).
std::string rdpAccountantList() {
  std::vector<std::string_view> ids;
  for (const Accountant* a : allAccountants()) {
    if (a->hasRdp()) ids.push_back(a->id());
  }
  std::string list;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) list += i + 1 == ids.size() ? " and " : ", ";
    list += ids[i];
  }
  return list;
}

// The run's total ε_α at each order of --alphas (or of the default grid).
Result<RdpValues> rdpValues(const Accountant& a, const Params& p, const EpsilonOptions& options) {
  if (!a.hasRdp()) {
    return Status::invalidArgument("--accountant " + std::string(a.id()) +
                                   " is not an RDP analysis: rdp is defined for " + rdpAccountantList());
  }
  DPX_ASSIGN_OR_RETURN(const OrderGrid grid, ordersFor(options));
  RdpValues out;
  out.orders.assign(grid.orders().begin(), grid.orders().end());
  for (double alpha : out.orders) {
    DPX_ASSIGN_OR_RETURN(const double value, a.rdp(p, alpha, options.variant));
    out.rdp.push_back(value);
  }
  return out;
}

}  // namespace

int commandRdp(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{"total RDP ε_α of the run at the given orders", AccountantChoice::kOne, {}};
  if (auto code = parseAccountingInvocation(args, io, command, inv)) return *code;
  const Result<RdpValues> values = rdpValues(inv.accountant(), inv.params, inv.options);
  if (!values) return fail(io, values.status());
  const std::vector<Violation> violations = inv.accountant().check(inv.params);
  if (inv.json) {
    JsonWriter json;
    json.beginObject().field("accountant", inv.accountant().id());
    json.key("alphas").numberArray(values->orders);
    json.key("rdp").numberArray(values->rdp);  // id-literal-ok: the quantity ε_α, whichever accountant
    writeApplicability(json, violations);
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << "alpha,rdp\n";
    for (std::size_t i = 0; i < values->rdp.size(); ++i) {
      io.out << formatNumber(values->orders[i]) << "," << formatNumber(values->rdp[i]) << "\n";
    }
    // The CSV stays a table: its caveats go to stderr, as curve's do.
    for (const Violation& v : violations) io.err << "dpx rdp: VIOLATED " << v.text() << "\n";
  }
  return kExitOk;
}

namespace {

struct DeltaAnswer {
  double delta = 0.0;                // the pessimistic δ, an upper bound
  std::optional<double> deltaLower;  // pld: the optimistic end of the bracket
  std::vector<NativeValue> native;   // pld: the loss grid and the bracket's width against the one asked for
  std::vector<std::string> caveats;
};

// The exact accountant answers with a bracket whose loss grid is chosen for the δ asked about:
// --accuracy is then the wanted (δ_upper − δ_lower)/δ_upper at --epsilon (a grid tuned to the ε
// bracket at --delta can leave δ at another ε coarser with a tighter --accuracy). δ_upper carries
// the truncated tails' mass (moved to +∞), so it never falls below the true δ. The others answer
// with one number.
Result<DeltaAnswer> deltaAt(const Accountant& a, const Params& p, double epsilon, EpsilonOptions options) {
  if (dynamic_cast<const PldAccountant*>(&a) != nullptr) {
    if (!options.exact.discretisation) options.exact.deltaAtEpsilon = epsilon;
    DPX_ASSIGN_OR_RETURN(const PldRunResult r, pldRun(p, options.exact));
    DeltaAnswer answer;
    answer.delta = deltaUpperWithFloor(*r.run, epsilon);
    answer.deltaLower =
        answer.delta <= PldAccountant::kDeltaRoundOff ? 0.0 : std::min(answer.delta, r.run->deltaLower(epsilon));
    const double width = answer.delta > 0.0 ? (answer.delta - *answer.deltaLower) / answer.delta : 0.0;
    answer.native = {
        {"discretisation", "loss grid Δ", r.run->interval},
        {"relative_width", "bracket width (δ_upper − δ_lower)/δ_upper", width},
        {"requested_width", "bracket width asked for (met when relative_width ≤ it)", options.exact.accuracy},
        {"truncation", "tail mass truncated (in δ_upper at +∞)", r.run->tau},
    };
    if (answer.delta <= PldAccountant::kDeltaRoundOff) {
      answer.caveats.push_back("δ is below the exact composition's round-off (" +
                               formatNumber(PldAccountant::kDeltaRoundOff) +
                               "): δ_upper is at least the truncated tails' mass (" + formatNumber(r.run->tau) +
                               "), the lower end says nothing and is 0");
    } else if (!options.exact.discretisation && r.achievedWidth > options.exact.accuracy) {
      answer.caveats.push_back("the δ bracket is wider than the accuracy asked for (" +
                               formatNumber(r.achievedWidth, 4) + " > " + formatNumber(options.exact.accuracy, 4) +
                               "); δ_upper is still an upper bound");
    }
    return answer;
  }
  DPX_ASSIGN_OR_RETURN(const double delta, a.delta(p, epsilon, options));
  return DeltaAnswer{delta, std::nullopt, {}, {}};
}

}  // namespace

int commandDelta(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{"smallest δ the accountant certifies at ε",
                                  AccountantChoice::kOne,
                                  {{"epsilon", "ε ≥ 0 at which to report δ", "E"}, eventsOption()}};
  if (auto code = parseAccountingFlags(args, io, command, inv)) return *code;
  if (hasEvents(inv)) return deltaOfEvents(inv, io);
  if (Status s = resolveAccountingFlags(inv); !s.isOk()) return fail(io, s);
  const Result<double> epsilon = numberOption(inv.parser, "epsilon");
  if (!epsilon) return fail(io, epsilon.status());
  if (*epsilon < 0.0) {
    return fail(io, Status::invalidArgument("--epsilon " + formatNumber(*epsilon) + ": ε must be ≥ 0"));
  }
  const Accountant& a = inv.accountant();
  const Result<DeltaAnswer> answer = deltaAt(a, inv.params, *epsilon, inv.options);
  if (!answer) return fail(io, answer.status());
  const std::vector<Violation> violations = a.check(inv.params);
  if (inv.json) {
    JsonWriter json;
    json.beginObject().field("accountant", a.id()).field("epsilon", *epsilon).field("delta", answer->delta);
    if (answer->deltaLower) json.field("delta_upper", answer->delta).field("delta_lower", *answer->deltaLower);
    json.field("bound", boundKindName(a.boundKind()));
    if (!answer->caveats.empty()) {
      json.key("caveats").beginArray();
      for (const std::string& c : answer->caveats) json.value(c);
      json.endArray();
    }
    writeApplicability(json, violations);
    if (!answer->native.empty()) {
      json.key("native").beginObject();
      for (const NativeValue& v : answer->native) json.field(v.key, v.value);
      json.endObject();
    }
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << a.id() << ": δ = " << formatNumber(answer->delta) << " at ε = " << formatNumber(*epsilon) << " ("
           << boundKindName(a.boundKind());
    if (answer->deltaLower) io.out << "; optimistic δ = " << formatNumber(*answer->deltaLower);
    io.out << ")\n";
    for (const std::string& c : answer->caveats) io.out << "  caveat: " << c << "\n";
    writeApplicabilityText(io.out, violations);
  }
  return kExitOk;
}

namespace {

// --points of a curve: a whole number in [minimum, kMaxCurvePoints].
Result<int> pointsOption(const CommandLine& parser, int minimum) {
  DPX_ASSIGN_OR_RETURN(const double points, numberOption(parser, "points"));
  if (points != std::floor(points) || points < minimum || points > kMaxCurvePoints) {
    return Status::invalidArgument("--points " + formatNumber(points) + ": must be an integer in [" +
                                   std::to_string(minimum) + ", " + std::to_string(kMaxCurvePoints) + "]");
  }
  return static_cast<int>(points);
}

// --vary, --from, --to, --points and --spacing.
Result<CurveSpec> curveSpecFromParser(const CommandLine& parser) {
  CurveSpec spec;
  DPX_ASSIGN_OR_RETURN(spec.variable, parseNamed("vary", parser.value("vary"), parseCurveVariable,
                                                 "one of K, epochs, sigma, n, m, eta"));
  DPX_ASSIGN_OR_RETURN(spec.from, numberOption(parser, "from"));
  DPX_ASSIGN_OR_RETURN(spec.to, numberOption(parser, "to"));
  DPX_ASSIGN_OR_RETURN(spec.points, pointsOption(parser, 2));
  const std::string spacing = parser.value("spacing");
  if (!spacing.empty() && spacing != "linear" && spacing != "log") {
    return Status::invalidArgument("--spacing '" + spacing + "': must be linear or log");
  }
  spec.logSpacing = spacing == "log";
  return spec;
}

// The x values; a range the varied knob refuses is named by the flags that hold it, unless the
// message names a flag already.
Result<std::vector<double>> curveAxisOf(const CurveSpec& spec) {
  Result<std::vector<double>> xs = curveAxis(spec);
  if (xs || xs.status().message().rfind("--", 0) == 0) return xs;
  return Status(xs.status().code(),
                "--from " + formatNumber(spec.from) + " --to " + formatNumber(spec.to) + ": " + xs.status().message());
}

// A JSON array of numbers with null where there is none.
void writeOptionalArray(JsonWriter& json, std::string_view key, const std::vector<std::optional<double>>& values) {
  json.key(key).beginArray();
  for (const std::optional<double>& v : values) {
    if (v) {
      json.value(*v);
    } else {
      json.null();
    }
  }
  json.endArray();
}

void writeCurveJson(std::ostream& out, CurveVariable variable, double delta, const std::vector<double>& xs,
                    const std::vector<AccountantCurve>& curves) {
  JsonWriter json;
  json.beginObject().field("vary", curveVariableName(variable)).field("delta", delta);
  json.key("x").numberArray(xs);
  json.key("curves").beginArray();
  for (const AccountantCurve& c : curves) {
    json.beginObject().field("accountant", c.accountant);
    writeOptionalArray(json, "epsilon", c.epsilon);
    // pld along K or epochs: the bracket's optimistic end and the curve's one loss grid Δ
    // ("epsilon" stays the pessimistic end, the upper bound, as in `dpx epsilon`).
    if (!c.epsilonLower.empty()) writeOptionalArray(json, "epsilon_lower", c.epsilonLower);
    if (c.discretisation) json.field("discretisation", *c.discretisation);
    if (!c.firstError.isOk()) json.field("error", c.firstError.message());
    json.endObject();
  }
  json.endArray().endObject();
  out << json.str() << "\n";
}

// CSV on stdout, an empty cell where a point has no ε; why, once per accountant, on stderr.
void writeCurveCsv(Io& io, const std::vector<double>& xs, const std::vector<AccountantCurve>& curves) {
  io.out << "x";
  for (const AccountantCurve& c : curves) io.out << "," << c.accountant;
  io.out << "\n";
  for (std::size_t i = 0; i < xs.size(); ++i) {
    io.out << formatNumber(xs[i]);
    for (const AccountantCurve& c : curves) {
      io.out << ",";
      if (c.epsilon[i]) io.out << formatNumber(*c.epsilon[i]);
    }
    io.out << "\n";
  }
  for (const AccountantCurve& c : curves) {
    if (!c.firstError.isOk()) io.err << "dpx curve: " << c.accountant << ": " << c.firstError.message() << "\n";
  }
}

}  // namespace

int commandCurve(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{"ε at δ as a function of one knob",
                                  AccountantChoice::kOneOrAll,
                                  {{"vary", "the knob on the x axis: K | epochs | sigma | n | m | eta", "knob"},
                                   {"from", "first x value", "A"},
                                   {"to", "last x value", "B"},
                                   {"points", "number of points in [2, 100000]", "P"},
                                   {"spacing", "linear (default) | log", "name"},
                                   {"csv", "CSV output: header x,<id>,… (default)", {}}}};
  if (auto code = parseAccountingInvocation(args, io, command, inv)) return *code;
  if (Status s = oneOutputFormat(inv.parser); !s.isOk()) return fail(io, s);
  const Result<CurveSpec> spec = curveSpecFromParser(inv.parser);
  if (!spec) return fail(io, spec.status());
  const Result<std::vector<double>> xs = curveAxisOf(*spec);
  if (!xs) return fail(io, xs.status());
  std::vector<AccountantCurve> curves;
  for (const Accountant* a : inv.accountants) {
    curves.push_back(epsilonCurve(*a, inv.params, spec->variable, *xs, inv.options));
  }
  if (inv.json) {
    writeCurveJson(io.out, spec->variable, inv.params.delta, *xs, curves);
  } else {
    writeCurveCsv(io, *xs, curves);
  }
  return kExitOk;
}

namespace {

// The type I errors asked for: --fpr LIST as given (each in [0, 1], in the user's order), or
// --points of the default grid.
Result<std::vector<double>> typeOneGridFromFlags(const CommandLine& parser) {
  if (parser.isSet("fpr")) {
    if (parser.isSet("points")) return Status::invalidArgument("--fpr and --points: give the type I errors one way");
    DPX_ASSIGN_OR_RETURN(std::vector<double> fpr, numberList("fpr", parser.value("fpr")));
    if (fpr.empty()) return Status::invalidArgument("--fpr: give at least one type I error in [0, 1]");
    if (fpr.size() > static_cast<std::size_t>(kMaxCurvePoints)) {
      return Status::invalidArgument("--fpr: at most " + std::to_string(kMaxCurvePoints) + " type I errors");
    }
    for (std::size_t i = 0; i < fpr.size(); ++i) {
      if (!(fpr[i] >= 0.0 && fpr[i] <= 1.0)) {
        return Status::invalidArgument("--fpr: value " + std::to_string(i + 1) + " (" + formatNumber(fpr[i]) +
                                       ") is not a type I error: each must be in [0, 1]");
      }
    }
    return fpr;
  }
  DPX_ASSIGN_OR_RETURN(const int points, parser.isSet("points") ? pointsOption(parser, 3) : Result<int>(200));
  return defaultTypeOneGrid(points);
}

struct SourcedTradeoff {
  std::string source;  // "G_mu" or the accountant's id
  TradeoffCurve curve;
};

// G_μ(x) = Φ(Φ⁻¹(1−x) − μ) for --mu (the μ-GDP curve of Bu, Dong, Long & Su 2020), otherwise the
// accountant's curve at the knobs: the shared flags are read only then, so --mu ignores the knobs.
Result<SourcedTradeoff> tradeoffFromFlags(AccountingInvocation& inv, const std::vector<double>& grid) {
  if (inv.parser.isSet("mu")) {
    if (inv.parser.isSet("accountant")) {
      return Status::invalidArgument("--mu and --accountant: give one");
    }
    DPX_ASSIGN_OR_RETURN(const double mu, numberOption(inv.parser, "mu"));
    if (!(mu > 0.0) || mu > 1e3) {
      return Status::invalidArgument("--mu " + formatNumber(mu) + ": μ must be in (0, 1000]");
    }
    SourcedTradeoff out{"G_mu", {}};
    out.curve.typeOne = grid;
    for (double x : grid) out.curve.typeTwo.push_back(gaussianTradeoff(mu, x));
    return out;
  }
  DPX_RETURN_IF_ERROR(resolveAccountingFlags(inv));
  DPX_ASSIGN_OR_RETURN(TradeoffCurve curve, inv.accountant().tradeoff(inv.params, grid, inv.options));
  return SourcedTradeoff{std::string(inv.accountant().id()), std::move(curve)};
}

}  // namespace

int commandTradeoff(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{"type II error vs type I error (trade-off curve)",
                                  AccountantChoice::kOne,
                                  {{"mu", "draw G_μ for this μ > 0 instead of an accountant's curve", "MU"},
                                   {"points", "number of type I errors in [3, 100000] (default 200)", "P"},
                                   {"fpr",
                                    "comma-separated type I errors (false-positive rates) in [0, 1] to answer at, "
                                    "instead of the default grid from 1e-6",
                                    "list"},
                                   {"csv", "CSV output x,y (default)", {}}}};
  if (auto code = parseAccountingFlags(args, io, command, inv)) return *code;
  if (Status s = oneOutputFormat(inv.parser); !s.isOk()) return fail(io, s);
  const Result<std::vector<double>> grid = typeOneGridFromFlags(inv.parser);
  if (!grid) return fail(io, grid.status());
  const Result<SourcedTradeoff> t = tradeoffFromFlags(inv, *grid);
  if (!t) return fail(io, t.status());
  // G_μ alone is a curve, not an analysis of the run: it has no assumptions to meet.
  const std::vector<Violation> violations =
      inv.parser.isSet("mu") ? std::vector<Violation>{} : inv.accountant().check(inv.params);
  if (inv.json) {
    JsonWriter json;
    json.beginObject().field("source", t->source);
    json.key("x").numberArray(t->curve.typeOne);
    json.key("y").numberArray(t->curve.typeTwo);
    if (!inv.parser.isSet("mu")) writeApplicability(json, violations);
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << "x,y\n";
    for (std::size_t i = 0; i < t->curve.typeOne.size(); ++i) {
      io.out << formatNumber(t->curve.typeOne[i]) << "," << formatNumber(t->curve.typeTwo[i]) << "\n";
    }
    for (const Violation& v : violations) io.err << "dpx tradeoff: VIOLATED " << v.text() << "\n";
  }
  return kExitOk;
}

namespace {

void writeCalibrationJson(std::ostream& out, const Accountant& a, const Calibration& c, double target,
                          const std::vector<Violation>& violations) {
  JsonWriter json;
  json.beginObject().field("accountant", a.id()).field("sigma", c.sigma).field("epsilon", c.epsilon.epsilon);
  json.field("target_epsilon", target).field("delta", c.epsilon.delta);
  if (c.epsilon.alpha) json.field("alpha", *c.epsilon.alpha);
  if (c.epsilon.conversion) json.field("conversion", conversionName(*c.epsilon.conversion));
  json.field("bound", boundKindName(c.epsilon.bound)).field("at_lower_limit", c.atLowerLimit);
  if (c.epsilon.epsilonUpper) json.field("epsilon_upper", *c.epsilon.epsilonUpper);
  if (c.epsilon.epsilonLower) json.field("epsilon_lower", *c.epsilon.epsilonLower);
  for (const NativeValue& v : c.epsilon.native) {
    if (v.key == "discretisation") json.field("discretisation", v.value);
  }
  json.key("violations").beginArray();
  for (const Violation& v : violations) json.value(v.text());
  json.endArray();
  json.endObject();
  out << json.str() << "\n";
}

}  // namespace

int commandCalibrate(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{
      "the smallest σ with ε(σ) ≤ target, or with attack risk ≤ target (pld); conservative for an "
      "upper bound (an estimate's σ is marked)",
      AccountantChoice::kOne, calibrationTargetOptions({"target-epsilon", "target ε > 0", "E"})};
  if (auto code = parseAccountingInvocation(args, io, command, inv)) return *code;
  const Result<CalibrationTarget> kind = calibrationTargetFromParser(inv);
  if (!kind) return fail(io, kind.status());
  if (*kind == CalibrationTarget::kRisk) return calibrateToRisk(inv, io);
  const Result<double> target = targetEpsilonOption(inv.parser);
  if (!target) return fail(io, target.status());
  const Accountant& a = inv.accountant();
  const Result<Calibration> c = calibrateSigma(a, inv.params, *target, inv.options);
  if (!c) {
    // An unreachable target is a fact about the run, not a usage error.
    io.err << "dpx calibrate: " << c.status().message() << "\n";
    return kExitFailure;
  }
  // The σ meets the target only for a run the analysis covers: say where it does not.
  Params calibrated = inv.params;
  calibrated.sigma = c->sigma;
  const std::vector<Violation> violations = a.check(calibrated);
  if (inv.json) {
    writeCalibrationJson(io.out, a, *c, *target, violations);
  } else {
    io.out << a.id() << ": σ = " << formatNumber(c->sigma) << " gives ε = " << formatNumber(c->epsilon.epsilon) << " ≤ "
           << formatNumber(*target) << " at δ = " << formatNumber(c->epsilon.delta);
    if (c->epsilon.bound != BoundKind::kUpper) io.out << " (" << boundKindName(c->epsilon.bound) << ")";
    io.out << "\n";
    if (c->epsilon.bound == BoundKind::kEstimate) {
      io.out << "  " << a.id()
             << "'s ε is an estimate, not a bound: the run's ε may exceed the target; an upper bound (rdp, pld) "
                "guarantees it\n";
    }
    if (c->atLowerLimit) io.out << "  (the target holds even at the smallest σ allowed)\n";
    for (const Violation& v : violations) io.out << "  VIOLATED " << v.text() << "\n";
  }
  return kExitOk;
}

namespace {

void writeStepSizeJson(std::ostream& out, const StepSizeAnalysis& a, const Params& p) {
  JsonWriter json;
  json.beginObject().field("target_epsilon", a.targetEpsilon).field("delta", p.delta);
  json.field("exact_fixed", a.exactFixed).field("exact_decreasing_eta1", a.exactDecreasingEta1);
  json.field("li_fixed", a.liFixed).field("li_decreasing_t1", a.liDecreasingT1);
  json.field("c", a.c).field("c2", a.c2).field("wang", a.wang);
  json.field("sigma_fixed", a.sigmaFixed).field("sigma_decreasing_1", a.sigmaDecreasing1);
  json.field("epsilon_at_current_eta", a.epsilonAtCurrentEta);
  json.key("smoothness_limits").beginObject();
  for (const StepSizeLimit& l : a.limits) {
    json.key(l.id).beginObject().field("eta", l.eta).field("relation", l.relation).field("label", l.label).endObject();
  }
  json.endObject().endObject();
  out << json.str() << "\n";
}

// In the notation of Li, Chen, Liu & Carin 2019 (T steps, N records, batches of τ).
void writeStepSizeText(std::ostream& out, const StepSizeAnalysis& a, const Params& p) {
  out << "step sizes for ε = " << formatNumber(a.targetEpsilon) << ", δ = " << formatNumber(p.delta) << ", T = " << p.K
      << ", N = " << p.n << ", τ = " << p.m << ", L = " << formatNumber(p.L) << "\n"
      << "  exact fixed η             " << formatNumber(a.exactFixed) << "  (σ = " << formatNumber(a.sigmaFixed)
      << ")\n"
      << "  exact decreasing η₁       " << formatNumber(a.exactDecreasingEta1)
      << "  (η_t = η₁ t^(−1/3), σ₁ = " << formatNumber(a.sigmaDecreasing1) << ")\n"
      << "  Li et al. fixed           " << formatNumber(a.liFixed) << "  (c = " << formatNumber(a.c) << ")\n"
      << "  Li et al. decreasing t=1  " << formatNumber(a.liDecreasingT1) << "  (c₂ = " << formatNumber(a.c2) << ")\n"
      << "  Wang et al. 2015          " << formatNumber(a.wang) << "\n"
      << "  ε at the current η = " << formatNumber(p.eta) << ": " << formatNumber(a.epsilonAtCurrentEta)
      << "\n  limits:\n";
  for (const StepSizeLimit& l : a.limits) out << "    " << l.label << ": " << formatNumber(l.eta) << "\n";
  out.flush();
}

}  // namespace

int commandStepsize(const Arguments& args, Io& io) {
  AccountingInvocation inv;
  const AccountingCommand command{"step-size bounds of private SGLD (Li, Chen, Liu & Carin 2019) and smoothness limits",
                                  AccountantChoice::kNone,
                                  {{"target-epsilon", "target ε > 0", "E"}}};
  if (auto code = parseAccountingInvocation(args, io, command, inv)) return *code;
  const Result<double> target = targetEpsilonOption(inv.parser);
  if (!target) return fail(io, target.status());
  const Result<StepSizeAnalysis> a = analyzeStepSize(inv.params, *target, inv.options);
  if (!a) {
    io.err << "dpx stepsize: " << a.status().message() << "\n";
    return kExitFailure;
  }
  if (inv.json) {
    writeStepSizeJson(io.out, *a, inv.params);
  } else {
    writeStepSizeText(io.out, *a, inv.params);
  }
  return kExitOk;
}

}  // namespace dpx::cli
