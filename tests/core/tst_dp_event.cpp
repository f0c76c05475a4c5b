// Reading dp_accounting DpEvents (io/dp_event.h): the files of tests/data/events/ (written in the
// exact form of `event.to_named_tuple()._asdict()` serialised by Python's json), flattening
// (Poisson sampling, self-composition, nested composition, no-ops, random allocation), and every
// refusal with its place in the document.
#include <QTest>
#include <string>
#include <vector>

#include "io/dp_event.h"

using namespace dpx::core::accounting;
using dpx::core::phasesFromDpEventJson;
using dpx::core::readDpEventFile;
using dpx::core::StatusCode;

namespace {

std::string dataFile(const char* name) { return std::string(DPX_TEST_DATA_DIR) + "/events/" + name; }

// A dp_accounting event object: module and class, then the fields (already JSON).
std::string ev(const std::string& cls, const std::string& fields = {}) {
  return R"({"module_name": "dp_accounting.dp_event", "class_name": ")" + cls + "\"" +
         (fields.empty() ? "" : ", " + fields) + "}";
}
std::string gaussian(const std::string& sigma) { return ev("GaussianDpEvent", R"("noise_multiplier": )" + sigma); }
std::string poisson(const std::string& q, const std::string& inner) {
  return ev("PoissonSampledDpEvent", R"("sampling_probability": )" + q + R"(, "event": )" + inner);
}
std::string selfComposed(const std::string& inner, const std::string& count) {
  return ev("SelfComposedDpEvent", R"("event": )" + inner + R"(, "count": )" + count);
}
std::string composed(const std::vector<std::string>& events) {
  std::string list;
  for (const std::string& e : events) list += (list.empty() ? "" : ", ") + e;
  return ev("ComposedDpEvent", R"("events": [)" + list + "]");
}
std::string allocation(const std::string& inner, const std::string& selected, const std::string& steps) {
  return ev("RandomAllocationDpEvent",
            R"("event": )" + inner + R"(, "num_selected": )" + selected + R"(, "num_steps": )" + steps);
}

std::vector<Phase> phasesOf(const std::string& json) {
  auto phases = phasesFromDpEventJson(json);
  if (!phases) qWarning("%s", phases.status().message().c_str());
  return phases ? *phases : std::vector<Phase>{};
}

}  // namespace

class TstDpEvent : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The DP-SGD run of Abadi et al. 2016 on MNIST as dp_accounting describes it: the sampling
  // probability reads back to the double 256/60000 (Python's repr is the shortest round trip).
  void dpSgdFile() {
    auto phases = readDpEventFile(dataFile("dpsgd_mnist.json"));
    QVERIFY2(phases, phases.status().message().c_str());
    QCOMPARE(phases->size(), std::size_t{1});
    const auto& g = std::get<GaussianPhase>(phases->front());
    QCOMPARE(g.samplingProbability, 256.0 / 60000.0);
    QCOMPARE(g.noiseMultiplier, 1.1);
    QCOMPARE(g.steps, std::int64_t{14063});
  }

  void halvesFileIsTheWholeRun() {
    auto halves = readDpEventFile(dataFile("dpsgd_mnist_halves.json"));
    QVERIFY(halves);
    QCOMPARE(*halves, (std::vector<Phase>{GaussianPhase{256.0 / 60000.0, 1.1, 14062}}));
    // ComposedDpEvent of two identical halves == SelfComposedDpEvent of the whole.
    const std::string step = poisson("0.01", gaussian("1.5"));
    QCOMPARE(phasesOf(composed({selfComposed(step, "50"), selfComposed(step, "50")})),
             phasesOf(selfComposed(step, "100")));
    QCOMPARE(phasesOf(selfComposed(selfComposed(step, "50"), "2")), phasesOf(selfComposed(step, "100")));
  }

  void twoPhaseFile() {
    auto phases = readDpEventFile(dataFile("two_phases.json"));
    QVERIFY(phases);
    QCOMPARE(*phases, (std::vector<Phase>{GaussianPhase{0.01, 1.0, 1000}, GaussianPhase{256.0 / 60000.0, 1.1, 5000}}));
  }

  void flattening() {
    // A Gaussian not under Poisson sampling: every record in the step, q = 1.
    QCOMPARE(phasesOf(gaussian("2")), (std::vector<Phase>{GaussianPhase{1.0, 2.0, 1}}));
    QCOMPARE(phasesOf(selfComposed(gaussian("2"), "7")), (std::vector<Phase>{GaussianPhase{1.0, 2.0, 7}}));
    // Counts multiply through nested self-compositions and compositions. A repeated composition
    // repeats each of its phases (A, B, A, B, … reads as A×4, B×12: composition commutes, so no
    // accountant can tell them apart); the order of the phases is kept.
    const std::string a = poisson("0.1", gaussian("1"));
    const std::string b = poisson("0.2", gaussian("3"));
    QCOMPARE(phasesOf(selfComposed(composed({a, selfComposed(b, "3")}), "4")),
             (std::vector<Phase>{GaussianPhase{0.1, 1.0, 4}, GaussianPhase{0.2, 3.0, 12}}));
    QCOMPARE(phasesOf(composed({b, a})), (std::vector<Phase>{GaussianPhase{0.2, 3.0, 1}, GaussianPhase{0.1, 1.0, 1}}));
    QCOMPARE(phasesOf(composed({composed({a, a}), composed({ev("NoOpDpEvent"), a}), b})),
             (std::vector<Phase>{GaussianPhase{0.1, 1.0, 3}, GaussianPhase{0.2, 3.0, 1}}));
    // No-ops cost nothing, wherever they are; a Poisson-sampled no-op too.
    QCOMPARE(phasesOf(composed({ev("NoOpDpEvent"), poisson("0.5", ev("NoOpDpEvent")), a})),
             (std::vector<Phase>{GaussianPhase{0.1, 1.0, 1}}));
    // Integers written as Python floats.
    QCOMPARE(phasesOf(selfComposed(a, "10.0")), (std::vector<Phase>{GaussianPhase{0.1, 1.0, 10}}));
  }

  // dp_accounting's RandomAllocationDpEvent (pull request #414): its epochs are its
  // self-composition count; k = 0 costs nothing.
  void randomAllocation() {
    auto file = readDpEventFile(dataFile("random_allocation.json"));
    QVERIFY2(file, file.status().message().c_str());
    QCOMPARE(*file, (std::vector<Phase>{RandomAllocationPhase{2.0, 100, 10, 1}}));
    QCOMPARE(phasesOf(selfComposed(allocation(gaussian("1.5"), "1", "40"), "3")),
             (std::vector<Phase>{RandomAllocationPhase{1.5, 40, 1, 3}}));
    QCOMPARE(phasesOf(composed({allocation(gaussian("1.5"), "0", "40"), gaussian("1")})),
             (std::vector<Phase>{GaussianPhase{1.0, 1.0, 1}}));
  }

  void refusals_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");
    const std::string step = poisson("0.01", gaussian("1"));
    auto row = [](const char* name, const std::string& json, const char* expected) {
      QTest::newRow(name) << QString::fromStdString(json) << QString::fromUtf8(expected);
    };
    row("unknown class at the top", ev("LaplaceDpEvent", R"("noise_multiplier": 1)"),
        "the top-level event: LaplaceDpEvent is not supported");
    row("unknown class nested", composed({step, step, selfComposed(ev("SampledWithoutReplacementDpEvent"), "2")}),
        "events[2].event: SampledWithoutReplacementDpEvent is not supported: fixed-size batches");
    row("UnsupportedDpEvent", composed({step, ev("UnsupportedDpEvent")}),
        "events[1]: UnsupportedDpEvent is not supported");
    row("NonPrivateDpEvent", ev("NonPrivateDpEvent"),
        "NonPrivateDpEvent is not supported: the operation it stands "
        "for is not differentially private");
    row("tree aggregation", composed({ev("SingleEpochTreeAggregationDpEvent")}),
        "events[0]: SingleEpochTreeAggregationDpEvent is not supported");
    row("composition inside one sample", poisson("0.1", selfComposed(gaussian("1"), "3")),
        "event: SelfComposedDpEvent is not supported inside PoissonSampledDpEvent");
    row("Laplace inside Poisson", poisson("0.1", ev("LaplaceDpEvent", R"("noise_multiplier": 1)")),
        "event: LaplaceDpEvent is not supported inside PoissonSampledDpEvent");
    row("σ as a string", selfComposed(poisson("0.1", gaussian("\"1.1\"")), "3"),
        "event.event.noise_multiplier: must be a number, not a string");
    row("count as a string", selfComposed(step, "\"3\""), "count: must be a number, not a string");
    row("negative count", composed({step, selfComposed(step, "-5")}), "events[1].count = -5: must be ≥ 1");
    row("zero count", selfComposed(step, "0"), "count = 0: must be ≥ 1");
    row("fractional count", selfComposed(step, "2.5"), "count = 2.5: must be a whole number");
    row("q = 0", poisson("0", gaussian("1")), "sampling_probability = 0: must be in (0, 1]");
    row("q > 1", selfComposed(poisson("1.5", gaussian("1")), "2"),
        "event.sampling_probability = 1.5: must be in (0, 1]");
    row("q negative", poisson("-0.1", gaussian("1")), "sampling_probability = -0.1: must be in (0, 1]");
    row("σ = 0", poisson("0.1", gaussian("0")), "event.noise_multiplier = 0: the noise multiplier σ must be > 0");
    row("σ < 0", gaussian("-2"), "noise_multiplier = -2: the noise multiplier σ must be > 0");
    row("other module",
        R"({"module_name": "tensorflow_privacy.privacy.analysis.dp_event", "class_name": "GaussianDpEvent", )"
        R"("noise_multiplier": 1})",
        "module_name = 'tensorflow_privacy.privacy.analysis.dp_event': not an event of dp_accounting");
    row("no class name", R"({"module_name": "dp_accounting.dp_event", "noise_multiplier": 1})",
        "the top-level event: an event needs module_name and class_name");
    row("class name not a string", R"({"module_name": "dp_accounting.dp_event", "class_name": 3})",
        "class_name: must be a string, not a number");
    row("unknown field", ev("GaussianDpEvent", R"("noise_multiplier": 1, "sensitivity": 2)"),
        "sensitivity: GaussianDpEvent has no field 'sensitivity'");
    row("missing field", ev("SelfComposedDpEvent", R"("event": )" + step), "SelfComposedDpEvent needs the field count");
    row("events not a list", ev("ComposedDpEvent", R"("events": {})"), "events: must be an array of events");
    row("event not an object", composed({step, "[1, 2]"}), "events[1]: an event must be an object");
    row("top level not an object", "[" + step + "]", "the top-level event: an event must be an object");
    row("only no-ops", composed({ev("NoOpDpEvent")}), "the events have no privacy cost");
    row("selected > steps", allocation(gaussian("1"), "11", "10"), "num_selected = 11: must be ≤ num_steps = 10");
    row("no steps", allocation(gaussian("1"), "0", "0"), "num_steps = 0: must be ≥ 1");
    row("allocation of a Laplace", allocation(ev("LaplaceDpEvent", R"("noise_multiplier": 1)"), "1", "10"),
        "event: LaplaceDpEvent is not supported inside RandomAllocationDpEvent");
    row("too many steps", selfComposed(selfComposed(step, "3000000000"), "3000000000"), "more than 2^62 steps");
    row("truncated", step.substr(0, 60), "at byte 60 (line 1, column 61)");
    row("empty", "", "at byte 0");
  }
  void refusals() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    auto phases = phasesFromDpEventJson(json.toStdString());
    QVERIFY(!phases);
    const std::string message = phases.status().message();
    QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
    QVERIFY(phases.status().code() == StatusCode::kInvalidArgument ||
            phases.status().code() == StatusCode::kParseError);
  }

  void fileRefusals() {
    auto unsupported = readDpEventFile(dataFile("unsupported_sampling.json"));
    QVERIFY(!unsupported);
    QVERIFY2(
        unsupported.status().message().find("unsupported_sampling.json: events[2].event: "
                                            "SampledWithoutReplacementDpEvent is not supported") != std::string::npos,
        unsupported.status().message().c_str());
    auto truncated = readDpEventFile(dataFile("truncated.json"));
    QCOMPARE(truncated.status().code(), StatusCode::kParseError);
    QVERIFY2(truncated.status().message().find("truncated.json: ") != std::string::npos &&
                 truncated.status().message().find("at byte 300 (line 10, column 45)") != std::string::npos,
             truncated.status().message().c_str());
    auto missing = readDpEventFile(dataFile("no_such_file.json"));
    QCOMPARE(missing.status().code(), StatusCode::kIoError);
    QVERIFY(missing.status().message().find("cannot read events file") != std::string::npos);
    auto directory = readDpEventFile(DPX_TEST_DATA_DIR);
    QCOMPARE(directory.status().code(), StatusCode::kIoError);
  }
};

QTEST_GUILESS_MAIN(TstDpEvent)
#include "tst_dp_event.moc"
