// dpx reproduce (published experiments beside the measured accuracy), and the training flags of
// the linear-probe work: --features, --optimizer, --momentum. The full experiments take tens of
// seconds (bench/, `dpx reproduce`); here the non-private baseline, which is the contract the
// trainer's defaults must meet: Xiao, Rasul & Vollgraf 2017's 84.2 % for logistic regression on
// Fashion-MNIST's pixels, with `dpx train`'s defaults and 30 epochs.
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <algorithm>

#include "cli_util.h"
#include "test_util.h"
#include "training/dataset.h"

using dpx::test::jsonOf;
using dpx::test::runDpx;

namespace {

bool fashionMnistInstalled() {
  const auto sources = dpx::core::training::builtinSources();
  return std::find(sources.begin(), sources.end(), "builtin:fashion-mnist") != sources.end();
}

}  // namespace

class TestDpxReproduce : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void listNamesEveryExperiment() {
    const auto r = runDpx(QStringLiteral("reproduce --list"));
    QCOMPARE(r.code, 0);
    for (const char* id :
         {"tramer-boneh-2021-fmnist-scatter-linear", "ryffel-2022-table1-fmnist", "fmnist-logistic-baseline",
          "tramer-boneh-2021-fmnist-cnn", "tramer-boneh-2021-fmnist-scatter-cnn", "bu-2020-fig4-fmnist"}) {
      QVERIFY2(r.out.contains(QLatin1String(id)), id);
    }
    QVERIFY(r.out.contains(QStringLiteral("Tramèr & Boneh 2021")));
    QVERIFY(!r.out.contains(QStringLiteral("seed 00")));
  }

  void badInputExitsTwo_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("no name") << "reproduce --seeds 2"
                             << "name an experiment";
    QTest::newRow("unknown") << "reproduce tramer-boneh-2022"
                             << "fmnist-logistic-baseline";
    QTest::newRow("seeds 0") << "reproduce fmnist-logistic-baseline --seeds 0"
                             << "[1, 20]";
    QTest::newRow("seeds 21") << "reproduce fmnist-logistic-baseline --seeds 21"
                              << "[1, 20]";
  }
  void badInputExitsTwo() {
    QFETCH(QString, line);
    QFETCH(QString, mustMention);
    const auto r = runDpx(line);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
  }

  // The contract: published beside measured (mean, min, max over seeds), ε, δ, σ, accountant.
  void baselineMeetsThePublishedAccuracy() {
    if (!fashionMnistInstalled()) QSKIP("dataset-fashion-mnist is not installed (scripts/test.sh installs it)");
    if (dpx::test::kSanitizedBuild) {
      QSKIP(
          "an accuracy claim, checked by the plain build (its 15 epochs of Fashion-MNIST take a minute under "
          "sanitizers; trainDefaultsReachTheNonPrivateOptimum runs the same trainer there)");
    }
    const auto r = runDpx(QStringLiteral("reproduce fmnist-logistic-baseline --seeds 1 --json --quiet"));
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("experiment")).toString(), QStringLiteral("fmnist-logistic-baseline"));
    const QJsonArray rows = o.value(QStringLiteral("rows")).toArray();
    QCOMPARE(rows.size(), 1);
    const QJsonObject row = rows.at(0).toObject();
    for (const char* key : {"name", "published", "measured_mean", "measured_min", "measured_max", "epsilon", "delta",
                            "sigma", "accountant"}) {
      QVERIFY2(row.contains(QLatin1String(key)), key);
    }
    QCOMPARE(row.value(QStringLiteral("published")).toDouble(), 0.842);
    QVERIFY(row.value(QStringLiteral("epsilon")).isNull());  // non-private
    const double accuracy = row.value(QStringLiteral("measured_mean")).toDouble();
    qInfo("fmnist-logistic-baseline: %.4f (published 0.842)", accuracy);
    QVERIFY(accuracy >= 0.84);
    QCOMPARE(row.value(QStringLiteral("measured_min")).toDouble(), accuracy);
  }

  // The same through `dpx train`: its defaults (m = 64, η = 0.5, λ = 1e−6, momentum) and 30 epochs
  // (under sanitizers one epoch, which already learns most of it: the same code, a 30th of the time).
  void trainDefaultsReachTheNonPrivateOptimum() {
    if (!fashionMnistInstalled()) QSKIP("dataset-fashion-mnist is not installed (scripts/test.sh installs it)");
    const int epochs = dpx::test::kSanitizedBuild ? 1 : 30;
    const auto r = runDpx(
        QStringLiteral("train --data builtin:fashion-mnist --mechanism sgd --epochs %1 --json --quiet").arg(epochs));
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    const double accuracy = o.value(QStringLiteral("test_accuracy")).toDouble();
    qInfo("dpx train, %d epoch(s): %.4f", epochs, accuracy);
    QVERIFY(accuracy >= (dpx::test::kSanitizedBuild ? 0.78 : 0.84));
  }

  void trainingFlags() {
    // ScatterNet on the embedded 8 × 8 digits: 81 channels of 2 × 2.
    auto r = runDpx(QStringLiteral(
        "train --data builtin:digits --features scatternet --mechanism dp-sgd --optimizer adam --eta 0.01 "
        "--epochs 2 --target-epsilon 2 --json --quiet"));
    QCOMPARE(r.code, 0);
    QJsonObject o = jsonOf(r);
    QVERIFY(o.value(QStringLiteral("data")).toString().contains(QStringLiteral("ScatterNet")));
    QVERIFY(o.value(QStringLiteral("epsilon")).toDouble() <= 2.0);
    // Momentum with the Langevin analysis: trained, and the violation reported.
    r =
        runDpx(QStringLiteral("train --data builtin:digits --mechanism dp-sgld --optimizer momentum --epochs 1 "
                              "--json --quiet"));
    QCOMPARE(r.code, 0);
    o = jsonOf(r);
    bool flagged = false;
    for (const QJsonValue& v : o.value(QStringLiteral("violations")).toArray()) {
      flagged = flagged || v.toString().startsWith(QStringLiteral("optimizer:"));
    }
    QVERIFY(flagged);
    // Refusals name the flag and what it accepts.
    r = runDpx(QStringLiteral("train --data builtin:breast-cancer --features scatternet --mechanism sgd"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("no images")), qPrintable(r.err));
    r = runDpx(QStringLiteral("train --data builtin:digits --features pixels"));
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains(QStringLiteral("raw or scatternet")));
    r = runDpx(QStringLiteral("train --data builtin:digits --optimizer nesterov"));
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains(QStringLiteral("sgd, momentum or adam")));
    r = runDpx(QStringLiteral("train --data builtin:digits --momentum 1"));
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains(QStringLiteral("[0, 1)")));
  }

  // --model: a network trains with dp-sgd and reports its layers; the convex analyses, η = auto and
  // a model that cannot read the data are refused with the reason; the JSON leaves out softmax
  // regression's constants for a network.
  void modelFlags() {
    auto r =
        runDpx(QStringLiteral("train --data builtin:digits --model mlp --hidden 24 --mechanism dp-sgd --sigma 1 "
                              "--epochs 2 --json --quiet"));
    QCOMPARE(r.code, 0);
    QJsonObject o = jsonOf(r);
    const QJsonObject model = o.value(QStringLiteral("model")).toObject();
    QCOMPARE(model.value(QStringLiteral("kind")).toString(), QStringLiteral("mlp"));
    QCOMPARE(model.value(QStringLiteral("parameters")).toInt(), 64 * 24 + 24 + 24 * 10 + 10);
    QCOMPARE(model.value(QStringLiteral("activation")).toString(), QStringLiteral("relu"));
    QVERIFY(!model.value(QStringLiteral("layers")).toArray().isEmpty());
    QVERIFY(!o.contains(QStringLiteral("lipschitz_from_data")));
    QVERIFY(!o.contains(QStringLiteral("beta")));
    bool noted = false;
    for (const QJsonValue& v : o.value(QStringLiteral("notes")).toArray()) {
      noted = noted || v.toString().contains(QStringLiteral("not convex"));
    }
    QVERIFY(noted);
    r = runDpx(QStringLiteral("train --data builtin:digits --mechanism dp-sgd --epochs 1 --json --quiet"));
    QCOMPARE(r.code, 0);
    QVERIFY(jsonOf(r).contains(QStringLiteral("lipschitz_from_data")));

    for (const char* mechanism : {"dp-sgld", "cyclic", "outpert"}) {
      r = runDpx(QStringLiteral("train --data builtin:digits --model mlp --mechanism %1 --epochs 1")
                     .arg(QLatin1String(mechanism)));
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.contains(QStringLiteral("not convex")) || r.err.contains(QStringLiteral("convex")),
               qPrintable(r.err));
      QVERIFY2(r.err.contains(QStringLiteral("dp-sgd")), qPrintable(r.err));
    }
    r = runDpx(QStringLiteral("train --data builtin:breast-cancer --model cnn --mechanism dp-sgd"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("tabular")), qPrintable(r.err));
    r = runDpx(QStringLiteral("train --data builtin:digits --model cnn --mechanism dp-sgd"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("too small")), qPrintable(r.err));
    r = runDpx(QStringLiteral("train --data builtin:digits --model mlp --mechanism dp-sgd --eta auto"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("β")), qPrintable(r.err));
    r = runDpx(QStringLiteral("train --data builtin:digits --model resnet"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("scatter-cnn")), qPrintable(r.err));
  }

  // dpx frontier --vary models: each recipe's series, a model that cannot read the data reported
  // in its series (the CNN on 8 × 8 digits); flags of the other modes refused.
  void frontierOfModels() {
    auto r =
        runDpx(QStringLiteral("frontier --vary models --models cnn --data builtin:digits --epsilons 2 --seeds 1 "
                              "--json --quiet"));
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("vary")).toString(), QStringLiteral("models"));
    const QJsonArray models = o.value(QStringLiteral("models")).toArray();
    QCOMPARE(models.size(), 1);
    QVERIFY(models.at(0).toObject().value(QStringLiteral("error")).toString().contains(QStringLiteral("too small")));
    r = runDpx(QStringLiteral("frontier --vary models --model cnn --data builtin:digits --epsilons 2"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--models")), qPrintable(r.err));
    r = runDpx(QStringLiteral("frontier --vary models --models mlp --data builtin:digits --epsilons 2"));
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("linear-pixels")), qPrintable(r.err));
    r = runDpx(QStringLiteral("frontier --models cnn --data builtin:digits --epsilons 2"));
    QCOMPARE(r.code, 2);
  }

  // The optimiser reaches the accountants through the knobs: the analyses that follow plain steps
  // are not applicable with momentum; composition accountants are.
  void epsilonWithAnOptimizer() {
    const auto r =
        runDpx(QStringLiteral("epsilon --accountant all --optimizer momentum --json") + dpx::test::quickRun());
    QCOMPARE(r.code, 0);
    const QJsonArray all = QJsonDocument::fromJson(r.out.toUtf8()).array();
    QVERIFY(!all.isEmpty());
    for (const QJsonValue& v : all) {
      const QJsonObject a = v.toObject();
      const QString id = a.value(QStringLiteral("accountant")).toString();
      bool flagged = false;
      for (const QJsonValue& w : a.value(QStringLiteral("violations")).toArray()) {
        flagged = flagged || w.toString().startsWith(QStringLiteral("optimizer:"));
      }
      const bool followsIterates = id == QLatin1String("sgld") || id == QLatin1String("cyclic") ||
                                   id == QLatin1String("outpert") || id == QLatin1String("sgmcmc") ||
                                   id == QLatin1String("heuristic-last-iterate");
      QVERIFY2(flagged == followsIterates, qPrintable(id));
    }
  }
};

QTEST_GUILESS_MAIN(TestDpxReproduce)
#include "tst_dpx_reproduce.moc"
