// The networks (cnn, scatter-cnn, mlp) and their exact per-example clipping: the architectures'
// parameter counts (Tramèr & Boneh 2021: 26 010 and 33 066), the batched per-example gradients
// against a loop of one-example backward passes and against finite differences of the loss, the
// norms the clipping reads, bit-identical sums for any thread count, and the refusals: a model
// that cannot read the data, and a convex analysis asked to train a network.
#include <QTest>
#include <cmath>
#include <numeric>
#include <random>

#include "accounting/registry.h"
#include "common/parallel.h"
#include "synthetic_data.h"
#include "training/network.h"
#include "training/rng.h"
#include "training/trainer.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

// n images of h × w pixels in [0, 1]: class c brightens a band of rows, plus noise.
Dataset images(std::int64_t n, int h, int w, int classes, std::uint64_t seed) {
  Dataset d;
  d.name = "images";
  d.numClasses = classes;
  for (int c = 0; c < classes; ++c) d.classNames.push_back(std::to_string(c));
  d.features.resize(n, h * w);
  d.image = ImageShape{h, w, 1.0};
  Xoshiro256 engine(seed);
  for (std::int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % classes);
    d.labels.push_back(c);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const double band = (y * classes / h == c) ? 0.6 : 0.1;
        d.features(i, y * w + x) = static_cast<float>(band + 0.3 * engine.uniformOpen());
      }
    }
  }
  return d;
}

// A ScatterNet-like feature map: 81 channels of 7 × 7, channel-major.
Dataset featureMaps(std::int64_t n, int classes, std::uint64_t seed) {
  Dataset d = dpx::test::clusters(n, 81 * 49, classes, seed, FeatureScaling::kNone);
  d.featureMap = Dataset::FeatureMapShape{81, 7, 7};
  return d;
}

ModelSpec specOf(ModelKind kind, int hidden = 16) {
  ModelSpec spec;
  spec.kind = kind;
  spec.hidden = hidden;
  return spec;
}

Network network(const ModelSpec& spec, const Dataset& data, std::uint64_t seed = 3) {
  auto input = networkInput(spec, data);
  if (!input) qFatal("%s", input.status().message().c_str());
  auto n = Network::create(spec, *input, data.numClasses);
  if (!n) qFatal("%s", n.status().message().c_str());
  n->initialise(seed);
  return std::move(*n);
}

std::vector<std::int64_t> allRows(std::int64_t n) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

// The gradient of record i alone (no clipping): one example through the same code.
Eigen::VectorXf oneExample(const Network& net, const Dataset& data, std::int64_t i) {
  Eigen::VectorXf g;
  const std::int64_t row[] = {i};
  net.clippedGradientSum(data, row, std::numeric_limits<double>::infinity(), g);
  return g;
}

double lossSum(const Network& net, const Dataset& data) {
  const std::vector<double> losses = net.perExampleLosses(data);
  return std::accumulate(losses.begin(), losses.end(), 0.0);
}

}  // namespace

class TestNetwork : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void architecturesHaveThePublishedSizes() {
    const Dataset mnist = images(4, 28, 28, 10, 1);
    QCOMPARE(network(specOf(ModelKind::kCnn), mnist).parameterCount(), Eigen::Index{26010});
    const Dataset scatter = featureMaps(4, 10, 1);
    QCOMPARE(network(specOf(ModelKind::kScatterCnn), scatter).parameterCount(), Eigen::Index{33066});
    const Dataset adult = dpx::test::clusters(4, 30, 2, 1);
    QCOMPARE(network(specOf(ModelKind::kMlp, 16), adult).parameterCount(), Eigen::Index{30 * 16 + 16 + 16 * 2 + 2});
    QCOMPARE(network(specOf(ModelKind::kMlp, 16), adult).spec().effectiveActivation(), Activation::kRelu);
    QCOMPARE(network(specOf(ModelKind::kCnn), mnist).spec().effectiveActivation(), Activation::kTanh);
  }

  // The batched clipped sum equals the sum of the one-example gradients, each clipped; the norms
  // are those gradients' norms. Clip 0.5 is active for most records.
  void clippedSumEqualsTheLoopOfOneExampleBackwardPasses_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("activation");
    QTest::newRow("cnn tanh") << int(ModelKind::kCnn) << int(Activation::kTanh);
    QTest::newRow("cnn relu") << int(ModelKind::kCnn) << int(Activation::kRelu);
    QTest::newRow("scatter-cnn") << int(ModelKind::kScatterCnn) << int(Activation::kTanh);
    QTest::newRow("mlp") << int(ModelKind::kMlp) << int(Activation::kRelu);
  }
  void clippedSumEqualsTheLoopOfOneExampleBackwardPasses() {
    QFETCH(int, kind);
    QFETCH(int, activation);
    const auto k = static_cast<ModelKind>(kind);
    const Dataset data = k == ModelKind::kCnn          ? images(37, 28, 28, 10, 5)
                         : k == ModelKind::kScatterCnn ? featureMaps(37, 10, 5)
                                                       : dpx::test::clusters(37, 30, 3, 5, FeatureScaling::kNone);
    ModelSpec spec{k, 16, static_cast<Activation>(activation)};
    const Network net = network(spec, data);
    const double clip = 0.5;
    Eigen::VectorXf batched;
    std::vector<double> norms;
    const std::vector<std::int64_t> rows = allRows(data.size());
    const GradientStats stats = net.clippedGradientSum(data, rows, clip, batched, &norms);
    Eigen::VectorXd looped = Eigen::VectorXd::Zero(net.parameterCount());
    std::int64_t clipped = 0;
    for (std::int64_t i = 0; i < data.size(); ++i) {
      const Eigen::VectorXd g = oneExample(net, data, i).cast<double>();
      const double norm = g.norm();
      QVERIFY2(std::abs(norms[static_cast<std::size_t>(i)] - norm) <= 1e-4 * norm, qPrintable(QString::number(i)));
      if (norm > clip) ++clipped;
      looped += g * std::min(1.0, clip / norm);
    }
    QVERIFY(clipped > 10);
    QCOMPARE(stats.clipped, clipped);
    const double error = (batched.cast<double>() - looped).norm();
    QVERIFY2(error <= 1e-4 * looped.norm(), qPrintable(QStringLiteral("%1 of %2").arg(error).arg(looped.norm())));
  }

  // A one-example gradient against central differences of its loss along random directions
  // (float32 losses: steps of 1e−2 keep rounding and truncation below 1 % of the derivative).
  void gradientsMatchFiniteDifferences_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("cnn") << int(ModelKind::kCnn);
    QTest::newRow("scatter-cnn") << int(ModelKind::kScatterCnn);
    QTest::newRow("mlp") << int(ModelKind::kMlp);
  }
  void gradientsMatchFiniteDifferences() {
    QFETCH(int, kind);
    const auto k = static_cast<ModelKind>(kind);
    Dataset data = k == ModelKind::kCnn          ? images(3, 28, 28, 10, 9)
                   : k == ModelKind::kScatterCnn ? featureMaps(3, 10, 9)
                                                 : dpx::test::clusters(3, 30, 3, 9, FeatureScaling::kNone);
    Network net = network({k, 16, Activation::kTanh}, data, 11);
    Eigen::VectorXf g;
    net.clippedGradientSum(data, allRows(data.size()), std::numeric_limits<double>::infinity(), g);
    Xoshiro256 engine(17);
    const Eigen::VectorXf theta = net.parameters();
    for (int direction = 0; direction < 4; ++direction) {
      std::vector<double> v(static_cast<std::size_t>(theta.size()));
      fillGaussian(v, 1.0, engine);
      Eigen::VectorXf u = Eigen::Map<Eigen::VectorXd>(v.data(), theta.size()).cast<float>();
      u /= u.norm();
      const double h = 1e-2;
      net.parameters() = theta + static_cast<float>(h) * u;
      const double up = lossSum(net, data);
      net.parameters() = theta - static_cast<float>(h) * u;
      const double down = lossSum(net, data);
      net.parameters() = theta;
      const double numeric = (up - down) / (2 * h);
      const double analytic = g.cast<double>().dot(u.cast<double>());
      QVERIFY2(std::abs(numeric - analytic) <= 1e-2 * std::max(0.05, std::abs(analytic)),
               qPrintable(QStringLiteral("direction %1: %2 vs %3").arg(direction).arg(numeric).arg(analytic)));
    }
  }

  void sumIsTheSameForAnyThreadCount() {
    const Dataset data = images(70, 28, 28, 10, 21);
    const Network net = network(specOf(ModelKind::kCnn), data);
    const std::vector<std::int64_t> rows = allRows(data.size());
    Eigen::VectorXf one;
    Eigen::VectorXf two;
    inArena(1, [&] { net.clippedGradientSum(data, rows, 0.1, one); });
    inArena(2, [&] { net.clippedGradientSum(data, rows, 0.1, two); });
    QVERIFY(one == two);
  }

  void modelsThatCannotReadTheData() {
    const Dataset tabular = dpx::test::clusters(10, 30, 2, 1);
    auto cnn = networkInput(specOf(ModelKind::kCnn), tabular);
    QVERIFY(!cnn.isOk());
    QVERIFY2(cnn.status().message().find("tabular") != std::string::npos, cnn.status().message().c_str());
    auto scatter = networkInput(specOf(ModelKind::kScatterCnn), images(2, 28, 28, 2, 1));
    QVERIFY(!scatter.isOk());
    QVERIFY(scatter.status().message().find("--features scatternet") != std::string::npos);
    // 8 × 8 digits are too small for the MNIST CNN's second convolution.
    const Dataset digits = images(2, 8, 8, 2, 1);
    auto small = Network::create(specOf(ModelKind::kCnn), *networkInput(specOf(ModelKind::kCnn), digits), 2);
    QVERIFY(!small.isOk());
    QVERIFY2(small.status().message().find("too small") != std::string::npos, small.status().message().c_str());
  }

  // Only the mechanisms whose accountants compose may train a network; the convex analyses say
  // why not, and the accountants that need convexity flag a non-convex run.
  void convexAnalysesRefuseNetworks() {
    auto split = std::make_shared<TrainTestSplit>();
    split->train = images(60, 28, 28, 3, 31);
    split->test = images(20, 28, 28, 3, 32);
    TrainerConfig c;
    c.model = specOf(ModelKind::kCnn);
    c.knobs.m = 20;
    c.knobs.L = 0.1;
    c.knobs.sigma = 1.0;
    c.epochs = 1;
    for (Mechanism m : {Mechanism::kDpSgld, Mechanism::kCyclic, Mechanism::kOutpert}) {
      c.mechanism = m;
      auto t = Trainer::create(c, split);
      QVERIFY(!t.isOk());
      QVERIFY2(t.status().message().find("convex") != std::string::npos, t.status().message().c_str());
      QVERIFY(t.status().message().find("dp-sgd") != std::string::npos);
    }
    c.mechanism = Mechanism::kDpSgd;
    auto t = Trainer::create(c, split);
    QVERIFY2(t.isOk(), t.status().message().c_str());
    QVERIFY(!(*t)->resolved().accountantParams.convexLoss);
    QVERIFY((*t)->resolved().violations.empty());
    auto r = (*t)->run();
    QVERIFY(r.isOk());
    QVERIFY(r->epsilon.has_value());
    QVERIFY(r->model.network() != nullptr);
    Params p = (*t)->resolved().accountantParams;
    for (const char* id : {"sgld", "cyclic", "outpert"}) {
      bool flagged = false;
      for (const auto& v : accounting::findAccountant(id)->check(p))
        flagged = flagged || v.assumption == "non-convex model";
      QVERIFY2(flagged, id);
    }
    for (const char* id : {"rdp", "pld", "gdp"}) {
      for (const auto& v : accounting::findAccountant(id)->check(p)) QVERIFY2(v.assumption != "non-convex model", id);
    }
  }
};

QTEST_GUILESS_MAIN(TestNetwork)
#include "tst_network.moc"
