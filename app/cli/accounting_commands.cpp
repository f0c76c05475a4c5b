// dpx epsilon | rdp | delta | curve | tradeoff | calibrate | stepsize: the accounting commands.
#include <algorithm>
#include <sstream>

#include "accounting/calibration.h"
#include "accounting/curves.h"
#include "accounting/gdp_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_conversion.h"
#include "accounting/registry.h"
#include "accounting/stepsize_analysis.h"
#include "accounting/tradeoff.h"
#include "cli.h"
#include "cli_support.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using core::Params;
using core::Result;
using core::Status;
using namespace core::accounting;

namespace {

void addAccountingOptions(QCommandLineParser& parser, bool accountantRequired) {
  addKnobOptions(parser);
  addOption(parser, QStringLiteral("accountant"),
            QString::fromStdString("accountant id: " + accountantIdList() + (accountantRequired ? "" : " | all")),
            QStringLiteral("id"));
  addOption(parser, QStringLiteral("conversion"),
            QStringLiteral("RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic (Mironov 2017)"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("alphas"), QStringLiteral("comma-separated Rényi orders in [1.01, 1024]"),
            QStringLiteral("list"));
  addOption(parser, QStringLiteral("variant"),
            QStringLiteral("a named variant of the analysis, e.g. sgld baseline, cyclic first-batch"),
            QStringLiteral("id"));
  addOption(parser, QStringLiteral("discretisation"),
            QStringLiteral("pld: loss grid Δ in (0, 1] (default: chosen to meet --accuracy)"), QStringLiteral("D"));
  addOption(parser, QStringLiteral("accuracy"),
            QStringLiteral("pld: relative width of the ε bracket to reach, in (0, 0.5] (default 0.01)"),
            QStringLiteral("A"));
  addOption(parser, QStringLiteral("json"), QStringLiteral("machine-readable JSON output"));
}

Result<std::vector<const Accountant*>> accountantsFromParser(const QCommandLineParser& parser, bool allowAll) {
  if (!parser.isSet(QStringLiteral("accountant"))) {
    return Status::invalidArgument("--accountant is required: one of " + accountantIdList() +
                                   (allowAll ? " or all" : ""));
  }
  const std::string id = toStd(parser.value(QStringLiteral("accountant")));
  if (allowAll && id == "all") return std::vector<const Accountant*>(allAccountants().begin(), allAccountants().end());
  const Accountant* a = findAccountant(id);
  if (!a) {
    return Status::invalidArgument("--accountant '" + id + "' is unknown: must be one of " + accountantIdList() +
                                   (allowAll ? " or all" : ""));
  }
  return std::vector<const Accountant*>{a};
}

// An unknown --variant is invalid input: the message names the flag and the variants there are.
Status variantStatus(const std::vector<const Accountant*>& accountants, const EpsilonOptions& options) {
  if (options.variant.empty() || accountants.size() != 1) return Status::ok();  // `all` drops variants
  const Accountant& a = *accountants.front();
  std::string known;
  for (const Variant& v : a.variants()) {
    if (v.id == options.variant) return Status::ok();
    if (!v.id.empty()) known += (known.empty() ? "" : ", ") + v.id;
  }
  return Status::invalidArgument("--variant '" + options.variant + "': accountant " + std::string(a.id()) +
                                 (known.empty() ? " has no variants" : " has the variants " + known));
}

std::string violationText(const Violation& v) { return v.assumption + ": " + v.reason; }

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
  } else {
    json.key("epsilon").null();
    json.field("delta", p.delta);
    json.key("alpha").null();
    json.key("conversion").null();
    json.field("bound", boundKindName(a.boundKind()));
    json.field("error", eps.status().message());
  }
  json.field("applicable", violations.empty() && eps.isOk());
  json.key("violations").beginArray();
  for (const Violation& v : violations) json.value(violationText(v));
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
  } else {
    out << "  no ε: " << eps.status().message() << "\n";
  }
  for (const NativeValue& v : mergedNative(a, p, eps)) out << "  " << v.label << " = " << formatNumber(v.value) << "\n";
  if (violations.empty()) {
    out << "  assumptions: all hold\n";
  } else {
    for (const Violation& v : violations) out << "  VIOLATED " << violationText(v) << "\n";
  }
  out << "  source: " << a.citation() << "\n";
}

}  // namespace

int commandEpsilon(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addAccountingOptions(parser, false);
  if (auto code = parseOrExit(parser, args, io, QStringLiteral("ε at δ of one accountant, or of all"))) return *code;
  Result<Params> params = knobsFromParser(parser);
  if (!params) return fail(io, params.status());
  Result<EpsilonOptions> options = epsilonOptionsFromParser(parser);
  if (!options) return fail(io, options.status());
  Result<std::vector<const Accountant*>> accountants = accountantsFromParser(parser, true);
  if (!accountants) return fail(io, accountants.status());
  if (Status s = variantStatus(*accountants, *options); !s.isOk()) return fail(io, s);
  const bool all = accountants->size() > 1;
  const bool json = parser.isSet(QStringLiteral("json"));
  JsonWriter writer;
  if (all && json) writer.beginArray();
  int failures = 0;
  for (const Accountant* a : *accountants) {
    EpsilonOptions o = *options;
    if (all) o.variant.clear();  // variants are per accountant
    Result<EpsilonResult> eps = a->epsilon(*params, o);
    if (!eps) {
      ++failures;
      if (!all && eps.status().code() == core::StatusCode::kInvalidArgument) return fail(io, eps.status());
    }
    const std::vector<Violation> violations = a->check(*params);
    if (json) {
      writeEpsilonJson(writer, *a, *params, eps, violations);
    } else {
      writeEpsilonText(io.out, *a, *params, eps, violations);
    }
  }
  if (all && json) writer.endArray();
  if (json) io.out << writer.str() << "\n";
  return (!all && failures > 0) ? kExitFailure : kExitOk;
}

int commandRdp(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addAccountingOptions(parser, true);
  if (auto code = parseOrExit(parser, args, io, QStringLiteral("total RDP ε_α of the run at the given orders"))) {
    return *code;
  }
  Result<Params> params = knobsFromParser(parser);
  if (!params) return fail(io, params.status());
  Result<EpsilonOptions> options = epsilonOptionsFromParser(parser);
  if (!options) return fail(io, options.status());
  Result<std::vector<const Accountant*>> accountants = accountantsFromParser(parser, false);
  if (!accountants) return fail(io, accountants.status());
  if (Status s = variantStatus(*accountants, *options); !s.isOk()) return fail(io, s);
  const Accountant& a = *accountants->front();
  if (!a.hasRdp()) {
    return fail(io, Status::invalidArgument("--accountant " + std::string(a.id()) +
                                            " is not an RDP analysis: rdp is defined for rdp, sgld, cyclic, "
                                            "outpert and sgmcmc"));
  }
  Result<OrderGrid> grid = ordersFor(*options);
  if (!grid) return fail(io, grid.status());
  const std::vector<double> orders(grid->orders().begin(), grid->orders().end());
  std::vector<double> values;
  for (double alpha : orders) {
    Result<double> v = a.rdp(*params, alpha, options->variant);
    if (!v) return fail(io, v.status());
    values.push_back(*v);
  }
  if (parser.isSet(QStringLiteral("json"))) {
    JsonWriter json;
    json.beginObject().field("accountant", a.id());
    json.key("alphas").numberArray(orders);
    json.key("rdp").numberArray(values);
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << "alpha,rdp\n";
    for (std::size_t i = 0; i < values.size(); ++i) {
      io.out << formatNumber(orders[i]) << "," << formatNumber(values[i]) << "\n";
    }
  }
  return kExitOk;
}

int commandDelta(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addAccountingOptions(parser, true);
  addOption(parser, QStringLiteral("epsilon"), QStringLiteral("ε ≥ 0 at which to report δ"), QStringLiteral("E"));
  if (auto code = parseOrExit(parser, args, io, QStringLiteral("smallest δ the accountant certifies at ε"))) {
    return *code;
  }
  Result<Params> params = knobsFromParser(parser);
  if (!params) return fail(io, params.status());
  Result<EpsilonOptions> options = epsilonOptionsFromParser(parser);
  if (!options) return fail(io, options.status());
  Result<std::vector<const Accountant*>> accountants = accountantsFromParser(parser, false);
  if (!accountants) return fail(io, accountants.status());
  if (Status s = variantStatus(*accountants, *options); !s.isOk()) return fail(io, s);
  Result<double> epsilon = numberOption(parser, QStringLiteral("epsilon"));
  if (!epsilon) return fail(io, epsilon.status());
  if (*epsilon < 0.0)
    return fail(io, Status::invalidArgument("--epsilon " + formatNumber(*epsilon) + ": ε must be ≥ 0"));
  const Accountant& a = *accountants->front();
  // The exact accountant answers with a bracket; the others with one number.
  std::optional<double> deltaLower;
  Result<double> delta = 0.0;
  if (const auto* pld = dynamic_cast<const PldAccountant*>(&a)) {
    Result<std::pair<double, double>> bracket = pld->deltaBracket(*params, *epsilon, *options);
    if (!bracket) return fail(io, bracket.status());
    delta = bracket->first;
    deltaLower = bracket->second;
  } else {
    delta = a.delta(*params, *epsilon, *options);
  }
  if (!delta) return fail(io, delta.status());
  if (parser.isSet(QStringLiteral("json"))) {
    JsonWriter json;
    json.beginObject().field("accountant", a.id()).field("epsilon", *epsilon).field("delta", *delta);
    if (deltaLower) json.field("delta_upper", *delta).field("delta_lower", *deltaLower);
    json.field("bound", boundKindName(a.boundKind())).endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << a.id() << ": δ = " << formatNumber(*delta) << " at ε = " << formatNumber(*epsilon) << " ("
           << boundKindName(a.boundKind());
    if (deltaLower) io.out << "; optimistic δ = " << formatNumber(*deltaLower);
    io.out << ")\n";
  }
  return kExitOk;
}

namespace {

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

}  // namespace

int commandCurve(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addAccountingOptions(parser, false);
  addOption(parser, QStringLiteral("vary"), QStringLiteral("the knob on the x axis: K | epochs | sigma | n | m | eta"),
            QStringLiteral("knob"));
  addOption(parser, QStringLiteral("from"), QStringLiteral("first x value"), QStringLiteral("A"));
  addOption(parser, QStringLiteral("to"), QStringLiteral("last x value"), QStringLiteral("B"));
  addOption(parser, QStringLiteral("points"), QStringLiteral("number of points in [2, 100000]"), QStringLiteral("P"));
  addOption(parser, QStringLiteral("spacing"), QStringLiteral("linear (default) | log"), QStringLiteral("name"));
  addOption(parser, QStringLiteral("csv"), QStringLiteral("CSV output: header x,<id>,… (default)"));
  if (auto code = parseOrExit(parser, args, io, QStringLiteral("ε at δ as a function of one knob"))) return *code;
  Result<Params> params = knobsFromParser(parser);
  if (!params) return fail(io, params.status());
  Result<EpsilonOptions> options = epsilonOptionsFromParser(parser);
  if (!options) return fail(io, options.status());
  Result<std::vector<const Accountant*>> accountants = accountantsFromParser(parser, true);
  if (!accountants) return fail(io, accountants.status());
  if (Status s = variantStatus(*accountants, *options); !s.isOk()) return fail(io, s);
  if (parser.isSet(QStringLiteral("json")) && parser.isSet(QStringLiteral("csv"))) {
    return fail(io, Status::invalidArgument("--json and --csv: choose one output format"));
  }
  CurveSpec spec;
  const auto variable = parseCurveVariable(toStd(parser.value(QStringLiteral("vary"))));
  if (!variable) {
    return fail(io, Status::invalidArgument("--vary '" + toStd(parser.value(QStringLiteral("vary"))) +
                                            "': must be one of K, epochs, sigma, n, m, eta"));
  }
  spec.variable = *variable;
  Result<double> from = numberOption(parser, QStringLiteral("from"));
  if (!from) return fail(io, from.status());
  Result<double> to = numberOption(parser, QStringLiteral("to"));
  if (!to) return fail(io, to.status());
  Result<double> points = numberOption(parser, QStringLiteral("points"));
  if (!points) return fail(io, points.status());
  if (*points != std::floor(*points) || *points < 2 || *points > kMaxCurvePoints) {
    return fail(io, Status::invalidArgument("--points " + formatNumber(*points) + ": must be an integer in [2, " +
                                            std::to_string(kMaxCurvePoints) + "]"));
  }
  spec.from = *from;
  spec.to = *to;
  spec.points = static_cast<int>(*points);
  const std::string spacing = toStd(parser.value(QStringLiteral("spacing")));
  if (!spacing.empty() && spacing != "linear" && spacing != "log") {
    return fail(io, Status::invalidArgument("--spacing '" + spacing + "': must be linear or log"));
  }
  spec.logSpacing = spacing == "log";
  Result<std::vector<double>> xs = curveAxis(spec);
  if (!xs && xs.status().message().rfind("--", 0) != 0) {
    // Say which flags hold the range that was refused.
    return fail(io, Status(xs.status().code(), "--from " + formatNumber(*from) + " --to " + formatNumber(*to) + ": " +
                                                   xs.status().message()));
  }
  if (!xs) return fail(io, xs.status());
  std::vector<AccountantCurve> curves;
  for (const Accountant* a : *accountants) {
    EpsilonOptions o = *options;
    if (accountants->size() > 1) o.variant.clear();
    curves.push_back(epsilonCurve(*a, *params, spec.variable, *xs, o));
  }
  if (parser.isSet(QStringLiteral("json"))) {
    JsonWriter json;
    json.beginObject().field("vary", curveVariableName(spec.variable)).field("delta", params->delta);
    json.key("x").numberArray(*xs);
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
    io.out << json.str() << "\n";
  } else {
    io.out << "x";
    for (const AccountantCurve& c : curves) io.out << "," << c.accountant;
    io.out << "\n";
    for (std::size_t i = 0; i < xs->size(); ++i) {
      io.out << formatNumber((*xs)[i]);
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
  return kExitOk;
}

int commandTradeoff(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addAccountingOptions(parser, true);
  addOption(parser, QStringLiteral("mu"), QStringLiteral("draw G_μ for this μ > 0 instead of an accountant's curve"),
            QStringLiteral("MU"));
  addOption(parser, QStringLiteral("points"), QStringLiteral("number of type I errors in [3, 100000] (default 200)"),
            QStringLiteral("P"));
  addOption(parser, QStringLiteral("csv"), QStringLiteral("CSV output x,y (default)"));
  if (auto code = parseOrExit(parser, args, io, QStringLiteral("type II error vs type I error (trade-off curve)"))) {
    return *code;
  }
  int points = 200;
  if (parser.isSet(QStringLiteral("points"))) {
    Result<double> p = numberOption(parser, QStringLiteral("points"));
    if (!p) return fail(io, p.status());
    if (*p != std::floor(*p) || *p < 3 || *p > kMaxCurvePoints) {
      return fail(io, Status::invalidArgument("--points " + formatNumber(*p) + ": must be an integer in [3, " +
                                              std::to_string(kMaxCurvePoints) + "]"));
    }
    points = static_cast<int>(*p);
  }
  const std::vector<double> grid = defaultTypeOneGrid(points);
  TradeoffCurve curve;
  std::string source;
  if (parser.isSet(QStringLiteral("mu"))) {
    if (parser.isSet(QStringLiteral("accountant"))) {
      return fail(io, Status::invalidArgument("--mu and --accountant: give one"));
    }
    Result<double> mu = numberOption(parser, QStringLiteral("mu"));
    if (!mu) return fail(io, mu.status());
    if (!(*mu > 0.0) || *mu > 1e3) {
      return fail(io, Status::invalidArgument("--mu " + formatNumber(*mu) + ": μ must be in (0, 1000]"));
    }
    curve.typeOne = grid;
    for (double x : grid) curve.typeTwo.push_back(gaussianTradeoff(*mu, x));
    source = "G_mu";
  } else {
    Result<Params> params = knobsFromParser(parser);
    if (!params) return fail(io, params.status());
    Result<EpsilonOptions> options = epsilonOptionsFromParser(parser);
    if (!options) return fail(io, options.status());
    Result<std::vector<const Accountant*>> accountants = accountantsFromParser(parser, false);
    if (!accountants) return fail(io, accountants.status());
    if (Status s = variantStatus(*accountants, *options); !s.isOk()) return fail(io, s);
    Result<TradeoffCurve> c = accountants->front()->tradeoff(*params, grid, *options);
    if (!c) return fail(io, c.status());
    curve = *c;
    source = std::string(accountants->front()->id());
  }
  if (parser.isSet(QStringLiteral("json"))) {
    JsonWriter json;
    json.beginObject().field("source", source);
    json.key("x").numberArray(curve.typeOne);
    json.key("y").numberArray(curve.typeTwo);
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << "x,y\n";
    for (std::size_t i = 0; i < curve.typeOne.size(); ++i) {
      io.out << formatNumber(curve.typeOne[i]) << "," << formatNumber(curve.typeTwo[i]) << "\n";
    }
  }
  return kExitOk;
}

int commandCalibrate(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addAccountingOptions(parser, true);
  addOption(parser, QStringLiteral("target-epsilon"), QStringLiteral("target ε > 0"), QStringLiteral("E"));
  if (auto code = parseOrExit(parser, args, io, QStringLiteral("the smallest σ with ε(σ) ≤ target (conservative)"))) {
    return *code;
  }
  Result<Params> params = knobsFromParser(parser);
  if (!params) return fail(io, params.status());
  Result<EpsilonOptions> options = epsilonOptionsFromParser(parser);
  if (!options) return fail(io, options.status());
  Result<std::vector<const Accountant*>> accountants = accountantsFromParser(parser, false);
  if (!accountants) return fail(io, accountants.status());
  if (Status s = variantStatus(*accountants, *options); !s.isOk()) return fail(io, s);
  Result<double> target = numberOption(parser, QStringLiteral("target-epsilon"));
  if (!target) return fail(io, target.status());
  if (!(*target > 0.0)) {
    return fail(io,
                Status::invalidArgument("--target-epsilon " + formatNumber(*target) + ": the target ε must be > 0"));
  }
  const Accountant& a = *accountants->front();
  Result<Calibration> c = calibrateSigma(a, *params, *target, *options);
  if (!c) {
    // An unreachable target is a fact about the run, not a usage error.
    io.err << "dpx calibrate: " << c.status().message() << "\n";
    return kExitFailure;
  }
  if (parser.isSet(QStringLiteral("json"))) {
    JsonWriter json;
    json.beginObject().field("accountant", a.id()).field("sigma", c->sigma).field("epsilon", c->epsilon.epsilon);
    json.field("target_epsilon", *target).field("delta", c->epsilon.delta);
    if (c->epsilon.alpha) json.field("alpha", *c->epsilon.alpha);
    if (c->epsilon.conversion) json.field("conversion", conversionName(*c->epsilon.conversion));
    json.field("bound", boundKindName(c->epsilon.bound)).field("at_lower_limit", c->atLowerLimit);
    if (c->epsilon.epsilonUpper) json.field("epsilon_upper", *c->epsilon.epsilonUpper);
    if (c->epsilon.epsilonLower) json.field("epsilon_lower", *c->epsilon.epsilonLower);
    for (const NativeValue& v : c->epsilon.native) {
      if (v.key == "discretisation") json.field("discretisation", v.value);
    }
    json.endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << a.id() << ": σ = " << formatNumber(c->sigma) << " gives ε = " << formatNumber(c->epsilon.epsilon) << " ≤ "
           << formatNumber(*target) << " at δ = " << formatNumber(c->epsilon.delta) << "\n";
    if (c->atLowerLimit) io.out << "  (the target holds even at the smallest σ allowed)\n";
  }
  return kExitOk;
}

int commandStepsize(const QStringList& args, Io& io) {
  QCommandLineParser parser;
  addKnobOptions(parser);
  addOption(parser, QStringLiteral("target-epsilon"), QStringLiteral("target ε > 0"), QStringLiteral("E"));
  addOption(parser, QStringLiteral("conversion"), QStringLiteral("improved (default) | classic"),
            QStringLiteral("name"));
  addOption(parser, QStringLiteral("alphas"), QStringLiteral("comma-separated Rényi orders"), QStringLiteral("list"));
  addOption(parser, QStringLiteral("json"), QStringLiteral("machine-readable JSON output"));
  if (auto code = parseOrExit(parser, args, io,
                              QStringLiteral("step-size bounds of private SGLD (Li, Chen, Liu & Carin 2019) and "
                                             "smoothness limits"))) {
    return *code;
  }
  Result<Params> params = knobsFromParser(parser);
  if (!params) return fail(io, params.status());
  Result<EpsilonOptions> options = epsilonOptionsFromParser(parser, false);
  if (!options) return fail(io, options.status());
  Result<double> target = numberOption(parser, QStringLiteral("target-epsilon"));
  if (!target) return fail(io, target.status());
  if (!(*target > 0.0)) {
    return fail(io,
                Status::invalidArgument("--target-epsilon " + formatNumber(*target) + ": the target ε must be > 0"));
  }
  Result<StepSizeAnalysis> a = analyzeStepSize(*params, *target, *options);
  if (!a) {
    io.err << "dpx stepsize: " << a.status().message() << "\n";
    return kExitFailure;
  }
  if (parser.isSet(QStringLiteral("json"))) {
    JsonWriter json;
    json.beginObject().field("target_epsilon", a->targetEpsilon).field("delta", params->delta);
    json.field("exact_fixed", a->exactFixed).field("exact_decreasing_eta1", a->exactDecreasingEta1);
    json.field("li_fixed", a->liFixed).field("li_decreasing_t1", a->liDecreasingT1);
    json.field("c", a->c).field("c2", a->c2).field("wang", a->wang);
    json.field("sigma_fixed", a->sigmaFixed).field("sigma_decreasing_1", a->sigmaDecreasing1);
    json.field("epsilon_at_current_eta", a->epsilonAtCurrentEta);
    json.key("smoothness_limits").beginObject();
    for (const StepSizeLimit& l : a->limits) {
      json.key(l.id)
          .beginObject()
          .field("eta", l.eta)
          .field("relation", l.relation)
          .field("label", l.label)
          .endObject();
    }
    json.endObject().endObject();
    io.out << json.str() << "\n";
  } else {
    io.out << "step sizes for ε = " << formatNumber(a->targetEpsilon) << ", δ = " << formatNumber(params->delta)
           << ", T = " << params->K << ", N = " << params->n << ", τ = " << params->m
           << ", L = " << formatNumber(params->L) << "\n"
           << "  exact fixed η             " << formatNumber(a->exactFixed) << "  (σ = " << formatNumber(a->sigmaFixed)
           << ")\n"
           << "  exact decreasing η₁       " << formatNumber(a->exactDecreasingEta1)
           << "  (η_t = η₁ t^(−1/3), σ₁ = " << formatNumber(a->sigmaDecreasing1) << ")\n"
           << "  Li et al. fixed           " << formatNumber(a->liFixed) << "  (c = " << formatNumber(a->c) << ")\n"
           << "  Li et al. decreasing t=1  " << formatNumber(a->liDecreasingT1) << "  (c₂ = " << formatNumber(a->c2)
           << ")\n"
           << "  Wang et al. 2015          " << formatNumber(a->wang) << "\n"
           << "  ε at the current η = " << formatNumber(params->eta) << ": " << formatNumber(a->epsilonAtCurrentEta)
           << "\n  limits:\n";
    for (const StepSizeLimit& l : a->limits) io.out << "    " << l.label << ": " << formatNumber(l.eta) << "\n";
    io.out.flush();
  }
  return kExitOk;
}

}  // namespace dpx::cli
