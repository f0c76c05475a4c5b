// ScatterNet features as Tramèr & Boneh 2021 train on them: the scattering transform (J = 2,
// L = 8) of x/255 and a per-example GroupNorm(27) without affine parameters. Expected values:
// tests/data/scattering_reference.json (scripts/reference/scattering_reference.py, NumPy).
// Privacy by construction: every preprocessing DP Explorer offers is a function of one record
// alone — a record's features are the same whatever the other records, so neighbouring datasets
// differ in that record's features only and no accountant has anything to charge. Per-feature
// standardisation from the private data is not offered (it would have to be charged).
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <atomic>
#include <cmath>
#include <vector>

#include "test_util.h"
#include "training/dataset.h"
#include "training/feature_extraction.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

// The reference's four images as a dataset of 28 × 28 pixels in [0, 1].
Dataset referenceImages(std::vector<std::vector<double>>* groupNorm = nullptr) {
  const QJsonObject root = dpx::test::loadJson(QStringLiteral("scattering_reference.json"));
  const QJsonArray cases = root.value(QStringLiteral("cases")).toArray();
  Dataset d;
  d.name = "reference images";
  d.numClasses = 2;
  d.classNames = {"a", "b"};
  d.features.resize(cases.size(), 784);
  d.image = ImageShape{28, 28, 1.0};
  for (int i = 0; i < cases.size(); ++i) {
    const QJsonObject c = cases.at(i).toObject();
    const QJsonArray pixels = c.value(QStringLiteral("pixels")).toArray();
    for (int p = 0; p < 784; ++p) d.features(i, p) = static_cast<float>(pixels.at(p).toDouble());
    d.labels.push_back(i % 2);
    if (groupNorm) {
      std::vector<double> g;
      for (const QJsonValue& v : c.value(QStringLiteral("group_norm")).toArray()) g.push_back(v.toDouble());
      groupNorm->push_back(std::move(g));
    }
  }
  return d;
}

LoadedData loadDigits(FeatureKind features, std::optional<FeatureScaling> scaling = std::nullopt) {
  LoadOptions options;
  options.features = features;
  options.scaling = scaling;
  auto loaded = loadData("builtin:digits", options);
  if (!loaded) qFatal("%s", loaded.status().message().c_str());
  return std::move(*loaded);
}

}  // namespace

class TestFeatureExtraction : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // GroupNorm'd features against the reference, to 1e−5 absolute (they have unit variance per
  // group; the pixels here are float32, as the loaders store them).
  void groupNormMatchesReference() {
    std::vector<std::vector<double>> expected;
    const Dataset images = referenceImages(&expected);
    const auto features = scatterNetFeatures(images);
    QVERIFY2(features.isOk(), features.status().message().c_str());
    QCOMPARE(features->dimension(), 3969);
    QCOMPARE(features->size(), images.size());
    QVERIFY(!features->image);  // the rows are no longer images
    for (std::int64_t i = 0; i < images.size(); ++i) {
      double worst = 0.0;
      for (int j = 0; j < 3969; ++j) {
        worst = std::max(worst, std::abs(features->features(i, j) - expected[static_cast<std::size_t>(i)][j]));
      }
      QVERIFY2(worst <= 1e-5, qPrintable(QStringLiteral("image %1: %2").arg(i).arg(worst)));
    }
  }

  // Each group of 3 channels × 49 points has mean 0 and variance v/(v + 1e−5) < 1, so every row
  // has ‖x‖ < √3969 = 63 whatever the image: the bound the convex analyses read.
  void groupNormBoundsEveryRow() {
    const auto features = scatterNetFeatures(referenceImages());
    QVERIFY(features.isOk());
    QVERIFY(features->rowNormBound.has_value());
    QCOMPARE(*features->rowNormBound, std::sqrt(3969.0));
    for (std::int64_t i = 0; i < features->size(); ++i) {
      for (int g = 0; g < 27; ++g) {
        double mean = 0.0;
        double squares = 0.0;
        for (int k = 0; k < 147; ++k) {
          const double v = features->features(i, g * 147 + k);
          mean += v;
          squares += v * v;
        }
        QVERIFY(std::abs(mean / 147) < 1e-5);
        QVERIFY(squares / 147 < 1.0 + 1e-6);
      }
      QVERIFY(features->features.row(i).cast<double>().norm() < *features->rowNormBound);
    }
  }

  // Digits are 8 × 8 images with grey levels 0–16: padded to 16 × 16, 81 channels of 2 × 2.
  void digitsAreImagesToo() {
    const LoadedData pixels = loadDigits(FeatureKind::kRaw, FeatureScaling::kNone);
    QVERIFY(pixels.train.image.has_value());
    QCOMPARE(pixels.train.image->maxValue, 16.0);
    const LoadedData features = loadDigits(FeatureKind::kScatterNet);
    QCOMPARE(features.train.dimension(), 81 * 2 * 2);
    QCOMPARE(features.train.size(), pixels.train.size());
    QVERIFY(features.train.labels == pixels.train.labels);
    QVERIFY(features.description.find("ScatterNet") != std::string::npos);
    // Unit-norm rows by default, as for raw features; the a priori bound then is 1.
    QCOMPARE(features.train.rowNormBound.value_or(0.0), 1.0);
    QVERIFY(std::abs(features.train.features.row(0).cast<double>().norm() - 1.0) < 1e-6);
    const LoadedData unscaled = loadDigits(FeatureKind::kScatterNet, FeatureScaling::kNone);
    QCOMPARE(unscaled.train.rowNormBound.value_or(0.0), std::sqrt(324.0));
  }

  void tabularDataHasNoScatterNet() {
    LoadOptions options;
    options.features = FeatureKind::kScatterNet;
    const auto loaded = loadData("builtin:breast-cancer", options);
    QVERIFY(!loaded.isOk());
    QVERIFY2(loaded.status().message().find("no images") != std::string::npos, loaded.status().message().c_str());
  }

  // A record's features (and every scaling) do not depend on the other records: the dataset
  // without record k has exactly the features of the full dataset without row k. So the
  // preprocessing is the same function on neighbouring datasets, and costs no privacy.
  void preprocessingIsPerRecord_data() {
    QTest::addColumn<int>("features");
    QTest::addColumn<int>("scaling");
    for (FeatureKind f : {FeatureKind::kRaw, FeatureKind::kScatterNet}) {
      for (FeatureScaling s : {FeatureScaling::kUnitNorm, FeatureScaling::kClipNorm, FeatureScaling::kNone}) {
        QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(featureKindName(f).data(), featureScalingName(s).data())))
            << static_cast<int>(f) << static_cast<int>(s);
      }
    }
  }
  void preprocessingIsPerRecord() {
    QFETCH(int, features);
    QFETCH(int, scaling);
    const LoadedData pixels = loadDigits(FeatureKind::kRaw, FeatureScaling::kNone);
    LoadedData full;
    full.train = pixels.train;
    LoadedData neighbour;
    neighbour.train = pixels.train;
    const std::int64_t removed = 17;
    const auto n = pixels.train.size();
    neighbour.train.features.resize(n - 1, pixels.train.dimension());
    neighbour.train.labels.clear();
    for (std::int64_t i = 0, j = 0; i < n; ++i) {
      if (i == removed) continue;
      neighbour.train.features.row(j++) = pixels.train.features.row(i);
      neighbour.train.labels.push_back(pixels.train.labels[static_cast<std::size_t>(i)]);
    }
    const auto kind = static_cast<FeatureKind>(features);
    const auto s = static_cast<FeatureScaling>(scaling);
    const auto a = extractFeatures(full, kind, s);
    const auto b = extractFeatures(neighbour, kind, s);
    QVERIFY(a.isOk() && b.isOk());
    for (std::int64_t i = 0, j = 0; i < n; ++i) {
      if (i == removed) continue;
      QVERIFY(a->train.features.row(i) == b->train.features.row(j));
      ++j;
    }
  }

  void cancelStopsTheExtraction() {
    Dataset images = referenceImages();
    std::atomic<bool> cancel{true};
    FeatureExtractionControl control;
    control.cancel = &cancel;
    const auto features = scatterNetFeatures(images, {}, &control);
    QVERIFY(!features.isOk());
    QCOMPARE(features.status().code(), StatusCode::kCancelled);
  }

  void progressReachesOne() {
    std::vector<double> reported;  // the callback runs on workers, one at a time
    FeatureExtractionControl control;
    control.progress = [&](double f) { reported.push_back(f); };
    LoadedData pixels = loadDigits(FeatureKind::kRaw, FeatureScaling::kNone);
    QVERIFY(extractFeatures(std::move(pixels), FeatureKind::kScatterNet, FeatureScaling::kUnitNorm, &control).isOk());
    QVERIFY(!reported.empty());
    QVERIFY(std::is_sorted(reported.begin(), reported.end()));
    QCOMPARE(reported.back(), 1.0);
  }

  void namesParse() {
    QCOMPARE(parseFeatureKind("scatternet"), std::optional(FeatureKind::kScatterNet));
    QCOMPARE(parseFeatureKind("raw"), std::optional(FeatureKind::kRaw));
    QVERIFY(!parseFeatureKind("ScatterNet").has_value());
    QCOMPARE(parseFeatureScaling("clip-norm"), std::optional(FeatureScaling::kClipNorm));
    QVERIFY(!parseFeatureScaling("standardise").has_value());
  }
};

QTEST_APPLESS_MAIN(TestFeatureExtraction)
#include "tst_feature_extraction.moc"
