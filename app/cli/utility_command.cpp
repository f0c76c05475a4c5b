// dpx utility: what the papers' utility theorems promise for a private run.
//   dp-sgld         Ryffel, Bach & Pointcheval 2022, §4: Lemma 4.1 at the knobs' schedule (and
//                   Lemma 4.2 for the decreasing one), the σ_L² and K that Thm 4.1/4.2 (and 4.3/4.4)
//                   prescribe for the target, and Table 4's ratio (K ∝ n² or n⁴).
//   sgld-posterior  Li, Chen, Liu & Carin 2019, §3.2: the MSE bound of the step-size-weighted
//                   posterior average (exact sums for the run, Prop. 5 and Lemma 6 as printed).
// Without --data every input is a flag (defaults in --help); with --data the run is resolved by the
// trainer (n, m, K from --epochs, L and β from the data for dp-sgld) and d, ξ², ‖θ*‖ and Γ_M are
// estimated from a near-optimum of the regularised objective (core/utility/utility_inputs.h).
// The numbers are core/utility/utility_report.h's, the ones the GUI's table shows: this file parses
// the flags into a request and prints the report. The report is asked for all or nothing
// (everyStatement): the GUI lists the statements that apply beside the ones that do not, the
// command prints a report only when every statement applies and otherwise the first one's reason.
// Exit 2 for invalid input, 1 when a statement does not apply (λ = 0, ε > 2log(1/δ), η > 1/(2β),
// too few records for the prescribed K) or a calibration cannot meet the target.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"
#include "training/mechanism.h"
#include "training/trainer.h"
#include "training_support.h"
#include "utility/utility_report.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using core::Params;
using core::Result;
using core::Schedule;
using core::Status;
using namespace core::utility;

namespace {

// The CLI's word for an input given explicitly is "flag".
const char* sourceName(InputSource source) { return source == InputSource::kGiven ? "flag" : inputSourceName(source); }

// The data, as `dpx train` loads and splits it, and the run the trainer resolves on it.
struct DataRun {
  std::shared_ptr<const core::training::TrainTestSplit> data;
  std::string description;
  core::training::ResolvedRun run;
};

struct Inputs {
  core::training::Mechanism mechanism = core::training::Mechanism::kDpSgld;
  double target = 0.0;
  Params p;  // the run: n, m, K, η, σ, δ, L, λ, β, schedule
  bool etaGiven = false;
  bool sigmaGiven = false;
  std::optional<DataRun> data;
};

// ------------------------------------------------------------------------------- parsing

Result<double> nonNegativeOption(const CommandLine& parser, std::string_view name, const std::string& what) {
  DPX_ASSIGN_OR_RETURN(const double v, parseNumber(name, parser.value(name)));
  if (!(v >= 0.0)) {
    return Status::invalidArgument("--" + std::string(name) + " " + parser.value(name) + ": " + what +
                                   " must be a finite number ≥ 0");
  }
  return v;
}

Result<std::optional<double>> optionalNonNegative(const CommandLine& parser, std::string_view name,
                                                  const std::string& what) {
  if (!parser.isSet(name)) return std::optional<double>();
  DPX_ASSIGN_OR_RETURN(const double v, nonNegativeOption(parser, name, what));
  return std::optional<double>(v);
}

// Only read with --data: the fit is the only thing that uses it.
Result<std::optional<int>> fitIterationsOption(const CommandLine& parser, bool withData) {
  if (!withData || !parser.isSet("fit-iterations")) return std::optional<int>();
  DPX_ASSIGN_OR_RETURN(const std::int64_t iterations,
                       integerOption(parser, "fit-iterations", kDefaultFitIterations, 1, 1'000'000));
  return std::optional<int>(static_cast<int>(iterations));
}

Result<DataRun> resolveData(const CommandLine& parser, core::training::Mechanism mechanism, const Params& knobs) {
  using namespace core::training;
  if (parser.isSet("n") || parser.isSet("K")) {
    return Status::invalidArgument("--n and --K are set by the data and --epochs when --data is given");
  }
  TrainerConfig config;
  config.mechanism = mechanism;
  config.knobs = knobs;
  config.epochs = 10;
  if (parser.isSet("epochs")) {
    DPX_ASSIGN_OR_RETURN(config.epochs, parseNumber("epochs", parser.value("epochs")));
    if (!(config.epochs > 0.0) || config.epochs > 100000.0) {
      return Status::invalidArgument("--epochs " + formatNumber(config.epochs) + ": must be in (0, 1e5]");
    }
  }
  DPX_ASSIGN_OR_RETURN(const std::int64_t seed, integerOption(parser, "seed", 1, 0, std::int64_t{1} << 53));
  config.seed = static_cast<std::uint64_t>(seed);
  DPX_ASSIGN_OR_RETURN(TrainingData loaded, trainingDataFromParser(parser, config.seed));
  DPX_ASSIGN_OR_RETURN(const std::unique_ptr<Trainer> trainer, Trainer::create(config, loaded.data));
  return DataRun{loaded.data, loaded.description, trainer->resolved()};
}

Result<Inputs> inputsFromParser(const CommandLine& parser) {
  Inputs in;
  using core::training::Mechanism;
  const std::string choices = std::string(core::training::mechanismId(Mechanism::kDpSgld)) + " or " +
                              std::string(core::training::mechanismId(Mechanism::kSgldPosterior));
  if (!parser.isSet("mechanism")) {
    return Status::invalidArgument("--mechanism is required: " + choices);
  }
  const std::string mechanism = parser.value("mechanism");
  const std::optional<Mechanism> parsed = core::training::parseMechanism(mechanism);
  if (parsed == Mechanism::kDpSgld || parsed == Mechanism::kSgldPosterior) {
    in.mechanism = *parsed;
  } else {
    return Status::invalidArgument("--mechanism '" + mechanism + "': must be " + choices);
  }
  DPX_ASSIGN_OR_RETURN(in.target, targetEpsilonOption(parser));
  // --eta auto is the default for dp-sgld (1/(2β)) and not a step for sgld-posterior.
  in.etaGiven = parser.isSet("eta") && parser.value("eta") != "auto";
  in.sigmaGiven = parser.isSet("sigma");
  const bool withData = parser.isSet("data");
  DPX_ASSIGN_OR_RETURN(in.p, knobsFromParser(parser, withData ? KnobContext::kTraining : KnobContext::kAccounting));
  // Before the data is loaded: λ = 0 fails whatever the data.
  if (in.mechanism == core::training::Mechanism::kDpSgld) DPX_RETURN_IF_ERROR(checkLangevinUtilityApplies(in.p));
  if (withData) {
    DPX_ASSIGN_OR_RETURN(in.data, resolveData(parser, in.mechanism, in.p));
    in.p = in.data->run.accountantParams;
  }
  return in;
}

Result<LangevinReportRequest> langevinRequest(const Inputs& in, const CommandLine& parser) {
  LangevinReportRequest r;
  r.params = in.p;
  r.targetEpsilon = in.target;
  r.everyStatement = true;
  if (in.etaGiven) r.eta = in.p.eta;
  if (in.sigmaGiven) r.sigma = in.p.sigma;
  if (in.data) r.data = in.data->data;
  DPX_ASSIGN_OR_RETURN(r.fitIterations, fitIterationsOption(parser, in.data.has_value()));
  if (parser.isSet("d")) {
    DPX_ASSIGN_OR_RETURN(const std::int64_t d, integerOption(parser, "d", 1, 1, std::int64_t{1} << 50));
    r.dimension = static_cast<double>(d);
  } else if (!in.data) {
    return Status::invalidArgument(
        "--d is required without --data: the number of parameters d, an integer in [1, 2^50]");
  }
  DPX_ASSIGN_OR_RETURN(r.xi2, optionalNonNegative(parser, "xi2", "ξ² = E‖∇L_B(θ*)‖²"));
  DPX_ASSIGN_OR_RETURN(r.initialDistanceSquared, optionalNonNegative(parser, "init-distance2", "E‖θ₀ − θ*‖²"));
  return r;
}

Result<SgmcmcReportRequest> sgmcmcRequest(const Inputs& in, const CommandLine& parser) {
  SgmcmcReportRequest r;
  r.params = in.p;
  r.targetEpsilon = in.target;
  r.everyStatement = true;
  if (in.etaGiven) r.eta = in.p.eta;
  if (in.data) r.data = in.data->data;
  DPX_ASSIGN_OR_RETURN(r.fitIterations, fitIterationsOption(parser, in.data.has_value()));
  DPX_ASSIGN_OR_RETURN(r.gammaM, optionalNonNegative(parser, "gamma-m", "Γ_M"));
  if (parser.isSet("mse-constant")) {
    const std::string raw = parser.value("mse-constant");
    DPX_ASSIGN_OR_RETURN(r.mseConstant, parseNumber("mse-constant", raw));
    if (!(*r.mseConstant > 0.0)) {
      return Status::invalidArgument("--mse-constant " + raw + ": the constant C must be a finite number > 0");
    }
  }
  if (parser.isSet("burn-in")) {
    DPX_ASSIGN_OR_RETURN(r.burnIn, integerOption(parser, "burn-in", 0, 0, in.p.K - 1));
  }
  return r;
}

// ------------------------------------------------------------------------------- JSON
// A report printed here holds every statement (the requests ask for all or nothing): the printers
// read their values directly.

void writeRisk(JsonWriter& json, std::string_view key, const RiskTerms& t) {
  json.key(key).beginObject().field("initial", t.initial).field("gradient_noise", t.gradientNoise);
  json.field("langevin_noise", t.langevinNoise).field("total", t.total).endObject();
}

void writeMse(JsonWriter& json, const MseTerms& t) {
  json.field("gradient_noise", t.gradientNoise).field("bias", t.bias).field("discretisation", t.discretisation);
  json.field("total", t.total);
}

void writePrescription(JsonWriter& json, std::string_view key, const TheoremPrescription* t) {
  if (!t) {
    json.key(key).null();
    return;
  }
  json.key(key).beginObject();
  json.field("alpha", t->rdp.alpha).field("rdp_epsilon", t->rdp.epsilon);
  json.field("sigma_L2", t->sigmaL2).field("sigma_L", t->sigmaL).field("noise_multiplier", t->noiseMultiplier);
  json.field("eta0", t->eta0).field("K_formula", t->stepsFormula).field("K", t->steps);
  json.field("stated_bound", t->statedBound).field("corrected_bound", t->correctedBound);
  json.field("lemma_bound", t->lemma.total);
  writeRisk(json, "lemma", t->lemma);
  json.endObject();
}

void writeHeader(JsonWriter& w, core::training::Mechanism mechanism, const char* citation, double target,
                 double delta) {
  w.beginObject().field("mechanism", core::training::mechanismId(mechanism)).field("citation", citation);
  w.field("target_epsilon", target).field("delta", delta);
}

void writeLangevinInputs(JsonWriter& w, const LangevinUtilityReport& r, const DataRun* data) {
  const Params& p = r.params;
  w.key("inputs").beginObject();
  w.field("n", p.n).field("m", p.m).field("d", r.problem.dimension).field("d_source", sourceName(r.dimensionSource));
  w.field("beta", p.beta).field("lambda", p.lambda).field("L", p.L);
  w.field("xi2", r.problem.xi2).field("xi2_source", sourceName(r.xi2Source));
  w.field("init_distance2", r.lemma41->initialDistanceSquared)
      .field("init_distance2_source", sourceName(r.initialDistanceSource));
  w.endObject();
  if (!r.estimated || !data) {
    w.key("data").null();
    return;
  }
  const FittedOptimum& o = r.estimated->optimum;
  w.key("data").beginObject().field("description", data->description);
  w.field("records", r.estimated->records).field("dimension", r.estimated->dimension);
  w.field("objective", o.objective).field("gradient_norm", o.gradientNorm).field("distance_bound", o.distanceBound);
  w.field("suboptimality_bound", o.suboptimalityBound).field("theta_norm", o.thetaNorm);
  w.field("optimum_norm_bound", o.optimumNormBound).field("iterations", o.iterations).field("converged", o.converged);
  w.field("xi2", r.estimated->xi2).field("per_example_variance", r.estimated->spread.variance);
  w.field("lipschitz_from_data", data->run.lipschitzFromData);
  w.field("beta_empirical", data->run.betaEmpirical).endObject();
}

void writeLangevinBounds(JsonWriter& w, const LangevinUtilityReport& r) {
  const Lemma41Bound& l41 = *r.lemma41;
  w.key("lemma_4_1").beginObject().field("bound", l41.recursion.total);
  writeRisk(w, "recursion", l41.recursion);
  if (l41.closedForm) {
    writeRisk(w, "closed_form", *l41.closedForm);
    writeRisk(w, "printed", *l41.printed);
  } else {
    w.key("closed_form").null();
    w.key("printed").null();
  }
  w.field("init_distance2", l41.initialDistanceSquared).field("contraction", l41.contraction).endObject();
  if (r.lemma42) {
    const Lemma42Bound& l42 = **r.lemma42;
    w.key("lemma_4_2").beginObject().field("bound", l42.exactSum.total);
    writeRisk(w, "exact_sum", l42.exactSum);
    writeRisk(w, "closed_form", l42.closedForm);
    w.field("sum_eta", l42.sumEta).endObject();
  } else {
    w.key("lemma_4_2").null();
  }
  writePrescription(w, "theorem_4_1", &*r.theorem41);
  writePrescription(w, "theorem_4_2", &*r.theorem42);
  writePrescription(w, "theorem_4_3", r.theorem43 ? &**r.theorem43 : nullptr);
  writePrescription(w, "theorem_4_4", r.theorem44 ? &**r.theorem44 : nullptr);
  const IterationRegime& table = *r.table4;
  w.key("table_4").beginObject().field("ratio", table.ratio).field("verdict", table.verdict);
  w.field("privacy_ratio", table.privacyRatio).field("condition_number", table.conditionNumber);
  w.field("alpha", r.rdp->alpha).field("rdp_epsilon", r.rdp->epsilon);
  w.field("ratio_theorem_4_4", r.table4Dp->ratio).field("verdict_theorem_4_4", r.table4Dp->verdict).endObject();
}

void writeJson(std::ostream& out, const LangevinUtilityReport& r, const DataRun* data) {
  JsonWriter w;
  writeHeader(w, core::training::Mechanism::kDpSgld,
              "Ryffel, Bach & Pointcheval 2022, §4: Lemma 4.1, Lemma 4.2, Thm 4.1–4.4, Table 4", r.targetEpsilon,
              r.params.delta);
  writeLangevinInputs(w, r, data);
  w.key("run").beginObject().field("schedule", core::scheduleName(r.params.schedule)).field("eta0", r.schedule.eta0);
  w.field("K", r.params.K).field("sigma", r.params.sigma);
  w.field("sigma_source", r.sigmaCalibrated ? "calibrated" : "flag");
  w.field("sigma_L", r.schedule.sigmaL).field("sum_eta", r.schedule.sumEta).field("epsilon", r.runEpsilon);
  w.endObject();
  writeLangevinBounds(w, r);
  w.endObject();
  out << w.str() << "\n";
}

void writeSgmcmcInputs(JsonWriter& w, const SgmcmcUtilityReport& r, const DataRun* data) {
  const Params& p = r.params;
  w.key("inputs").beginObject();
  w.field("n", p.n).field("m", p.m).field("K", p.K).field("L", p.L).field("burn_in", r.burnIn);
  w.field("gamma_m", r.problem.gammaM).field("gamma_m_source", sourceName(r.gammaMSource));
  w.field("gamma_m_bound", r.gammaMBound);
  w.field("mse_constant", r.problem.constant).field("c", *r.c).field("c2", *r.c2);
  w.endObject();
  if (r.estimated && data) {
    const FittedOptimum& o = r.estimated->optimum;
    w.key("data").beginObject().field("description", data->description);
    w.field("records", r.estimated->records).field("dimension", r.estimated->dimension);
    w.field("gradient_norm", o.gradientNorm).field("iterations", o.iterations).field("converged", o.converged);
    w.field("clipped_variance", r.estimated->clippedSpread.variance);
    w.field("gamma_m_at_mode", r.estimated->gammaMAtMode).endObject();
  } else if (data) {
    w.key("data").beginObject().field("description", data->description).endObject();
  } else {
    w.key("data").null();
  }
}

void writeJson(std::ostream& out, const SgmcmcUtilityReport& r, const DataRun* data) {
  JsonWriter w;
  writeHeader(w, core::training::Mechanism::kSgldPosterior, "Li, Chen, Liu & Carin 2019, §3.2: Prop. 5, Lemma 6",
              r.targetEpsilon, r.params.delta);
  writeSgmcmcInputs(w, r, data);
  w.key("run").beginObject().field("schedule", core::scheduleName(r.params.schedule)).field("eta", r.params.eta);
  w.field("eta_source", r.etaCalibrated ? "calibrated" : "flag").field("h1", r.posterior.h1);
  w.field("sigma_eff", r.sigmaEffective).field("epsilon", r.runEpsilon).endObject();
  const WeightedMse& weighted = *r.weighted;
  w.key("weighted").beginObject();
  writeMse(w, weighted.terms);
  w.field("sum_h", weighted.sumH).field("sum_h2", weighted.sumH2).field("samples", weighted.samples).endObject();
  w.key("proposition_5").beginObject().field("eta_tilde0", *r.etaTilde0);
  writeMse(w, *r.proposition5);
  w.endObject();
  w.key("lemma_6_at_theorem_4").beginObject().field("eta", *r.theorem4Eta);
  writeMse(w, *r.lemma6AtTheorem4);
  w.endObject();
  const Lemma6Optimum& optimum = *r.lemma6Optimum;
  w.key("lemma_6_optimum").beginObject().field("eta", optimum.eta);
  w.key("printed").beginObject();
  writeMse(w, optimum.printed);
  w.endObject().key("exact").beginObject();
  writeMse(w, optimum.exact);
  w.endObject().endObject();
  w.endObject();
  out << w.str() << "\n";
}

// ------------------------------------------------------------------------------- text

std::string riskText(const RiskTerms& t) { return formatNumber(t.total) + "  (" + riskTermsText(t) + ")"; }
std::string mseText(const MseTerms& t) { return formatNumber(t.total) + "  (" + mseTermsText(t) + ")"; }

void printPrescription(std::ostream& out, const char* title, const TheoremPrescription& t, bool decreasing) {
  out << title << "\n"
      << "  (α, ε_α) = (" << formatNumber(t.rdp.alpha) << ", " << formatNumber(t.rdp.epsilon) << ")-RDP\n"
      << "  σ_L² = " << formatNumber(t.sigmaL2) << " (noise multiplier σ = " << formatNumber(t.noiseMultiplier)
      << " at η₀ = 1/(2β) = " << formatNumber(t.eta0) << ")\n"
      << "  K = " << formatNumber(t.stepsFormula) << " → " << formatNumber(t.steps) << " steps\n"
      << "  bound as stated " << formatNumber(t.statedBound);
  if (!decreasing) out << ", with the ξ² term of the corrected recursion " << formatNumber(t.correctedBound);
  out << "\n  " << (decreasing ? "Lemma 4.2 (exact sum)" : "Lemma 4.1 (recursion)")
      << " at this K: " << riskText(t.lemma) << "\n";
}

void printLangevinSetting(std::ostream& out, const LangevinUtilityReport& r, const DataRun* data) {
  const Params& p = r.params;
  out << "DP-SGLD utility (Ryffel, Bach & Pointcheval 2022, §4) for ε = " << formatNumber(r.targetEpsilon)
      << " at δ = " << formatNumber(p.delta) << "\n";
  if (data) out << "data: " << data->description << "\n";
  out << "inputs: n = " << p.n << ", m = " << p.m << ", d = " << formatNumber(r.problem.dimension) << " ("
      << sourceName(r.dimensionSource) << "), β = " << formatNumber(p.beta) << ", λ = " << formatNumber(p.lambda)
      << ", L = " << formatNumber(p.L) << "\n"
      << "        ξ² = E‖∇L_B(θ*)‖² = " << formatNumber(r.problem.xi2) << " ("
      << (r.xi2Source == InputSource::kDefault ? "default: the bound L²" : sourceName(r.xi2Source)) << ")\n";
  if (r.estimated) {
    const FittedOptimum& o = r.estimated->optimum;
    out << "        θ̂ after " << o.iterations << " gradient steps: ‖∇F(θ̂)‖ = " << formatNumber(o.gradientNorm)
        << ", so ‖θ̂ − θ*‖ ≤ " << formatNumber(o.distanceBound) << " and ‖θ*‖ ≤ " << formatNumber(o.optimumNormBound)
        << (o.converged ? "" : " (tolerance not reached)") << "\n";
  }
  out << "the run: " << core::scheduleName(p.schedule) << " step, η₀ = " << formatNumber(r.schedule.eta0)
      << ", K = " << p.K << ", σ = " << formatNumber(p.sigma)
      << (r.sigmaCalibrated ? " (calibrated to the target by sgld)" : "")
      << ", σ_L = " << formatNumber(r.schedule.sigmaL) << ", ε = " << formatNumber(r.runEpsilon) << "\n"
      << "        E‖θ₀ − θ*‖² ≤ " << formatNumber(r.lemma41->initialDistanceSquared) << " ("
      << (r.initialDistanceSource == InputSource::kDefault ? "default: 4L²/λ²" : sourceName(r.initialDistanceSource))
      << ")\n\n";
}

void printText(std::ostream& out, const LangevinUtilityReport& r, const DataRun* data) {
  printLangevinSetting(out, r, data);
  const Lemma41Bound& l41 = *r.lemma41;
  out << "Lemma 4.1, last iterate, recursion over the K steps run:\n  E[L(θ_K) − L(θ*)] ≤ " << riskText(l41.recursion)
      << "\n";
  if (l41.closedForm) {
    out << "  closed form " << formatNumber(l41.closedForm->total) << "; as printed (ξ² term βηξ²/(2λ)) "
        << formatNumber(l41.printed->total) << "\n";
  }
  if (r.lemma42) {
    const Lemma42Bound& l42 = **r.lemma42;
    out << "Lemma 4.2, average of the iterates, exact sum over the steps run:\n  " << riskText(l42.exactSum)
        << "\n  as printed (log(1 + λK/(4β))) " << formatNumber(l42.closedForm.total) << "\n";
  }
  out << "\n";
  printPrescription(out, "Thm 4.1 (constant η = 1/(2β), (α, ε_α)-RDP that gives the target):", *r.theorem41, false);
  printPrescription(out, "Thm 4.2 (constant η = 1/(2β), (ε, δ)-DP):", *r.theorem42, false);
  if (r.theorem43) {
    printPrescription(out, "Thm 4.3 (η_k = 1/(2β + λk/2), (α, ε_α)-RDP, average of the iterates):", **r.theorem43,
                      true);
    printPrescription(out, "Thm 4.4 (η_k = 1/(2β + λk/2), (ε, δ)-DP, average of the iterates):", **r.theorem44, true);
  }
  out << "\nTable 4: εn²/(αd)/(β/λ)² = " << formatNumber(r.table4->ratio) << " → " << r.table4->verdict
      << " (Thm 4.4's form: " << formatNumber(r.table4Dp->ratio) << " → " << r.table4Dp->verdict << ")\n";
  out.flush();
}

void printText(std::ostream& out, const SgmcmcUtilityReport& r, const DataRun* data) {
  const Params& p = r.params;
  const bool decreasing = p.schedule == Schedule::kDecreasing;
  out << "SGLD posterior sampling utility (Li, Chen, Liu & Carin 2019, §3.2) for ε = " << formatNumber(r.targetEpsilon)
      << " at δ = " << formatNumber(p.delta) << "\n";
  if (data) out << "data: " << data->description << "\n";
  out << "inputs: N = " << p.n << ", τ = " << p.m << ", T = " << p.K << ", burn-in B = " << r.burnIn
      << ", L = " << formatNumber(p.L) << ", C = " << formatNumber(r.problem.constant) << "\n"
      << "        Γ_M = " << formatNumber(r.problem.gammaM) << " ("
      << (r.gammaMSource == InputSource::kData      ? "at the posterior mode, an estimate"
          : r.gammaMSource == InputSource::kDefault ? "default: the bound L²/(N − 1)"
                                                    : "flag")
      << "), c = " << formatNumber(*r.c) << ", c₂ = " << formatNumber(*r.c2) << "\n"
      << "the run: " << core::scheduleName(p.schedule) << " step" << (decreasing ? " η_t = η₁t^(−1/3), η₁ = " : " η = ")
      << formatNumber(p.eta) << (r.etaCalibrated ? " (the largest within the target)" : "")
      << ", ε = " << formatNumber(r.runEpsilon) << "\n\n"
      << "MSE of the step-weighted average over t = B+1…T (eq. 8 of the supplement, exact sums, h_t = η_t/N):\n  "
      << mseText(r.weighted->terms) << "\n"
      << "Prop. 5 as printed (η̃₀ = ε²/(c₂²L²log(1/δ)) = " << formatNumber(*r.etaTilde0) << "):\n  "
      << mseText(*r.proposition5) << "\n"
      << "Lemma 6 at Thm 4's step η = " << formatNumber(*r.theorem4Eta) << ", as printed:\n  "
      << mseText(*r.lemma6AtTheorem4) << "\n"
      << "Lemma 6's non-private optimum η* = (2T)^(−1/3) = " << formatNumber(r.lemma6Optimum->eta) << ": "
      << formatNumber(r.lemma6Optimum->exact.total) << " (printed form " << formatNumber(r.lemma6Optimum->printed.total)
      << ")\n"
      << "All MSE values are C × the bracket of the statements; C is not given by the paper.\n";
  out.flush();
}

// ------------------------------------------------------------------------------- the command

// Request → report → JSON or text: the printers are overloaded on the report.
template <typename Request, typename Report>
int runReport(const Inputs& in, const CommandLine& parser, Io& io, const Result<Request>& request,
              Result<Report> (*evaluate)(const Request&)) {
  if (!request) return fail(io, request.status());
  const Result<Report> report = evaluate(*request);
  if (!report) return fail(io, report.status());
  const DataRun* data = in.data ? &*in.data : nullptr;
  if (parser.isSet("json")) {
    writeJson(io.out, *report, data);
  } else {
    printText(io.out, *report, data);
  }
  return kExitOk;
}

void addUtilityOptions(CommandLine& parser) {
  addKnobOptions(parser);
  parser.addOption("mechanism", "dp-sgld | sgld-posterior (required)", "id");
  parser.addOption("target-epsilon", "target ε > 0 at --delta (required)", "E");
  parser.addOption("data",
                   "builtin:digits | builtin:breast-cancer | builtin:fashion-mnist | a CSV, LIBSVM or IDX "
                   "path: n, m, K, L, β from the run the trainer resolves; d, ξ², ‖θ*‖, Γ_M from the data",
                   "source");
  parser.addOption("d", "dp-sgld: number of parameters d (required without --data; with it (features+1)·classes)", "N");
  parser.addOption("xi2",
                   "dp-sgld: ξ² = E‖∇L_B(θ*)‖² (default L²; with --data its exact value over batches of m "
                   "at the fitted optimum)",
                   "X");
  parser.addOption("init-distance2", "dp-sgld: E‖θ₀ − θ*‖² (default 4L²/λ²; with --data min(2dσ_L²/λ, (L/λ)²) + ‖θ*‖²)",
                   "X");
  parser.addOption("gamma-m", "sgld-posterior: Γ_M (default L²/(n − 1); with --data its value at the posterior mode)",
                   "X");
  parser.addOption("mse-constant", "sgld-posterior: the constant C of the MSE bounds (default 1)", "C");
  parser.addOption("burn-in", "sgld-posterior: steps discarded before averaging, in [0, K − 1] (default 0)", "B");
  parser.addOption("fit-iterations", "with --data: gradient steps to fit the optimum, in [1, 1000000] (default 2000)",
                   "N");
  parser.addOption("seed", "with --data: seed of the train/test split (default 1)", "S");
  parser.addOption("test-fraction", "with --data: share held out when the source has no test set (default 0.2)", "F");
  parser.addOption("label-column", "CSV: 0-based label column, negative from the end", "i");
  parser.addOption("scaling", "with --data: feature rows unit-norm (default) | clip-norm | none", "name");
  parser.addOption("features", "with --data: raw (default) | scatternet (ScatterNet features of images)", "name");
  parser.addOption("json", "machine-readable JSON output");
}

}  // namespace

int commandUtility(const Arguments& args, Io& io) {
  CommandLine parser;
  addUtilityOptions(parser);
  if (auto code =
          parseOrExit(parser, args, io,

                      "utility bounds of private training: DP-SGLD's excess risk (Ryffel, Bach & Pointcheval 2022, "
                      "Lemma 4.1–4.2, Thm 4.1–4.4, Table 4) or the MSE of SGLD posterior averages (Li, Chen, Liu & "
                      "Carin 2019, Prop. 5, Lemma 6). dp-sgld: --eta defaults to 1/(2β), the theorems' step, and σ "
                      "is calibrated to the target unless --sigma is given; sgld-posterior: η is the largest step "
                      "within the target unless --eta is given. With --data the training defaults apply "
                      "(--m 64 --epochs 10).")) {
    return *code;
  }
  const Result<Inputs> in = inputsFromParser(parser);
  if (!in) return fail(io, in.status());
  if (in->mechanism == core::training::Mechanism::kDpSgld) {
    return runReport(*in, parser, io, langevinRequest(*in, parser), &langevinUtilityReport);
  }
  return runReport(*in, parser, io, sgmcmcRequest(*in, parser), &sgmcmcUtilityReport);
}

}  // namespace dpx::cli
