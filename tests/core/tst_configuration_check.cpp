// The configuration checker: a curated table of mismatches, each raising exactly its finding
// (knob and severity, with the offending values in the message), and consistent runs that stay
// silent; the sampler and neighbour findings agree with every accountant's own check(); invalid
// requests are refused. The shipped presets are checked in tests/ui (they need the GUI's preset
// mapping).
#include <QElapsedTimer>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "accounting/configuration_check.h"
#include "accounting/registry.h"
#include "training/mechanism.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

struct Expected {
  Severity severity;
  std::string knob;
};

// Params' defaults (n = 60000, m = 256, σ = 1.1, K = 14063, δ = 1e−5) with the row's changes.
struct Row {
  Params params;
  CheckOptions options;
  std::vector<Expected> expected;         // in order: errors first
  std::vector<std::string> inMessages{};  // phrases the first finding's message must contain
  std::string needsAccountant{};          // the row needs this accountant registered
};

Params with(void (*edit)(Params&)) {
  Params p;
  edit(p);
  return p;
}

CheckOptions reportedBy(std::string id, bool calibrated = false) {
  CheckOptions o;
  o.reported = std::move(id);
  o.calibrated = calibrated;
  return o;
}

CheckOptions realised(std::string id = {}) {
  CheckOptions o = reportedBy(std::move(id));
  o.batchAverage = BatchAverage::kRealised;
  return o;
}

CheckOptions target(double epsilon) {
  CheckOptions o;
  o.targetEpsilon = epsilon;
  return o;
}

std::string describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings)
    out += std::string(severityName(f.severity)) + " " + f.knob + ": " + f.message + "\n";
  return out.empty() ? "no findings" : out;
}

bool hasKnob(const ConfigurationCheck& check, const std::string& knob) {
  for (const Finding& f : check.findings) {
    if (f.knob == knob) return true;
  }
  return false;
}

}  // namespace

Q_DECLARE_METATYPE(Row)

class TestConfigurationCheck : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void table_data();
  void table();
  void samplingAgreesWithEveryAccountantsCheck();
  void neighbouringAgreesWithEveryAccountantsCheck();
  void alternativesNameTheRegisteredAnalyses();
  void refusals();
  void cheap();
};

namespace {

constexpr auto E = Severity::kError;
constexpr auto W = Severity::kWarning;

void addSamplingAndNeighbourRows() {
  // Mismatches. Chua et al. 2024 (ICML): shuffled batches reported with a Poisson ε.
  QTest::newRow("shuffle reported by the Poisson accountants (default)")
      << Row{with([](Params& p) { p.sampling = Sampling::kShuffle; }),
             {},
             {{E, "sampling"}},
             {"rdp and pld", "q = m/n = 0.004266666667", "shuffled batches", "Chua et al. 2024"}};
  QTest::newRow("fixed-size batches reported by rdp") << Row{with([](Params& p) { p.sampling = Sampling::kUniform; }),
                                                             reportedBy("rdp"),
                                                             {{E, "sampling"}},
                                                             {"rdp assumes Poisson", "m = 256 records"}};
  QTest::newRow("cyclic batches, dp-sgd: one finding for rdp, gdp and pld")
      << Row{with([](Params& p) { p.sampling = Sampling::kCyclic; }),
             reportedBy("dp-sgd"),
             {{E, "sampling"}},
             {"rdp, gdp and pld assume Poisson", "fixed-order batches"}};
  QTest::newRow("Poisson batches, dp-sgld (sgld assumes fixed-size)")
      << Row{with([](Params& p) { p.sampling = Sampling::kPoisson; }),
             reportedBy("dp-sgld", true),
             {{E, "sampling"}},
             {"sgld assumes uniform fixed-size batches", "Poisson sampling"}};
  QTest::newRow("Poisson batches reported by deterministic")
      << Row{with([](Params& p) { p.sampling = Sampling::kPoisson; }),
             reportedBy("deterministic", true),
             {{E, "sampling"}},
             {"deterministic assumes fixed-order"},
             "deterministic"};
  QTest::newRow("replace-one neighbours, add/remove analyses: sensitivity 2L")
      << Row{with([](Params& p) {
               p.neighbouring = Neighbouring::kReplaceOne;
               p.L = 1.5;
             }),
             {},
             {{E, "neighbouring"}},
             {"rdp and pld analyse add/remove", "2L = 3", "σ/2 = 0.55", "σ = 1.1"}};
  QTest::newRow("add/remove neighbours, replace-one analysis (cyclic)")
      << Row{with([](Params& p) { p.neighbouring = Neighbouring::kAddRemove; }),
             reportedBy("cyclic", true),
             {{E, "neighbouring"}},
             {"cyclic analyses replace-one"}};
}

void addAveragingDeltaAndEpsilonRows() {
  QTest::newRow("realised |B| under Poisson sampling (default accountants)")
      << Row{Params{}, realised(), {{E, "batch-average"}}, {"realised batch size |B|", "m = 256", "rdp and pld"}};
  QTest::newRow("realised |B|, dp-sgd (its own Poisson sampler)")
      << Row{Params{}, realised("dp-sgd"), {{E, "batch-average"}}, {"expected_batch_size"}};
  QTest::newRow("delta above 1/n") << Row{
      with([](Params& p) { p.delta = 1e-3; }), {}, {{E, "delta"}}, {"δ = 0.001", "1/n = 1.666666667e-05"}};
  QTest::newRow("delta exactly 1/n") << Row{with([](Params& p) {
                                              p.n = 100000;
                                              p.delta = 1e-5;
                                            }),
                                            {},
                                            {{E, "delta"}},
                                            {"δ = 1e-05 ≥ 1/n = 1e-05"}};
  QTest::newRow("rdp's epsilon above 50 (σ = 0.3); pld not run")
      << Row{with([](Params& p) { p.sigma = 0.3; }), {}, {{W, "epsilon"}}, {"rdp's ε = ", "above 50"}};
  QTest::newRow("rdp's epsilon below 0.01 (σ = 60, K = 100)") << Row{with([](Params& p) {
                                                                       p.sigma = 60;
                                                                       p.K = 100;
                                                                     }),
                                                                     reportedBy("rdp"),
                                                                     {{W, "epsilon"}},
                                                                     {"rdp's ε = ", "below 0.01"}};
  QTest::newRow("pld alone: rdp's upper bound stands in")
      << Row{with([](Params& p) { p.sigma = 0.3; }), reportedBy("pld"), {{W, "epsilon"}}, {"upper bound on pld's"}};
  QTest::newRow("target epsilon above 50") << Row{Params{}, target(80), {{W, "target-epsilon"}}, {"target ε = 80"}};
  QTest::newRow("target epsilon below 0.01")
      << Row{Params{}, target(0.001), {{W, "target-epsilon"}}, {"target ε = 0.001"}};
  QTest::newRow("shuffle and replace-one together; realised |B| of fixed-size batches is fine")
      << Row{with([](Params& p) {
               p.sampling = Sampling::kShuffle;
               p.neighbouring = Neighbouring::kReplaceOne;
             }),
             realised(),
             {{E, "sampling"}, {E, "neighbouring"}}};
  QTest::newRow("errors before warnings") << Row{with([](Params& p) {
                                                   p.sigma = 0.3;
                                                   p.sampling = Sampling::kShuffle;
                                                 }),
                                                 reportedBy("rdp"),
                                                 {{E, "sampling"}, {W, "epsilon"}}};
}

void addConsistentRows() {
  QTest::newRow("defaults") << Row{Params{}, {}, {}};
  QTest::newRow("Poisson, add/remove, expected m, dp-sgd") << Row{with([](Params& p) {
                                                                    p.sampling = Sampling::kPoisson;
                                                                    p.neighbouring = Neighbouring::kAddRemove;
                                                                  }),
                                                                  reportedBy("dp-sgd"),
                                                                  {}};
  QTest::newRow("dp-sgld on its own fixed-size batches, calibrated") << Row{Params{}, reportedBy("dp-sgld", true), {}};
  QTest::newRow("cyclic, replace-one, calibrated")
      << Row{with([](Params& p) { p.neighbouring = Neighbouring::kReplaceOne; }), reportedBy("cyclic", true), {}};
  QTest::newRow("outpert on shuffled batches")
      << Row{with([](Params& p) { p.sampling = Sampling::kShuffle; }), reportedBy("outpert", true), {}};
  QTest::newRow("realised |B| of fixed-size batches (sgld)") << Row{Params{},
                                                                    [] {
                                                                      CheckOptions o = realised("sgld");
                                                                      o.calibrated = true;
                                                                      return o;
                                                                    }(),
                                                                    {}};
  QTest::newRow("delta just below 1/n") << Row{with([](Params& p) { p.delta = 1.6e-5; }), {}, {}};
  QTest::newRow("target epsilon 1") << Row{Params{}, target(1.0), {}};
  QTest::newRow("shuffled batches reported by deterministic (its bound covers them)")
      << Row{with([](Params& p) { p.sampling = Sampling::kShuffle; }),
             reportedBy("deterministic", true),
             {},
             {},
             "deterministic"};
}

}  // namespace

void TestConfigurationCheck::table_data() {
  QTest::addColumn<Row>("row");
  addSamplingAndNeighbourRows();
  addAveragingDeltaAndEpsilonRows();
  addConsistentRows();  // must stay silent
}

void TestConfigurationCheck::table() {
  QFETCH(Row, row);
  if (!row.needsAccountant.empty() && !findAccountant(row.needsAccountant)) {
    QSKIP(("accountant " + row.needsAccountant + " is not registered").c_str());
  }
  const Result<ConfigurationCheck> check = checkConfiguration(row.params, row.options);
  QVERIFY2(check.isOk(), check.isOk() ? "" : check.status().message().c_str());
  const std::vector<Finding>& findings = check->findings;
  const std::string all = describe(findings);
  QVERIFY2(findings.size() == row.expected.size(), all.c_str());
  for (std::size_t i = 0; i < findings.size(); ++i) {
    QVERIFY2(findings[i].severity == row.expected[i].severity && findings[i].knob == row.expected[i].knob, all.c_str());
  }
  for (const std::string& phrase : row.inMessages) {
    QVERIFY2(findings.front().message.find(phrase) != std::string::npos, (phrase + " not in:\n" + all).c_str());
  }
  QCOMPARE(check->hasError(), !findings.empty() && findings.front().severity == Severity::kError);
}

// The checker and Accountant::check() read the same assumptions (sampling and alsoValidFor).
void TestConfigurationCheck::samplingAgreesWithEveryAccountantsCheck() {
  for (const Accountant* a : allAccountants()) {
    for (Sampling s : {Sampling::kPoisson, Sampling::kUniform, Sampling::kCyclic, Sampling::kShuffle}) {
      Params p;
      p.sampling = s;
      const Result<ConfigurationCheck> check = checkConfiguration(p, reportedBy(std::string(a->id()), true));
      QVERIFY(check.isOk());
      bool violated = false;
      for (const Violation& v : a->check(p)) violated |= v.assumption == "sampling";
      QVERIFY2(
          hasKnob(*check, "sampling") == violated,
          (std::string(a->id()) + " with " + std::string(samplingName(s)) + ": " + describe(check->findings)).c_str());
    }
  }
}

void TestConfigurationCheck::neighbouringAgreesWithEveryAccountantsCheck() {
  for (const Accountant* a : allAccountants()) {
    for (Neighbouring relation : {Neighbouring::kAddRemove, Neighbouring::kReplaceOne}) {
      Params p;
      p.neighbouring = relation;
      const Result<ConfigurationCheck> check = checkConfiguration(p, reportedBy(std::string(a->id()), true));
      QVERIFY(check.isOk());
      bool violated = false;
      for (const Violation& v : a->check(p)) violated |= v.assumption == "neighbouring relation";
      QVERIFY2(hasKnob(*check, "neighbouring") == violated,
               (std::string(a->id()) + ": " + describe(check->findings)).c_str());
    }
  }
}

// For shuffled batches the Poisson finding points to every registered analysis of the same noisy
// steps whose assumptions cover shuffling, with the kind of bound it gives.
void TestConfigurationCheck::alternativesNameTheRegisteredAnalyses() {
  Params p;
  p.sampling = Sampling::kShuffle;
  const Result<ConfigurationCheck> check = checkConfiguration(p);
  QVERIFY(check.isOk() && check->findings.size() == 1);
  const std::string& message = check->findings.front().message;
  int named = 0;
  for (const Accountant* a : allAccountants()) {
    const Assumptions& s = a->assumptions();
    const bool coversShuffle =
        s.sampling == Sampling::kShuffle ||
        std::find(s.alsoValidFor.begin(), s.alsoValidFor.end(), Sampling::kShuffle) != s.alsoValidFor.end();
    if (!coversShuffle || s.release != Release::kAllIterates || !a->noiseSetBySigma()) continue;
    const std::string kind = a->boundKind() == BoundKind::kLower ? "a lower bound" : "an upper bound";
    QVERIFY2(message.find(std::string(a->id()) + " gives " + kind) != std::string::npos ||
                 message.find(std::string(a->id()) + " " + kind) != std::string::npos,
             message.c_str());
    ++named;
  }
  QVERIFY2(message.find("sample batches with Poisson sampling") != std::string::npos ||
               message.find("Sample batches with Poisson sampling") != std::string::npos,
           message.c_str());
  qInfo("%d registered analyses cover shuffled batches", named);
}

void TestConfigurationCheck::refusals() {
  const Result<ConfigurationCheck> unknown = checkConfiguration(Params{}, reportedBy("rpd"));
  QVERIFY(!unknown.isOk() && unknown.status().code() == StatusCode::kInvalidArgument);
  QVERIFY(unknown.status().message().find("'rpd' is neither an accountant") != std::string::npos);
  const Result<ConfigurationCheck> sgd = checkConfiguration(Params{}, reportedBy("sgd"));
  QVERIFY(!sgd.isOk() && sgd.status().message().find("not private") != std::string::npos);
  Params bad;
  bad.sigma = -1;
  QVERIFY(!checkConfiguration(bad).isOk());
  QVERIFY(!checkConfiguration(Params{}, target(0.0)).isOk());
  QVERIFY(!checkConfiguration(Params{}, target(std::nan(""))).isOk());
  // A mechanism's accountants and own sampler.
  const Result<ConfigurationCheck> sgld = checkConfiguration(Params{}, reportedBy("dp-sgld", true));
  QVERIFY(sgld.isOk());
  QCOMPARE(sgld->accountants, std::vector<std::string>{"sgld"});
  QVERIFY(sgld->runSampling == Sampling::kUniform);
}

// The GUI runs it on a worker, but it should stay cheap: analytic accountants only.
void TestConfigurationCheck::cheap() {
  Params fresh;  // knobs no other test used, so no memoised RDP profile helps
  fresh.sigma = 1.2345;
  fresh.K = 12345;
  QElapsedTimer timer;
  timer.start();
  const Result<ConfigurationCheck> check = checkConfiguration(fresh, reportedBy("dp-sgd"));
  const double ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  QVERIFY(check.isOk());
  qInfo("checkConfiguration(defaults, dp-sgd): %.2f ms", ms);
  QVERIFY2(ms < 2000.0, "the checker must never run the exact PLD");
}

QTEST_GUILESS_MAIN(TestConfigurationCheck)
#include "tst_configuration_check.moc"
