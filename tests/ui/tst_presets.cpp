// Presets: the built-in set matches the source papers, files round-trip, and every kind of broken
// file is refused with a message naming the problem while the previous file stays intact.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <iterator>

#include "presets.h"

using dpx::ui::Preset;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

bool writeAll(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

const Preset* findPreset(const std::vector<Preset>& presets, const QString& id) {
  for (const Preset& p : presets) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

// The five source papers as the presets' "source" fields begin (docs/REFERENCES.md).
// The five source papers, and the published accuracies the experiments reproduce.
constexpr const char* kSourcePapers[] = {
    "Ryffel, Bach & Pointcheval 2022", "Kong & Ribero 2024",  "Chen, Lee & Kifer 2019",     "Bu, Dong, Long & Su 2020",
    "Li, Chen, Liu & Carin 2019",      "Tramèr & Boneh 2021", "Xiao, Rasul & Vollgraf 2017"};

// JSON written with single quotes (moc's tokenizer stumbles on raw string literals).
QByteArray q(const char* text) { return QByteArray(text).replace('\'', '"'); }

// A small valid preset that the corruption cases edit one field at a time.
QByteArray validJson(const QByteArray& paramsExtra = {}, const QByteArray& topExtra = {}) {
  return q("{'format': 'dpexplorer-preset', 'version': 1, 'name': 'test',") + topExtra +
         q(" 'params': {'n': 60000, 'm': 256, 'sigma': 1.3, 'epochs': 15") + paramsExtra + "}}";
}

}  // namespace

class TestPresets : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void builtinsParseAndValidate() {
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    // Release builds skip a broken built-in instead of asserting: count the files to notice.
    const QStringList files = QDir(QStringLiteral(":/presets")).entryList({QStringLiteral("*.json")}, QDir::Files);
    QVERIFY(!files.isEmpty());
    QCOMPARE(presets.size(), static_cast<std::size_t>(files.size()));
    QSet<QString> ids;
    QString previous;
    for (const Preset& p : presets) {
      QVERIFY2(!p.id.isEmpty(), qPrintable(p.name));
      QVERIFY2(!ids.contains(p.id), qPrintable(p.id));
      ids.insert(p.id);
      QVERIFY2(files.contains(p.id + QStringLiteral(".json")), qPrintable(p.id));
      QVERIFY(previous < p.id);  // sorted
      previous = p.id;
      QVERIFY2(!p.name.isEmpty() && !p.description.isEmpty(), qPrintable(p.id));
      // The source names the paper by its authors and year, as docs/REFERENCES.md cites it.
      const bool citesPaper = std::any_of(std::begin(kSourcePapers), std::end(kSourcePapers), [&](const char* paper) {
        return p.source.startsWith(QString::fromUtf8(paper));
      });
      QVERIFY2(citesPaper, qPrintable(p.id + ": " + p.source));
      const dpx::core::Status s = p.params.validate();
      QVERIFY2(s.isOk(), qPrintable(p.id + ": " + QString::fromStdString(s.message())));
      QCOMPARE(p.version, dpx::ui::kPresetFormatVersion);
    }
    for (const char* id :
         {"seed003-mnist-row1", "seed003-mnist-row2", "seed003-mnist-row3", "seed003-mnist-row4", "seed003-mnist-row5",
          "seed003-mnist-row6", "seed003-adult", "seed003-imdb", "seed003-movielens", "seed000-cifar10-resnet18",
          "seed000-pneumonia-resnet18", "seed004-mnist-sgld", "seed002-output-perturbation"}) {
      QVERIFY2(ids.contains(QString::fromLatin1(id)), id);
    }
  }

  void publishedSettings_data() {
    QTest::addColumn<QString>("id");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<double>("sigma");
    QTest::addColumn<qint64>("K");
    QTest::addColumn<double>("delta");
    QTest::addColumn<double>("L");
    // Bu, Dong, Long & Su 2020, Table 1: K = ⌈epochs·n/m⌉ with n = 60000, m = 256.
    QTest::newRow("table1 row1") << "seed003-mnist-row1" << qint64(60000) << qint64(256) << 1.3 << qint64(3516) << 1e-5
                                 << 1.5;
    QTest::newRow("table1 row2") << "seed003-mnist-row2" << qint64(60000) << qint64(256) << 1.1 << qint64(14063) << 1e-5
                                 << 1.0;
    QTest::newRow("table1 row3") << "seed003-mnist-row3" << qint64(60000) << qint64(256) << 0.7 << qint64(10547) << 1e-5
                                 << 1.5;
    QTest::newRow("table1 row4") << "seed003-mnist-row4" << qint64(60000) << qint64(256) << 0.6 << qint64(14532) << 1e-5
                                 << 1.5;
    QTest::newRow("table1 row5") << "seed003-mnist-row5" << qint64(60000) << qint64(256) << 0.55 << qint64(15938)
                                 << 1e-5 << 1.5;
    QTest::newRow("table1 row6") << "seed003-mnist-row6" << qint64(60000) << qint64(256) << 0.5 << qint64(23438) << 1e-5
                                 << 1.5;
    QTest::newRow("adult") << "seed003-adult" << qint64(29305) << qint64(256) << 0.55 << qint64(2061) << 1e-5 << 1.0;
    QTest::newRow("imdb") << "seed003-imdb" << qint64(25000) << qint64(512) << 0.56 << qint64(440) << 1e-5 << 1.0;
    QTest::newRow("movielens") << "seed003-movielens" << qint64(800167) << qint64(10002) << 0.6 << qint64(1600) << 1e-6
                               << 5.0;
    QTest::newRow("li2019 mnist sgld") << "seed004-mnist-sgld" << qint64(50000) << qint64(224) << 3.168 << qint64(10000)
                                       << 1e-5 << 1.0;
    QTest::newRow("ryffel2022 cifar10 resnet18")
        << "seed000-cifar10-resnet18" << qint64(50000) << qint64(256) << 4.46 << qint64(5860) << 1e-5 << 1.0;
  }

  void publishedSettings() {
    QFETCH(QString, id);
    QFETCH(qint64, n);
    QFETCH(qint64, m);
    QFETCH(double, sigma);
    QFETCH(qint64, K);
    QFETCH(double, delta);
    QFETCH(double, L);
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    const Preset* p = findPreset(presets, id);
    QVERIFY2(p, qPrintable(id));
    QCOMPARE(p->params.n, n);
    QCOMPARE(p->params.m, m);
    QCOMPARE(p->params.sigma, sigma);
    QCOMPARE(p->params.K, K);
    QCOMPARE(p->params.delta, delta);
    QCOMPARE(p->params.L, L);
  }

  void convexSettings() {
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    // Ryffel, Bach & Pointcheval 2022, Table 4: β = 55, β/λ = 5.5e4, η = 1/(2β), ε = 1.
    const Preset* cifar = findPreset(presets, QStringLiteral("seed000-cifar10-resnet18"));
    QVERIFY(cifar);
    QCOMPARE(cifar->params.beta, 55.0);
    QCOMPARE(cifar->params.lambda, 1e-3);
    QVERIFY(qFuzzyCompare(cifar->params.eta, 1.0 / 110.0));
    QCOMPARE(cifar->targetEpsilon.value_or(0.0), 1.0);
    QVERIFY(cifar->trainerMechanisms.contains(QStringLiteral("dp-sgld")));
    const Preset* decreasing = findPreset(presets, QStringLiteral("seed000-cifar10-resnet18-decreasing"));
    QVERIFY(decreasing);
    QVERIFY(decreasing->params.schedule == dpx::core::Schedule::kDecreasing);
    // Chen, Lee & Kifer 2019, Prop. 2: full batch, η = 2/(β+λ).
    const Preset* outpert = findPreset(presets, QStringLiteral("seed002-output-perturbation"));
    QVERIFY(outpert);
    QCOMPARE(outpert->params.m, outpert->params.n);
    QVERIFY(qFuzzyCompare(outpert->params.eta, 2.0 / (outpert->params.beta + outpert->params.lambda)));
    QVERIFY(!outpert->params.averaged);
    // Li, Chen, Liu & Carin 2019, §3.1 example: target ε = 0.1, T = 10000, η = 0.1.
    const Preset* sgmcmc = findPreset(presets, QStringLiteral("seed004-mnist-sgld"));
    QVERIFY(sgmcmc);
    QCOMPARE(sgmcmc->targetEpsilon.value_or(0.0), 0.1);
    QCOMPARE(sgmcmc->params.eta, 0.1);
  }

  void roundTrip() {
    for (const Preset& p : dpx::ui::builtinPresets()) {
      const QByteArray bytes = dpx::ui::serializePreset(p);
      const auto back = dpx::ui::parsePreset(bytes, p.id);
      QVERIFY2(back.isOk(), back.isOk() ? "" : back.status().message().c_str());
      QVERIFY2(*back == p, qPrintable(p.id));
      QCOMPARE(dpx::ui::serializePreset(*back), bytes);
    }
    // Every optional field set, doubles that are not short in decimal.
    dpx::core::Params params;
    params.sigma = 1.0 / 3.0;
    params.eta = 0.1 + 0.2;
    params.delta = 1.2345678901234567e-7;
    params.sampling = dpx::core::Sampling::kCyclic;
    params.neighbouring = dpx::core::Neighbouring::kReplaceOne;
    params.schedule = dpx::core::Schedule::kDecreasing;
    params.averaged = true;
    Preset p = dpx::ui::presetFromParams(params, QStringLiteral("Mine: σ = 1/3 ✓"));
    p.description = QStringLiteral("line one\nline \"two\"");
    p.notes = {QStringLiteral("a"), QStringLiteral("b")};
    p.targetEpsilon = 0.7;
    p.trainerData = QStringLiteral("/tmp/data with spaces.csv");
    p.trainerMechanisms = {QStringLiteral("cyclic"), QStringLiteral("outpert")};
    p.trainerEpochs = 2.5;
    p.params.K = *dpx::core::stepsForEpochs(2.5, p.params.n, p.params.m);  // the trainer trains K's epochs
    dpx::core::training::ModelSpec mlp;
    mlp.kind = dpx::core::training::ModelKind::kMlp;
    mlp.hidden = 32;
    mlp.activation = dpx::core::training::Activation::kTanh;
    p.trainerModel = mlp;
    p.params.convexLoss = false;  // the accountants read the model's convexity from the knobs
    const auto back = dpx::ui::parsePreset(dpx::ui::serializePreset(p), QStringLiteral("mine"));
    QVERIFY2(back.isOk(), back.isOk() ? "" : back.status().message().c_str());
    QVERIFY(*back == p);
    // Integers are written as integers.
    QVERIFY(dpx::ui::serializePreset(p).contains("\"n\": 60000,"));
  }

  void presetFromParams() {
    dpx::core::Params params;
    params.n = 1234;
    params.m = 12;
    const Preset p = dpx::ui::presetFromParams(params, QStringLiteral("  My run #2 (test) "));
    QCOMPARE(p.id, QStringLiteral("user-my-run-2-test"));
    QCOMPARE(p.name, QStringLiteral("My run #2 (test)"));
    QVERIFY(dpx::ui::sameParams(p.params, params));
    QVERIFY(!dpx::ui::presetFromParams(params, QString()).name.isEmpty());
    QCOMPARE(dpx::ui::presetFromParams(params, QStringLiteral("σσσ")).id, QStringLiteral("user-preset"));
  }

  void saveAndLoad() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const Preset& p : dpx::ui::builtinPresets()) {
      const QString path = dir.filePath(p.id + QStringLiteral(".json"));
      const dpx::core::Status saved = dpx::ui::savePresetFile(p, path);
      QVERIFY2(saved.isOk(), saved.message().c_str());
      const auto loaded = dpx::ui::loadPresetFile(path);
      QVERIFY2(loaded.isOk(), loaded.isOk() ? "" : loaded.status().message().c_str());
      QVERIFY2(*loaded == p, qPrintable(p.id));
    }
    // Overwriting replaces the whole file.
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    const QString path = dir.filePath(QStringLiteral("over.json"));
    QVERIFY(dpx::ui::savePresetFile(presets.front(), path).isOk());
    QVERIFY(dpx::ui::savePresetFile(presets.back(), path).isOk());
    QVERIFY(*dpx::ui::loadPresetFile(path) == presets.back());
    QCOMPARE(readAll(path), dpx::ui::serializePreset(presets.back()));
    // No temporary files left behind.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), static_cast<qsizetype>(presets.size() + 1));
  }

  void corrupted_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QStringList>("expected");  // substrings of the message
    const QByteArray full = dpx::ui::serializePreset(dpx::ui::builtinPresets().front());
    QTest::newRow("truncated") << full.left(full.size() / 2) << QStringList{"my.json: not JSON: ", " at byte "};
    QTest::newRow("garbage") << QByteArray("{\"format\": dpexplorer}") << QStringList{"my.json: not JSON: "};
    QTest::newRow("empty") << QByteArray() << QStringList{"my.json: ", "empty"};
    QTest::newRow("whitespace") << QByteArray(" \n\t ") << QStringList{"empty"};
    QTest::newRow("array") << QByteArray("[1, 2]") << QStringList{"my.json: the top level must be a JSON object"};
    QTest::newRow("scalar") << QByteArray("3") << QStringList{"my.json: "};
    QTest::newRow("no format") << QByteArray(q("{'version': 1, 'name': 'x', 'params': {}}"))
                               << QStringList{"my.json: format: missing"};
    QTest::newRow("other format") << QByteArray(validJson()).replace("dpexplorer-preset", "dpexplorer-session")
                                  << QStringList{"my.json: format: ", "dpexplorer-session"};
    QTest::newRow("future version") << QByteArray(validJson()).replace("\"version\": 1", "\"version\": 2")
                                    << QStringList{"my.json: version: ", "version 2 is newer"};
    QTest::newRow("future version, new keys")
        << validJson({}, q(" 'colour': 'red',")).replace("\"version\": 1", "\"version\": 7")
        << QStringList{"version 7 is newer"};
    QTest::newRow("version 0") << QByteArray(validJson()).replace("\"version\": 1", "\"version\": 0")
                               << QStringList{"my.json: version: 0"};
    QTest::newRow("version 1.5") << QByteArray(validJson()).replace("\"version\": 1", "\"version\": 1.5")
                                 << QStringList{"my.json: version: 1.5 is not an integer"};
    QTest::newRow("version string") << QByteArray(validJson()).replace("\"version\": 1", "\"version\": \"1\"")
                                    << QStringList{"my.json: version: expected an integer, got a string"};
    QTest::newRow("no version") << QByteArray(validJson()).replace("\"version\": 1,", "")
                                << QStringList{"my.json: version: missing"};
    QTest::newRow("no name") << QByteArray(validJson()).replace("\"name\": \"test\",", "")
                             << QStringList{"my.json: name: missing"};
    QTest::newRow("empty name") << QByteArray(validJson()).replace("\"name\": \"test\"", "\"name\": \" \"")
                                << QStringList{"my.json: name: empty"};
    QTest::newRow("name number") << QByteArray(validJson()).replace("\"name\": \"test\"", "\"name\": 3")
                                 << QStringList{"my.json: name: expected a string, got a number"};
    QTest::newRow("bad id") << validJson({}, q(" 'id': '../etc/passwd',")) << QStringList{"my.json: id: "};
    QTest::newRow("id with a trailing newline") << validJson({}, q(" 'id': 'abc\\n',")) << QStringList{"my.json: id: "};
    QTest::newRow("unknown key") << validJson({}, q(" 'colour': 'red',"))
                                 << QStringList{"my.json: colour: unknown key"};
    QTest::newRow("no params") << QByteArray(q("{'format': 'dpexplorer-preset', 'version': 1, 'name': 'x'}"))
                               << QStringList{"my.json: params: missing"};
    QTest::newRow("params array") << QByteArray(
                                         q("{'format': 'dpexplorer-preset', 'version': 1, 'name': 'x', 'params': []}"))
                                  << QStringList{"my.json: params: expected an object, got an array"};
    QTest::newRow("unknown knob") << validJson(q(", 'sigmaa': 1"))
                                  << QStringList{"my.json: params.sigmaa: unknown key"};
    QTest::newRow("sigma string") << QByteArray(validJson()).replace("\"sigma\": 1.3", "\"sigma\": \"1.3\"")
                                  << QStringList{"my.json: params.sigma: expected a number, got a string"};
    QTest::newRow("sigma null") << QByteArray(validJson()).replace("\"sigma\": 1.3", "\"sigma\": null")
                                << QStringList{"my.json: params.sigma: expected a number, got null"};
    QTest::newRow("sigma negative") << QByteArray(validJson()).replace("\"sigma\": 1.3", "\"sigma\": -1")
                                    << QStringList{"my.json: params.sigma: ", "-1 is out of range", "[0.05, 100]"};
    QTest::newRow("sigma huge") << QByteArray(validJson()).replace("\"sigma\": 1.3", "\"sigma\": 1e999")
                                << QStringList{"my.json: "};
    QTest::newRow("m > n") << QByteArray(validJson()).replace("\"m\": 256", "\"m\": 70000")
                           << QStringList{"my.json: params: ", "m = 70000 exceeds n = 60000"};
    QTest::newRow("n not integer") << QByteArray(validJson()).replace("\"n\": 60000", "\"n\": 60000.5")
                                   << QStringList{"my.json: params.n: ", "60000.5", "integer"};
    QTest::newRow("K not integer") << QByteArray(validJson()).replace("\"epochs\": 15", "\"K\": 10.25")
                                   << QStringList{"my.json: params.K: ", "integer"};
    QTest::newRow("K and epochs") << validJson(q(", 'K': 100")) << QStringList{"my.json: params: both K and epochs"};
    QTest::newRow("epochs zero") << QByteArray(validJson()).replace("\"epochs\": 15", "\"epochs\": 0")
                                 << QStringList{"my.json: params.epochs: "};
    QTest::newRow("epochs too many") << QByteArray(validJson()).replace("\"epochs\": 15", "\"epochs\": 1e9")
                                     << QStringList{"my.json: params.epochs: ", "K"};
    QTest::newRow("bad schedule") << validJson(q(", 'schedule': 'linear'"))
                                  << QStringList{"my.json: params.schedule: unknown schedule \"linear\""};
    QTest::newRow("bad sampling") << validJson(q(", 'sampling': 3"))
                                  << QStringList{"my.json: params.sampling: expected a string, got a number"};
    QTest::newRow("bad neighbouring") << validJson(q(", 'neighbouring': 'swap'"))
                                      << QStringList{"my.json: params.neighbouring: "};
    QTest::newRow("averaged string") << validJson(q(", 'averaged': 'yes'"))
                                     << QStringList{"my.json: params.averaged: expected true or false"};
    QTest::newRow("target zero") << validJson({}, q(" 'target_epsilon': 0,"))
                                 << QStringList{"my.json: target_epsilon: "};
    QTest::newRow("notes not strings") << validJson({}, q(" 'notes': ['a', 2],"))
                                       << QStringList{"my.json: notes[1]: expected a string, got a number"};
    QTest::newRow("trainer unknown key") << validJson({}, q(" 'trainer': {'dataset': 'x'},"))
                                         << QStringList{"my.json: trainer.dataset: unknown key"};
    QTest::newRow("trainer mechanism") << validJson({}, q(" 'trainer': {'mechanisms': ['dp-sgd', 'dp-foo']},"))
                                       << QStringList{"my.json: trainer.mechanisms[1]: unknown mechanism \"dp-foo\""};
    QTest::newRow("trainer duplicate") << validJson({}, q(" 'trainer': {'mechanisms': ['sgd', 'sgd']},"))
                                       << QStringList{"my.json: trainer.mechanisms[1]: "};
    QTest::newRow("trainer epochs") << validJson({}, q(" 'trainer': {'epochs': -3},"))
                                    << QStringList{"my.json: trainer.epochs: -3 is out of range"};
    QTest::newRow("trainer epochs disagree with K") << validJson({}, q(" 'trainer': {'epochs': 20},"))
                                                    << QStringList{
                                                           "my.json: trainer.epochs: 20 epochs disagree with the "
                                                           "params (K = 3516 steps"};
    QTest::newRow("trainer not object") << validJson({}, q(" 'trainer': 'digits',"))
                                        << QStringList{"my.json: trainer: expected an object"};
    QTest::newRow("trainer model") << validJson({}, q(" 'trainer': {'model': 'resnet'},"))
                                   << QStringList{"my.json: trainer.model: unknown model \"resnet\""};
    QTest::newRow("trainer hidden without mlp") << validJson({}, q(" 'trainer': {'model': 'cnn', 'hidden': 8},"))
                                                << QStringList{"my.json: trainer.hidden: only the mlp"};
    QTest::newRow("trainer hidden fraction") << validJson({}, q(" 'trainer': {'model': 'mlp', 'hidden': 2.5},"))
                                             << QStringList{"my.json: trainer.hidden: hidden = 2.5 must be"};
    QTest::newRow("trainer activation") << validJson({}, q(" 'trainer': {'model': 'cnn', 'activation': 'gelu'},"))
                                        << QStringList{"my.json: trainer.activation: unknown activation"};
    QTest::newRow("trainer activation, no model")
        << validJson({}, q(" 'trainer': {'activation': 'relu'},")) << QStringList{"my.json: trainer.model: "};
  }

  // The trainer trains the epochs of K: trainer.epochs stands for K when the params give none.
  void trainerEpochsSetKWhenTheParamsGiveNone() {
    const QByteArray json =
        q("{'format': 'dpexplorer-preset', 'version': 1, 'name': 'test', 'params': {'n': 60000, "
          "'m': 256}, 'trainer': {'data': 'builtin:digits', 'epochs': 15}}");
    const auto preset = dpx::ui::parsePreset(json, QStringLiteral("my.json"));
    QVERIFY2(preset.isOk(), preset.isOk() ? "" : preset.status().message().c_str());
    QCOMPARE(preset->params.K, std::int64_t(3516));  // ⌈15·60000/256⌉
    QCOMPARE(dpx::core::nominalEpochs(preset->params), 15.0);
    // Consistent with the params: accepted as it is.
    QVERIFY(dpx::ui::parsePreset(validJson({}, q(" 'trainer': {'epochs': 15},")), QStringLiteral("my.json")).isOk());
  }

  void corrupted() {
    QFETCH(QByteArray, json);
    QFETCH(QStringList, expected);
    const auto result = dpx::ui::parsePreset(json, QStringLiteral("my.json"));
    QVERIFY2(!result.isOk(), json.constData());
    const QString message = QString::fromStdString(result.status().message());
    for (const QString& part : expected) QVERIFY2(message.contains(part), qPrintable(message + "  ≠  " + part));
    // The same bytes in a file: refused with the path.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QVERIFY(writeAll(path, json));
    const auto loaded = dpx::ui::loadPresetFile(path);
    QVERIFY(!loaded.isOk());
    QVERIFY(QString::fromStdString(loaded.status().message()).startsWith(path + QStringLiteral(": ")));
  }

  void validMinimalFile() {
    const auto result = dpx::ui::parsePreset(validJson(), QStringLiteral("my.json"));
    QVERIFY2(result.isOk(), result.isOk() ? "" : result.status().message().c_str());
    QCOMPARE(result->params.K, qint64(3516));
    // Knobs a file leaves out keep the defaults.
    QCOMPARE(result->params.alpha, dpx::core::Params{}.alpha);
  }

  void tooLargeFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.json"));
    QByteArray big = validJson({}, q(" 'description': '") + QByteArray(2 * 1024 * 1024, 'x') + "\",");
    QVERIFY(writeAll(path, big));
    const auto loaded = dpx::ui::loadPresetFile(path);
    QVERIFY(!loaded.isOk());
    const QString message = QString::fromStdString(loaded.status().message());
    QVERIFY2(message.startsWith(path) && message.contains(QStringLiteral("larger than")), qPrintable(message));
  }

  void ioErrors() {
    QTemporaryDir dir;
    const QString missing = dir.filePath(QStringLiteral("missing.json"));
    auto loaded = dpx::ui::loadPresetFile(missing);
    QVERIFY(!loaded.isOk());
    QVERIFY(loaded.status().code() == dpx::core::StatusCode::kIoError);
    QVERIFY(QString::fromStdString(loaded.status().message()).startsWith(missing));
    loaded = dpx::ui::loadPresetFile(dir.path());
    QVERIFY(!loaded.isOk());
    QVERIFY(QString::fromStdString(loaded.status().message()).startsWith(dir.path()));
  }

  void failedSaveKeepsPreviousFile() {
    QTemporaryDir dir;
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    const QString path = dir.filePath(QStringLiteral("keep.json"));
    QVERIFY(dpx::ui::savePresetFile(presets.front(), path).isOk());
    const QByteArray before = readAll(path);

    // A preset that would not load back is refused before the file is touched.
    Preset invalid = presets.back();
    invalid.params.sigma = -1.0;
    dpx::core::Status s = dpx::ui::savePresetFile(invalid, path);
    QVERIFY(!s.isOk());
    QVERIFY2(
        QString::fromStdString(s.message()).startsWith(path) && QString::fromStdString(s.message()).contains("sigma"),
        s.message().c_str());
    QCOMPARE(readAll(path), before);
    invalid = presets.back();
    invalid.params.m = invalid.params.n + 1;
    QVERIFY(!dpx::ui::savePresetFile(invalid, path).isOk());
    QCOMPARE(readAll(path), before);

    // The target is a directory: refused, the directory and its content untouched.
    const QString target = dir.filePath(QStringLiteral("adir.json"));
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("adir.json")));
    const QString inner = target + QStringLiteral("/inner.txt");
    QVERIFY(writeAll(inner, "inner bytes"));
    s = dpx::ui::savePresetFile(presets.front(), target);
    QVERIFY(!s.isOk());
    QVERIFY(s.code() == dpx::core::StatusCode::kIoError);
    QVERIFY2(QString::fromStdString(s.message()).startsWith(target), s.message().c_str());
    QVERIFY(QFileInfo(target).isDir());
    QCOMPARE(readAll(inner), QByteArray("inner bytes"));

    // The parent is a file.
    const QString underFile = path + QStringLiteral("/sub.json");
    s = dpx::ui::savePresetFile(presets.front(), underFile);
    QVERIFY(!s.isOk());
    QVERIFY2(QString::fromStdString(s.message()).startsWith(underFile), s.message().c_str());
    QCOMPARE(readAll(path), before);

    // Nothing but the files made here (no leftover temporary file).
    QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(), 2);
  }

  void failedSaveInReadOnlyDirectory() {
    QTemporaryDir dir;
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    const QString path = dir.filePath(QStringLiteral("keep.json"));
    QVERIFY(dpx::ui::savePresetFile(presets.front(), path).isOk());
    const QByteArray before = readAll(path);
    QFile::Permissions all = QFileInfo(dir.path()).permissions();
    QVERIFY(QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::ExeOwner));
    const bool writable = writeAll(dir.filePath(QStringLiteral("probe")), "x");
    if (!writable) {
      const dpx::core::Status s = dpx::ui::savePresetFile(presets.back(), path);
      QFile::setPermissions(dir.path(), all);
      QVERIFY(!s.isOk());
      QVERIFY2(QString::fromStdString(s.message()).startsWith(path), s.message().c_str());
      QCOMPARE(readAll(path), before);
    } else {
      QFile::setPermissions(dir.path(), all);
      QSKIP("permissions are not enforced for this user (root): the read-only case cannot be provoked");
    }
  }

  // Fuzz: truncations and byte flips of real presets never crash, and whatever is accepted validates.
  // The fuzz seed corpus and the reproducers kept from fuzzing (tests/data/fuzz/[regressions/]preset),
  // through the harness's checks: refused with a reason, or valid and stable under a round trip.
  void fuzzCorpusReplays() {
    int files = 0;
    for (const QString& dir : {QStringLiteral(DPX_TEST_DATA_DIR "/fuzz/preset"),
                               QStringLiteral(DPX_TEST_DATA_DIR "/fuzz/regressions/preset")}) {
      const QDir d(dir);
      for (const QString& name : d.entryList(QDir::Files, QDir::Name)) {
        QFile file(d.filePath(name));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto r = dpx::ui::parsePreset(file.readAll(), name);
        ++files;
        // A kept regression pins an input that was wrongly accepted: it must stay refused.
        if (dir.endsWith(QLatin1String("regressions/preset"))) QVERIFY2(!r.isOk(), qPrintable(name));
        if (!r.isOk()) {
          QVERIFY2(!r.status().message().empty(), qPrintable(name));
          continue;
        }
        QVERIFY2(r->params.validate().isOk(), qPrintable(name));
        const auto again = dpx::ui::parsePreset(dpx::ui::serializePreset(*r), name);
        QVERIFY2(again.isOk() && *again == *r, qPrintable(name + QStringLiteral(": round trip changed the preset")));
      }
    }
    QVERIFY(files >= 20);
  }

  void neverCrashes() {
    const std::vector<Preset> presets = dpx::ui::builtinPresets();
    const QByteArray bytes = dpx::ui::serializePreset(presets.front());
    for (qsizetype i = 0; i <= bytes.size(); ++i) {
      const auto r = dpx::ui::parsePreset(bytes.left(i), QStringLiteral("cut"));
      if (r.isOk()) QVERIFY(r->params.validate().isOk());
    }
    // Pathological shapes the mutations will not reach.
    for (const QByteArray& odd :
         {QByteArray(100000, '['), QByteArray(100000, '{'), QByteArray("\0\0\0", 3),
          validJson({}, q(" '") + QByteArray(100000, 'k') + q("': 1,")), validJson(q(", 'n': 60000, 'n': 70000"))}) {
      const auto r = dpx::ui::parsePreset(odd, QStringLiteral("odd"));
      if (r.isOk()) QVERIFY(r->params.validate().isOk());
    }
    QRandomGenerator rng(20240601);
    static const char kAlphabet[] = "{}[]\":,0123456789.eE+-truefalsn \\x\xff\n";
    const QByteArray alphabet(kAlphabet, sizeof(kAlphabet));  // with the terminating NUL byte
    int accepted = 0;
    for (int trial = 0; trial < 20000; ++trial) {
      QByteArray mutated = dpx::ui::serializePreset(presets[rng.bounded(static_cast<int>(presets.size()))]);
      const int edits = 1 + static_cast<int>(rng.bounded(4));
      for (int e = 0; e < edits; ++e) {
        const auto pos = static_cast<qsizetype>(rng.bounded(static_cast<quint32>(mutated.size())));
        switch (rng.bounded(3)) {
          case 0:
            mutated[pos] = alphabet[rng.bounded(static_cast<int>(alphabet.size()))];
            break;
          case 1:
            mutated.remove(pos, 1 + rng.bounded(8));
            break;
          default:
            mutated.insert(pos, alphabet[rng.bounded(static_cast<int>(alphabet.size()))]);
            break;
        }
        if (mutated.isEmpty()) break;
      }
      const auto r = dpx::ui::parsePreset(mutated, QStringLiteral("fuzz"));
      if (r.isOk()) {
        ++accepted;
        QVERIFY(r->params.validate().isOk());
        QVERIFY(!r->name.trimmed().isEmpty());
      } else {
        QVERIFY(QString::fromStdString(r.status().message()).startsWith(QStringLiteral("fuzz: ")));
      }
    }
    qInfo("fuzz: %d of 20000 mutated presets were still valid", accepted);
  }
};

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"
