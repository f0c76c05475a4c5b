// The utility report (core/utility/utility_report.h) that `dpx utility` prints and the GUI's table
// shows: it must give exactly what the lower-level statements of Ryffel, Bach & Pointcheval 2022
// (§4) and Li, Chen, Liu & Carin 2019 (§3.2) give for the same inputs (the wiring), resolve each
// input as given > data > default, turn into finite, cited rows, stop when cancelled, keep a
// statement that does not apply to itself (a row saying why) unless asked for all or nothing, and
// fail with the status codes the CLI maps to its exit codes.
#include <QTest>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>

#include "accounting/calibration.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/stepsize_analysis.h"
#include "test_util.h"
#include "training/dataset.h"
#include "training/trainer.h"
#include "utility/utility_report.h"

using namespace dpx::core;
using namespace dpx::core::utility;

namespace {

// The small problem of tst_langevin_utility: β = 1, λ = 0.125, L = 1, n = 100, m = 10, d = 10,
// ξ² = 0.5, (ε, δ) = (1, 0.01).
LangevinReportRequest smallLangevin(Schedule schedule) {
  LangevinReportRequest r;
  r.params.beta = 1.0;
  r.params.lambda = 0.125;
  r.params.L = 1.0;
  r.params.n = 100;
  r.params.m = 10;
  r.params.K = 200;
  r.params.delta = 0.01;
  r.params.schedule = schedule;
  r.targetEpsilon = 1.0;
  r.dimension = 10.0;
  r.xi2 = 0.5;
  return r;
}

// N = 50000, τ = 256, T = 10⁴, target ε = 0.1 (the CLI's hand-checked setting).
SgmcmcReportRequest mnistPosterior(Schedule schedule) {
  SgmcmcReportRequest r;
  r.params.n = 50000;
  r.params.m = 256;
  r.params.K = 10000;
  r.params.schedule = schedule;
  r.targetEpsilon = 0.1;
  return r;
}

// breast-cancer, unit-norm rows, split as `dpx train` splits it (seed 1, 20 % held out).
std::shared_ptr<const training::TrainTestSplit> breastCancer() {
  static const std::shared_ptr<const training::TrainTestSplit> data = [] {
    Result<training::LoadedData> loaded = training::loadData("builtin:breast-cancer");
    if (!loaded) qFatal("loading builtin:breast-cancer: %s", loaded.status().message().c_str());
    Result<training::TrainTestSplit> split = training::trainTestSplit(std::move(*loaded), 0.2, 1);
    if (!split) qFatal("splitting builtin:breast-cancer: %s", split.status().message().c_str());
    return std::make_shared<const training::TrainTestSplit>(std::move(*split));
  }();
  return data;
}

// digits, split as `dpx train` and the GUI split it (seed 1, 20 % held out): 1438 training records.
std::shared_ptr<const training::TrainTestSplit> digits() {
  static const std::shared_ptr<const training::TrainTestSplit> data = [] {
    Result<training::LoadedData> loaded = training::loadData("builtin:digits");
    if (!loaded) qFatal("loading builtin:digits: %s", loaded.status().message().c_str());
    Result<training::TrainTestSplit> split = training::trainTestSplit(std::move(*loaded), 0.2, 1);
    if (!split) qFatal("splitting builtin:digits: %s", split.status().message().c_str());
    return std::make_shared<const training::TrainTestSplit>(std::move(*split));
  }();
  return data;
}

// The dp-sgld run the trainer resolves on digits at the GUI's defaults (m = 256, η = 0.1, λ = 0.01,
// δ = 10⁻⁵, 60 epochs: K = 338), with L and β from the data, as the GUI's utility table asks for it.
Params digitsGuiRun(Schedule schedule) {
  training::TrainerConfig config;
  config.mechanism = training::Mechanism::kDpSgld;
  config.knobs.m = 256;
  config.knobs.eta = 0.1;
  config.knobs.lambda = 0.01;
  config.knobs.delta = 1e-5;
  config.knobs.schedule = schedule;
  config.epochs = 60;
  Result<std::unique_ptr<training::Trainer>> trainer = training::Trainer::create(config, digits());
  if (!trainer) qFatal("resolving the digits run: %s", trainer.status().message().c_str());
  return (*trainer)->resolved().accountantParams;
}

// The run on that data: n the training set, L = √2·√(1 + 1) = 2 and β = (1 + 1)/2 + λ for unit-norm rows.
Params breastCancerRun() {
  Params p;
  p.n = breastCancer()->train.size();
  p.m = 64;
  p.K = 100;
  p.lambda = 1e-3;
  p.L = 2.0;
  p.beta = 1.0 + p.lambda;
  return p;
}

UtilityInputs estimateDirectly(const Params& p, double clipNorm) {
  UtilityInputOptions options;
  options.optimum.lambda = p.lambda;
  options.optimum.maxIterations = kDefaultFitIterations;
  options.optimum.gradientTolerance = kFitTolerance;
  options.batchSize = p.m;
  options.clipNorm = clipNorm;
  Result<UtilityInputs> e = estimateUtilityInputs(breastCancer()->train, options);
  if (!e) qFatal("estimating the inputs: %s", e.status().message().c_str());
  return *e;
}

void compareTerms(const RiskTerms& a, const RiskTerms& b) {
  QCOMPARE(a.initial, b.initial);
  QCOMPARE(a.gradientNoise, b.gradientNoise);
  QCOMPARE(a.langevinNoise, b.langevinNoise);
  QCOMPARE(a.total, b.total);
}

void compareTerms(const MseTerms& a, const MseTerms& b) {
  QCOMPARE(a.gradientNoise, b.gradientNoise);
  QCOMPARE(a.bias, b.bias);
  QCOMPARE(a.discretisation, b.discretisation);
  QCOMPARE(a.total, b.total);
}

void comparePrescription(const TheoremPrescription& a, const TheoremPrescription& b) {
  QCOMPARE(a.rdp.alpha, b.rdp.alpha);
  QCOMPARE(a.rdp.epsilon, b.rdp.epsilon);
  QCOMPARE(a.sigmaL2, b.sigmaL2);
  QCOMPARE(a.noiseMultiplier, b.noiseMultiplier);
  QCOMPARE(a.stepsFormula, b.stepsFormula);
  QCOMPARE(a.steps, b.steps);
  QCOMPARE(a.statedBound, b.statedBound);
  QCOMPARE(a.correctedBound, b.correctedBound);
  compareTerms(a.lemma, b.lemma);
}

void checkRows(const std::vector<UtilityRow>& rows) {
  QVERIFY(!rows.empty());
  for (const UtilityRow& row : rows) {
    QVERIFY2(!row.label.empty(), row.detail.c_str());
    QVERIFY2(std::isfinite(row.value), row.label.c_str());
    QVERIFY2(!row.citation.empty(), row.label.c_str());
    // A statement that does not apply: no value, the reason instead.
    if (!row.applies) QVERIFY2(row.value == 0.0 && !row.detail.empty(), row.label.c_str());
    for (const std::string* text : {&row.label, &row.detail, &row.citation}) {
      QVERIFY2(text->find("seed 00") == std::string::npos, text->c_str());
      QVERIFY2(text->find("SPEC §") == std::string::npos, text->c_str());
      QVERIFY2(text->find("nan") == std::string::npos && text->find("inf") == std::string::npos, text->c_str());
    }
  }
}

const UtilityRow* findRow(const std::vector<UtilityRow>& rows, const std::string& label) {
  for (const UtilityRow& row : rows) {
    if (row.label == label) return &row;
  }
  return nullptr;
}

// The row of a statement that does not apply: one row, its label, the statement's reason.
void checkNotApplying(const std::vector<UtilityRow>& rows, const std::string& label, const Status& why) {
  QVERIFY2(!why.isOk(), label.c_str());
  QCOMPARE(
      std::count_if(rows.begin(), rows.end(), [&](const UtilityRow& row) { return row.label.rfind(label, 0) == 0; }),
      std::ptrdiff_t{1});
  const UtilityRow* row = findRow(rows, label);
  QVERIFY2(row, label.c_str());
  QVERIFY(!row->applies);
  QCOMPARE(row->value, 0.0);
  QCOMPARE(row->detail, why.message());
}

// The statement of a report a status row of the tests names.
Status statementStatus(const LangevinUtilityReport& r, const QString& name) {
  if (name == QStringLiteral("lemma41")) return r.lemma41.status();
  if (name == QStringLiteral("theorem41")) return r.theorem41.status();
  if (name == QStringLiteral("theorem42")) return r.theorem42.status();
  qFatal("no statement %s", qPrintable(name));
}

Status statementStatus(const SgmcmcUtilityReport& r, const QString& name) {
  if (name == QStringLiteral("c")) return r.c.status();
  if (name == QStringLiteral("proposition5")) return r.proposition5.status();
  qFatal("no statement %s", qPrintable(name));
}

}  // namespace

class TestUtilityReport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // ---------------------------------------------------------------- the wiring
  void langevinEqualsTheStatements_data() {
    QTest::addColumn<int>("schedule");
    QTest::newRow("constant") << static_cast<int>(Schedule::kConstant);
    QTest::newRow("decreasing") << static_cast<int>(Schedule::kDecreasing);
  }
  void langevinEqualsTheStatements() {
    QFETCH(int, schedule);
    const LangevinReportRequest request = smallLangevin(static_cast<Schedule>(schedule));
    const Result<LangevinUtilityReport> report = langevinUtilityReport(request);
    QVERIFY2(report, report.status().message().c_str());
    const bool decreasing = request.params.schedule == Schedule::kDecreasing;

    // The run: η = 1/(2β) for the constant schedule, σ calibrated by `sgld`, its ε within the target.
    Params p = request.params;
    if (!decreasing) p.eta = 0.5;
    QCOMPARE(report->params.eta, p.eta);
    const accounting::Accountant* sgld = accounting::findAccountant("sgld");
    QVERIFY(sgld);
    const Result<accounting::Calibration> calibration = accounting::calibrateSigma(*sgld, p, 1.0);
    QVERIFY(calibration);
    p.sigma = calibration->sigma;
    QCOMPARE(report->params.sigma, p.sigma);
    QVERIFY(report->sigmaCalibrated);
    QCOMPARE(report->runEpsilon, sgld->epsilon(p)->epsilon);
    QVERIFY(report->runEpsilon <= 1.0 + 1e-9);
    const accounting::SgldSchedule sgldRun = accounting::sgldSchedule(p);
    QCOMPARE(report->schedule.sigmaL, sgldRun.sigmaL);
    QCOMPARE(report->schedule.sumEta, sgldRun.sumEta);

    // The statements at the same inputs.
    LangevinProblem problem{1.0, 0.125, 1.0, 100, 10.0, 0.5, std::nullopt, std::nullopt};
    const double s2 = sgldRun.sigmaL * sgldRun.sigmaL;
    const LangevinRun run{decreasing ? LangevinSchedule::kDecreasing : LangevinSchedule::kConstant, p.eta, 200.0, s2};
    const Result<Lemma41Bound> l41 = lemma41(problem, run);
    QVERIFY(l41);
    compareTerms(report->lemma41->recursion, l41->recursion);
    QCOMPARE(report->lemma41->initialDistanceSquared, 4.0 / (0.125 * 0.125));  // the default 4L²/λ²
    QCOMPARE(*report->initialDistanceSquared, report->lemma41->initialDistanceSquared);
    QCOMPARE(report->lemma42.has_value(), decreasing);
    if (decreasing) compareTerms((*report->lemma42)->exactSum, lemma42(problem, 200.0, s2)->exactSum);
    const RdpPair pair = *rdpPairForDp(1.0, 0.01);
    QCOMPARE(report->rdp->alpha, pair.alpha);
    comparePrescription(*report->theorem41, *theorem41(problem, pair, 10));
    comparePrescription(*report->theorem42, *theorem42(problem, 1.0, 0.01, 10));
    QCOMPARE(report->theorem43.has_value(), decreasing);
    QCOMPARE(report->theorem44.has_value(), decreasing);
    if (decreasing) {
      comparePrescription(**report->theorem43, *theorem43(problem, pair, 10));
      comparePrescription(**report->theorem44, *theorem44(problem, 1.0, 0.01, 10));
    }
    QCOMPARE(report->table4->ratio, table4Ratio(1.0, 0.125, 100, 10.0, pair)->ratio);
    QCOMPARE(report->table4Dp->ratio, table4RatioDp(1.0, 0.125, 100, 10.0, 1.0, 0.01)->ratio);
    // Hand value of tst_dpx_utility: Thm 4.2's K = 16·log(54.28681024) = 63.9085 → 64.
    DPX_COMPARE_REL(report->theorem42->stepsFormula, 63.90850067286953, 1e-12);
  }

  void langevinTakesTheGivenRun() {
    // Lemma 4.1 at the run of tst_dpx_utility: η = 0.5, K = 2, σ = 2, m = 10 give σ_L = 0.1.
    LangevinReportRequest request = smallLangevin(Schedule::kConstant);
    request.params.lambda = 0.1;
    request.params.n = 1000;
    request.params.K = 2;
    request.params.delta = 1e-5;
    request.eta = 0.5;
    request.sigma = 2.0;
    request.dimension = 3.0;
    request.xi2 = 2.0;
    request.initialDistanceSquared = 4.0;
    const Result<LangevinUtilityReport> report = langevinUtilityReport(request);
    QVERIFY2(report, report.status().message().c_str());
    QVERIFY(!report->sigmaCalibrated);
    QCOMPARE(report->params.sigma, 2.0);
    DPX_COMPARE_REL(report->schedule.sigmaL, 0.1, 1e-14);
    DPX_COMPARE_REL(report->lemma41->recursion.total, 2.80925, 1e-12);
  }

  void sgmcmcEqualsTheStatements_data() {
    QTest::addColumn<int>("schedule");
    QTest::addColumn<bool>("etaGiven");
    QTest::newRow("constant, η given") << static_cast<int>(Schedule::kConstant) << true;
    QTest::newRow("constant, η calibrated") << static_cast<int>(Schedule::kConstant) << false;
    QTest::newRow("decreasing, η calibrated") << static_cast<int>(Schedule::kDecreasing) << false;
  }
  void sgmcmcEqualsTheStatements() {
    QFETCH(int, schedule);
    QFETCH(bool, etaGiven);
    SgmcmcReportRequest request = mnistPosterior(static_cast<Schedule>(schedule));
    const bool decreasing = request.params.schedule == Schedule::kDecreasing;
    if (etaGiven) request.eta = 0.1;
    request.gammaM = 1.0 / 49999.0;
    request.burnIn = 5000;
    const Result<SgmcmcUtilityReport> report = sgmcmcUtilityReport(request);
    QVERIFY2(report, report.status().message().c_str());

    Params p = request.params;
    if (etaGiven) p.eta = 0.1;
    const Result<accounting::StepSizeAnalysis> steps = accounting::analyzeStepSize(p, 0.1);
    QVERIFY(steps);
    QCOMPARE(*report->c, steps->c);
    QCOMPARE(*report->c2, steps->c2);
    if (!etaGiven) {
      const double largest = decreasing ? steps->exactDecreasingEta1 : steps->exactFixed;
      p.eta = std::clamp(largest, knobInfo(Knob::kEta).min, knobInfo(Knob::kEta).max);
    }
    QCOMPARE(report->params.eta, p.eta);
    QCOMPARE(report->etaCalibrated, !etaGiven);
    const accounting::Accountant* sgmcmc = accounting::findAccountant("sgmcmc");
    QVERIFY(sgmcmc);
    QCOMPARE(report->runEpsilon, sgmcmc->epsilon(p)->epsilon);
    if (!etaGiven) QVERIFY(report->runEpsilon <= 0.1 * (1.0 + 1e-9));
    QCOMPARE(report->sigmaEffective, accounting::sgmcmcNoiseMultiplier(p, p.eta));

    const MseProblem problem{50000, 256, 1.0 / 49999.0, 1.0};
    const PosteriorRun run{decreasing ? PosteriorSchedule::kDecreasing : PosteriorSchedule::kConstant, p.eta / 50000.0,
                           10000.0, 5000.0};
    compareTerms(report->weighted->terms, sgldMseWeighted(problem, run)->terms);
    const double etaTilde0 = *liEtaTilde0(0.1, p.delta, p.L, steps->c2);
    QCOMPARE(*report->etaTilde0, etaTilde0);
    compareTerms(*report->proposition5, *liProposition5(problem, 10000.0, etaTilde0));
    compareTerms(*report->lemma6AtTheorem4, *liLemma6AtTheorem4(problem, 10000.0, 0.1, p.delta, p.L, steps->c));
    compareTerms(report->lemma6Optimum->exact, liLemma6Optimum(problem, 10000.0)->exact);
    QCOMPARE(*report->theorem4Eta, accounting::liFixedStepSize(p, 0.1, steps->c));
    if (etaGiven) {
      // Hand values of tst_dpx_utility: h = 2·10⁻⁶, 5000 samples.
      DPX_COMPARE_REL(report->weighted->terms.gradientNoise, 1943.163863277266, 1e-12);
      DPX_COMPARE_REL(report->weighted->terms.bias, 100.0, 1e-12);
    }
  }

  // ---------------------------------------------------------------- given > data > default
  void langevinInputSources() {
    const Params p = breastCancerRun();
    LangevinReportRequest request;
    request.params = p;
    request.targetEpsilon = 1.0;
    request.dimension = 62.0;
    const Result<LangevinUtilityReport> defaults = langevinUtilityReport(request);
    QVERIFY2(defaults, defaults.status().message().c_str());
    QCOMPARE(defaults->dimensionSource, InputSource::kGiven);
    QCOMPARE(defaults->xi2Source, InputSource::kDefault);
    QCOMPARE(defaults->problem.xi2, p.L * p.L);
    QCOMPARE(defaults->initialDistanceSource, InputSource::kDefault);
    QCOMPARE(defaults->lemma41->initialDistanceSquared, 4.0 * p.L * p.L / (p.lambda * p.lambda));
    QVERIFY(!defaults->estimated);

    request.dimension.reset();
    request.data = breastCancer();
    const Result<LangevinUtilityReport> fromData = langevinUtilityReport(request);
    QVERIFY2(fromData, fromData.status().message().c_str());
    const UtilityInputs direct = estimateDirectly(p, std::numeric_limits<double>::infinity());
    QCOMPARE(fromData->dimensionSource, InputSource::kData);
    QCOMPARE(fromData->problem.dimension, 62.0);  // (30 + 1)·2
    QCOMPARE(fromData->xi2Source, InputSource::kData);
    QCOMPARE(fromData->problem.xi2, direct.xi2);
    QCOMPARE(fromData->initialDistanceSource, InputSource::kData);
    QCOMPARE(*fromData->problem.optimumNorm, direct.optimum.optimumNormBound);
    QVERIFY(fromData->lemma41->initialDistanceSquared < defaults->lemma41->initialDistanceSquared);

    request.dimension = 7.0;
    request.xi2 = 0.3;
    request.initialDistanceSquared = 2.0;
    request.fitIterations = 5;
    const Result<LangevinUtilityReport> given = langevinUtilityReport(request);
    QVERIFY2(given, given.status().message().c_str());
    QCOMPARE(given->dimensionSource, InputSource::kGiven);
    QCOMPARE(given->problem.dimension, 7.0);
    QCOMPARE(given->xi2Source, InputSource::kGiven);
    QCOMPARE(given->problem.xi2, 0.3);
    QCOMPARE(given->initialDistanceSource, InputSource::kGiven);
    QCOMPARE(given->lemma41->initialDistanceSquared, 2.0);
    QVERIFY(given->estimated && given->estimated->optimum.iterations <= 5);
  }

  void sgmcmcInputSources() {
    const Params p = breastCancerRun();
    SgmcmcReportRequest request;
    request.params = p;
    request.targetEpsilon = 1.0;
    const Result<SgmcmcUtilityReport> defaults = sgmcmcUtilityReport(request);
    QVERIFY2(defaults, defaults.status().message().c_str());
    QCOMPARE(defaults->gammaMSource, InputSource::kDefault);
    QCOMPARE(defaults->problem.gammaM, *gammaMBound(p.L, p.n));
    QCOMPARE(defaults->gammaMBound, defaults->problem.gammaM);
    QCOMPARE(defaults->constantSource, InputSource::kDefault);
    QCOMPARE(defaults->problem.constant, 1.0);
    QCOMPARE(defaults->burnInSource, InputSource::kDefault);
    QCOMPARE(defaults->burnIn, std::int64_t{0});

    request.data = breastCancer();
    const Result<SgmcmcUtilityReport> fromData = sgmcmcUtilityReport(request);
    QVERIFY2(fromData, fromData.status().message().c_str());
    QCOMPARE(fromData->gammaMSource, InputSource::kData);
    QCOMPARE(fromData->problem.gammaM, estimateDirectly(p, p.L).gammaMAtMode);
    QVERIFY(fromData->problem.gammaM < fromData->gammaMBound);

    request.gammaM = 0.25;
    request.mseConstant = 3.0;
    request.burnIn = 10;
    const Result<SgmcmcUtilityReport> given = sgmcmcUtilityReport(request);
    QVERIFY2(given, given.status().message().c_str());
    QCOMPARE(given->gammaMSource, InputSource::kGiven);
    QCOMPARE(given->problem.gammaM, 0.25);
    QVERIFY(!given->estimated);  // nothing to estimate: the fit is skipped
    QCOMPARE(given->constantSource, InputSource::kGiven);
    QCOMPARE(given->problem.constant, 3.0);
    QCOMPARE(given->burnInSource, InputSource::kGiven);
    QCOMPARE(given->posterior.burnIn, 10.0);

    // λ = 0: no certified optimum to estimate Γ_M at, so the bound stays.
    request.gammaM.reset();
    request.params.lambda = 0.0;
    const Result<SgmcmcUtilityReport> unregularised = sgmcmcUtilityReport(request);
    QVERIFY2(unregularised, unregularised.status().message().c_str());
    QCOMPARE(unregularised->gammaMSource, InputSource::kDefault);
  }

  // ---------------------------------------------------------------- rows
  void langevinRows_data() {
    QTest::addColumn<int>("schedule");
    QTest::newRow("constant") << static_cast<int>(Schedule::kConstant);
    QTest::newRow("decreasing") << static_cast<int>(Schedule::kDecreasing);
  }
  void langevinRows() {
    QFETCH(int, schedule);
    const Result<LangevinUtilityReport> report = langevinUtilityReport(smallLangevin(static_cast<Schedule>(schedule)));
    QVERIFY2(report, report.status().message().c_str());
    const std::vector<UtilityRow> rows = utilityRows(*report);
    checkRows(rows);
    const bool decreasing = static_cast<Schedule>(schedule) == Schedule::kDecreasing;
    const UtilityRow* lemma = findRow(rows, "Lemma 4.1, last iterate (schedule run)");
    QVERIFY(lemma);
    QVERIFY(lemma->applies);
    QCOMPARE(lemma->value, report->lemma41->recursion.total);
    QCOMPARE(lemma->citation, std::string("Ryffel, Bach & Pointcheval 2022, Lemma 4.1"));
    QCOMPARE(findRow(rows, "Lemma 4.2, average of the iterates (schedule run)") != nullptr, decreasing);
    QCOMPARE(findRow(rows, "Thm 4.4: bound as stated") != nullptr, decreasing);
    const UtilityRow* sigma = findRow(rows, "Thm 4.2: noise multiplier σ");
    QVERIFY(sigma);
    QCOMPARE(sigma->value, report->theorem42->noiseMultiplier);
    const UtilityRow* steps = findRow(rows, "Thm 4.1: steps K");
    QVERIFY(steps);
    QCOMPARE(steps->value, report->theorem41->steps);
    const UtilityRow* table = findRow(rows, "Table 4: εn²/(αd)/(β/λ)²");
    QVERIFY(table);
    QCOMPARE(table->value, report->table4->ratio);
    QVERIFY(table->detail.find("K grows like n") != std::string::npos);
    const UtilityRow* xi2 = findRow(rows, "Input: ξ² = E‖∇L_B(θ*)‖²");
    QVERIFY(xi2);
    QCOMPARE(xi2->value, 0.5);
    QVERIFY(xi2->detail.find("given") != std::string::npos);
    QVERIFY(findRow(rows, "Input: parameters d"));
  }

  void sgmcmcRows() {
    SgmcmcReportRequest request = mnistPosterior(Schedule::kDecreasing);
    request.data = nullptr;
    const Result<SgmcmcUtilityReport> report = sgmcmcUtilityReport(request);
    QVERIFY2(report, report.status().message().c_str());
    const std::vector<UtilityRow> rows = utilityRows(*report);
    checkRows(rows);
    const UtilityRow* weighted = findRow(rows, "Weighted-average MSE (schedule run)");
    QVERIFY(weighted);
    QCOMPARE(weighted->value, report->weighted->terms.total);
    QVERIFY(weighted->citation.find("Li, Chen, Liu & Carin 2019") == 0);
    for (const char* label : {"Prop. 5 as printed", "Lemma 6 at Thm 4's step", "Lemma 6, non-private optimum",
                              "Input: Γ_M", "Input: C (MSE constant)", "Input: burn-in B"}) {
      QVERIFY2(findRow(rows, label), label);
    }
    QCOMPARE(findRow(rows, "Input: Γ_M")->value, report->problem.gammaM);
    QVERIFY(findRow(rows, "Input: Γ_M")->detail.find("default") != std::string::npos);
  }

  void rowsWithData() {
    LangevinReportRequest langevin;
    langevin.params = breastCancerRun();
    langevin.targetEpsilon = 1.0;
    langevin.data = breastCancer();
    const Result<LangevinUtilityReport> l = langevinUtilityReport(langevin);
    QVERIFY2(l, l.status().message().c_str());
    checkRows(utilityRows(*l));
    SgmcmcReportRequest sgmcmc;
    sgmcmc.params = breastCancerRun();
    sgmcmc.targetEpsilon = 1.0;
    sgmcmc.data = breastCancer();
    const Result<SgmcmcUtilityReport> s = sgmcmcUtilityReport(sgmcmc);
    QVERIFY2(s, s.status().message().c_str());
    checkRows(utilityRows(*s));
  }

  // ---------------------------------------------------------------- cancellation
  void cancelled() {
    std::atomic<bool> cancel{true};
    LangevinReportRequest langevin;
    langevin.params = breastCancerRun();
    langevin.targetEpsilon = 1.0;
    langevin.data = breastCancer();
    langevin.cancel = &cancel;
    QCOMPARE(langevinUtilityReport(langevin).status().code(), StatusCode::kCancelled);
    SgmcmcReportRequest sgmcmc;
    sgmcmc.params = breastCancerRun();
    sgmcmc.targetEpsilon = 1.0;
    sgmcmc.data = breastCancer();
    sgmcmc.cancel = &cancel;
    QCOMPARE(sgmcmcUtilityReport(sgmcmc).status().code(), StatusCode::kCancelled);
    // A flag that stays down changes nothing.
    cancel.store(false);
    QVERIFY(langevinUtilityReport(langevin));
    QVERIFY(sgmcmcUtilityReport(sgmcmc));
  }

  // ---------------------------------------------------------------- statements that do not apply
  // The GUI's case: digits at its defaults, target ε = 23.62 at δ = 10⁻⁵ lies beyond 2log(1/δ) =
  // 23.03, the hypothesis of Thm 4.2/4.4. Lemma 4.1 (the run's own bound), Thm 4.1/4.3 and Table 4
  // still hold and are shown; Thm 4.2/4.4 give one row each saying why not.
  void langevinDigitsBeyondThm42_data() {
    QTest::addColumn<int>("schedule");
    QTest::newRow("constant") << static_cast<int>(Schedule::kConstant);
    QTest::newRow("decreasing") << static_cast<int>(Schedule::kDecreasing);
  }
  void langevinDigitsBeyondThm42() {
    QFETCH(int, schedule);
    const bool decreasing = static_cast<Schedule>(schedule) == Schedule::kDecreasing;
    LangevinReportRequest request;
    request.params = digitsGuiRun(static_cast<Schedule>(schedule));
    QCOMPARE(request.params.n, std::int64_t{1438});
    QCOMPARE(request.params.m, std::int64_t{256});
    QCOMPARE(request.params.K, std::int64_t{338});
    QCOMPARE(request.params.lambda, 0.01);
    request.targetEpsilon = 23.62;
    if (!decreasing) request.eta = request.params.eta;  // the step the run takes, as the GUI passes it
    request.data = digits();
    const Result<LangevinUtilityReport> report = langevinUtilityReport(request);
    QVERIFY2(report, report.status().message().c_str());
    QVERIFY(report->sigmaCalibrated);
    QVERIFY(report->runEpsilon <= 23.62 * (1.0 + 1e-9));

    QVERIFY2(report->lemma41, report->lemma41.status().message().c_str());
    QVERIFY(report->theorem41);
    QVERIFY(report->table4 && report->table4Dp);
    QCOMPARE(report->theorem42.status().code(), StatusCode::kNotApplicable);
    QVERIFY(report->theorem42.status().message().find("Thm 4.2 needs ε ≤ 2·log(1/δ)") != std::string::npos);
    QCOMPARE(report->theorem44.has_value(), decreasing);
    if (decreasing) {
      QVERIFY(*report->lemma42);
      QVERIFY(*report->theorem43);
      QCOMPARE(report->theorem44->status().code(), StatusCode::kNotApplicable);
      QVERIFY(report->theorem44->status().message().find("Thm 4.4 needs ε ≤ 2·log(1/δ)") != std::string::npos);
    }

    const std::vector<UtilityRow> rows = utilityRows(*report);
    checkRows(rows);
    const UtilityRow* lemma = findRow(rows, "Lemma 4.1, last iterate (schedule run)");
    QVERIFY(lemma && lemma->applies);
    QCOMPARE(lemma->value, report->lemma41->recursion.total);
    QVERIFY(lemma->value > 0.0);
    checkNotApplying(rows, "Thm 4.2", report->theorem42.status());
    if (decreasing) checkNotApplying(rows, "Thm 4.4", report->theorem44->status());
    QCOMPARE(findRow(rows, "Thm 4.2")->citation, std::string("Ryffel, Bach & Pointcheval 2022, Thm 4.2"));
    QVERIFY(findRow(rows, "Thm 4.1: bound as stated")->applies);
    QVERIFY(findRow(rows, "Table 4: εn²/(αd)/(β/λ)²")->applies);
    // Every row but those of the statements that fail has a value.
    QCOMPARE(std::count_if(rows.begin(), rows.end(), [](const UtilityRow& row) { return !row.applies; }),
             std::ptrdiff_t{decreasing ? 2 : 1});

    // `dpx utility` asks for all or nothing: then the report fails with Thm 4.2's reason.
    request.everyStatement = true;
    const Status all = langevinUtilityReport(request).status();
    QCOMPARE(all.code(), StatusCode::kNotApplicable);
    QCOMPARE(all.message(), report->theorem42.status().message());
  }

  // With η given the run stands without the step-size analysis: a target it cannot place (out of
  // reach at every η) leaves the MSE of the run and Lemma 6's non-private optimum, and fails c, c₂
  // and the statements built on them (Prop. 5 on η̃₀ and c₂, Lemma 6 at Thm 4's step on c).
  void sgmcmcWithoutTheConstants() {
    SgmcmcReportRequest request = mnistPosterior(Schedule::kConstant);
    request.eta = 0.1;
    request.targetEpsilon = 1e-6;
    const Result<SgmcmcUtilityReport> report = sgmcmcUtilityReport(request);
    QVERIFY2(report, report.status().message().c_str());
    QVERIFY(!report->etaCalibrated);
    QCOMPARE(report->params.eta, 0.1);
    QVERIFY(report->weighted && report->lemma6Optimum);
    const Status why = report->c.status();
    QCOMPARE(why.code(), StatusCode::kNotApplicable);
    QVERIFY2(why.message().find("the step size for ε = 1e-06") == 0, why.message().c_str());
    for (const Status& s : {report->c2.status(), report->etaTilde0.status(), report->proposition5.status(),
                            report->lemma6AtTheorem4.status(), report->theorem4Eta.status()}) {
      QCOMPARE(s.code(), why.code());
      QCOMPARE(s.message(), why.message());
    }

    const std::vector<UtilityRow> rows = utilityRows(*report);
    checkRows(rows);
    const UtilityRow* weighted = findRow(rows, "Weighted-average MSE (schedule run)");
    QVERIFY(weighted && weighted->applies);
    QCOMPARE(weighted->value, report->weighted->terms.total);
    QVERIFY(findRow(rows, "Lemma 6, non-private optimum")->applies);
    QVERIFY(findRow(rows, "The run: ε")->applies);
    for (const char* label :
         {"Prop. 5 as printed", "Lemma 6 at Thm 4's step", "Input: c (Thm 4)", "Input: c₂ (Thm 3)"}) {
      checkNotApplying(rows, label, why);
    }

    // With η calibrated there is no run to report on, and all or nothing fails where the analysis does.
    request.eta.reset();
    QCOMPARE(sgmcmcUtilityReport(request).status().message(), why.message());
    request.eta = 0.1;
    request.everyStatement = true;
    QCOMPARE(sgmcmcUtilityReport(request).status().message(), why.message());
  }

  // ---------------------------------------------------------------- statuses
  // `statement` names the statement that carries the status in a partial report; empty: the whole
  // report fails, partial or not.
  void langevinStatuses_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustMention");
    QTest::addColumn<QString>("statement");
    const int invalid = static_cast<int>(StatusCode::kInvalidArgument);
    const int notApplicable = static_cast<int>(StatusCode::kNotApplicable);
    const QString whole;
    QTest::newRow("target 0") << "target 0" << invalid << "target ε" << whole;
    QTest::newRow("target NaN") << "target nan" << invalid << "target ε" << whole;
    QTest::newRow("λ = 0") << "lambda 0" << notApplicable << "λ = 0" << whole;
    QTest::newRow("no d, no data") << "no d" << invalid << "number of parameters d" << whole;
    QTest::newRow("ξ² < 0") << "xi2 -1" << invalid << "xi2" << whole;
    QTest::newRow("λ > β") << "lambda 2" << invalid << "exceeds beta" << whole;
    QTest::newRow("σ out of the knob range") << "sigma 0.01" << invalid << "sigma" << whole;
    QTest::newRow("ε > 2log(1/δ)") << "target 30" << notApplicable << "2·log(1/δ)"
                                   << "theorem42";
    QTest::newRow("η > 1/(2β)") << "eta 0.6" << notApplicable << "1/(2β) = 0.5"
                                << "lemma41";
    QTest::newRow("K of Thm 4.1 not positive") << "n 12" << notApplicable << "is not positive"
                                               << "theorem41";
    // At the default knobs (n = 60000, δ = 10⁻⁵) even σ = 100 gives ε ≈ 0.0065.
    QTest::newRow("unreachable target") << "unreachable 0.0001" << notApplicable << "calibrating σ to ε = 0.0001"
                                        << whole;
    QTest::newRow("1/(2β) outside the η range") << "beta 600000" << invalid << "give --eta" << whole;
  }
  void langevinStatuses() {
    QFETCH(QString, change);
    QFETCH(int, code);
    QFETCH(QString, mustMention);
    QFETCH(QString, statement);
    LangevinReportRequest r = smallLangevin(Schedule::kConstant);
    const QStringList parts = change.split(QLatin1Char(' '));
    const double value = parts.size() > 1 ? parts[1].toDouble() : 0.0;
    if (parts[0] == QStringLiteral("target"))
      r.targetEpsilon = parts[1] == QStringLiteral("nan") ? std::nan("") : value;
    if (parts[0] == QStringLiteral("lambda")) r.params.lambda = value;
    if (parts[0] == QStringLiteral("beta")) r.params.beta = value;
    if (parts[0] == QStringLiteral("no")) r.dimension.reset();
    if (parts[0] == QStringLiteral("xi2")) r.xi2 = value;
    if (parts[0] == QStringLiteral("sigma")) r.sigma = value;
    if (parts[0] == QStringLiteral("eta")) r.eta = value;
    if (parts[0] == QStringLiteral("n")) {
      r.params.n = static_cast<std::int64_t>(value);
      r.params.m = 5;
    }
    if (parts[0] == QStringLiteral("unreachable")) {
      r.params = Params{};
      r.targetEpsilon = value;
    }
    const Result<LangevinUtilityReport> partial = langevinUtilityReport(r);
    if (!statement.isEmpty()) QVERIFY2(partial, partial.status().message().c_str());
    const Status status = statement.isEmpty() ? partial.status() : statementStatus(*partial, statement);
    QCOMPARE(static_cast<int>(status.code()), code);
    QVERIFY2(QString::fromStdString(status.message()).contains(mustMention), status.message().c_str());
    if (partial) checkRows(utilityRows(*partial));
    // All or nothing: the same status fails the report.
    r.everyStatement = true;
    const Status all = langevinUtilityReport(r).status();
    QCOMPARE(static_cast<int>(all.code()), code);
    QCOMPARE(all.message(), status.message());
  }

  void sgmcmcStatuses_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustMention");
    QTest::addColumn<QString>("statement");
    const int invalid = static_cast<int>(StatusCode::kInvalidArgument);
    const int notApplicable = static_cast<int>(StatusCode::kNotApplicable);
    const QString whole;
    QTest::newRow("target 0") << "target 0" << invalid << "target ε" << whole;
    QTest::newRow("burn-in = T") << "burnIn 10000" << invalid << "[0, 9999]" << whole;
    QTest::newRow("burn-in < 0") << "burnIn -1" << invalid << "burn-in" << whole;
    QTest::newRow("Γ_M < 0") << "gammaM -1" << invalid << "Γ_M" << whole;
    QTest::newRow("C = 0") << "constant 0" << invalid << "constant C" << whole;
    QTest::newRow("η = 0") << "eta 0" << invalid << "eta" << whole;
    QTest::newRow("unreachable target") << "target 0.000001" << notApplicable << "the step size for ε = 1e-06" << whole;
    QTest::newRow("unreachable target, η given")
        << "etaTarget 0.000001" << notApplicable << "the step size for ε = 1e-06"
        << "proposition5";
  }
  void sgmcmcStatuses() {
    QFETCH(QString, change);
    QFETCH(int, code);
    QFETCH(QString, mustMention);
    QFETCH(QString, statement);
    SgmcmcReportRequest r = mnistPosterior(Schedule::kConstant);
    const QStringList parts = change.split(QLatin1Char(' '));
    const double value = parts[1].toDouble();
    if (parts[0] == QStringLiteral("target")) r.targetEpsilon = value;
    if (parts[0] == QStringLiteral("burnIn")) r.burnIn = static_cast<std::int64_t>(value);
    if (parts[0] == QStringLiteral("gammaM")) r.gammaM = value;
    if (parts[0] == QStringLiteral("constant")) r.mseConstant = value;
    if (parts[0] == QStringLiteral("eta")) r.eta = value;
    if (parts[0] == QStringLiteral("etaTarget")) {
      r.eta = 0.1;
      r.targetEpsilon = value;
    }
    const Result<SgmcmcUtilityReport> partial = sgmcmcUtilityReport(r);
    if (!statement.isEmpty()) QVERIFY2(partial, partial.status().message().c_str());
    const Status status = statement.isEmpty() ? partial.status() : statementStatus(*partial, statement);
    QCOMPARE(static_cast<int>(status.code()), code);
    QVERIFY2(QString::fromStdString(status.message()).contains(mustMention), status.message().c_str());
    if (partial) checkRows(utilityRows(*partial));
    r.everyStatement = true;
    const Status all = sgmcmcUtilityReport(r).status();
    QCOMPARE(static_cast<int>(all.code()), code);
    QCOMPARE(all.message(), status.message());
  }
};

QTEST_GUILESS_MAIN(TestUtilityReport)
#include "tst_utility_report.moc"
