// The 2-D scattering transform (Oyallon & Mallat 2015) as kymatio 0.2 computes it, J = 2, L = 8 on
// 28 × 28 images: the ScatterNet of Tramèr & Boneh 2021. Expected values:
// tests/data/scattering_reference.json, computed by scripts/reference/scattering_reference.py, an
// independent NumPy implementation that follows kymatio's algorithm literally (every low-pass a
// product of spectra and an average of aliases; the C++ code folds those into separable matrices).
// Properties: the layer energies the filter bank's frame bounds allow, and stability to a
// one-pixel translation (the invariance that makes scattering a good fixed feature extractor).
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/scattering_transform.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::numerics;

namespace {

struct ReferenceCase {
  QString name;
  std::vector<float> pixels;
  std::vector<double> exactPixels;
  std::vector<double> scattering;
};

std::vector<ReferenceCase> referenceCases() {
  const QJsonObject root = dpx::test::loadJson(QStringLiteral("scattering_reference.json"));
  std::vector<ReferenceCase> cases;
  for (const QJsonValue& v : root.value(QStringLiteral("cases")).toArray()) {
    const QJsonObject c = v.toObject();
    ReferenceCase rc;
    rc.name = c.value(QStringLiteral("name")).toString();
    for (const QJsonValue& p : c.value(QStringLiteral("pixels")).toArray()) {
      rc.pixels.push_back(static_cast<float>(p.toDouble()));
      rc.exactPixels.push_back(p.toDouble());
    }
    for (const QJsonValue& s : c.value(QStringLiteral("scattering")).toArray()) rc.scattering.push_back(s.toDouble());
    cases.push_back(std::move(rc));
  }
  return cases;
}

std::shared_ptr<const ScatteringTransform> scatterNet() {
  auto t = ScatteringTransform::create({28, 28, 2, 8});
  if (!t) qFatal("%s", t.status().message().c_str());
  return *t;
}

template <typename Pixel>
std::vector<double> transform(const ScatteringTransform& t, const std::vector<Pixel>& image) {
  ScatteringWorkspace workspace = t.makeWorkspace();
  std::vector<double> out(static_cast<std::size_t>(t.outputSize()));
  t.apply(image, out, workspace);
  return out;
}

double squaredNorm(const std::vector<double>& v, std::size_t begin, std::size_t end) {
  double sum = 0.0;
  for (std::size_t i = begin; i < end; ++i) sum += v[i] * v[i];
  return sum;
}

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum);
}

}  // namespace

class TestScatteringTransform : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void shapeIsTramerBonehs() {
    const auto t = scatterNet();
    QCOMPARE(t->channels(), 81);  // 1 + JL + L²J(J−1)/2
    QCOMPARE(t->outputHeight(), 7);
    QCOMPARE(t->outputWidth(), 7);
    QCOMPARE(t->outputSize(), 3969);
    // Other geometries follow kymatio's padding: 32 × 32 at J = 3 pads to 40 and keeps 4 × 4.
    const auto other = ScatteringTransform::create({32, 32, 3, 4});
    QVERIFY(other.isOk());
    QCOMPARE((*other)->channels(), 1 + 3 * 4 + 16 * 3);
    QCOMPARE((*other)->outputHeight(), 4);
  }

  // Every coefficient against the NumPy reference: to 1e−5 of the largest coefficient of its
  // channel, and to 1e−5 relatively wherever it is at least 1e−3 of that (the rest is the blank
  // background of Fashion-MNIST, coefficients of 1e−14 that are round-off in both).
  void matchesIndependentReference() {
    const auto t = scatterNet();
    const std::vector<ReferenceCase> cases = referenceCases();
    QCOMPARE(cases.size(), std::size_t{4});
    const int points = t->outputHeight() * t->outputWidth();
    for (const ReferenceCase& c : cases) {
      QCOMPARE(c.pixels.size(), std::size_t{784});
      QCOMPARE(c.scattering.size(), std::size_t{3969});
      const std::vector<double> s = transform(*t, c.exactPixels);
      double worstRelative = 0.0;
      for (int channel = 0; channel < t->channels(); ++channel) {
        const auto begin = static_cast<std::size_t>(channel * points);
        double scale = 0.0;
        for (int i = 0; i < points; ++i) scale = std::max(scale, std::abs(c.scattering[begin + i]));
        QVERIFY2(scale > 0.0, qPrintable(c.name));
        for (int i = 0; i < points; ++i) {
          const double expected = c.scattering[begin + i];
          const double error = std::abs(s[begin + i] - expected);
          QVERIFY2(error <= 1e-5 * scale, qPrintable(QStringLiteral("%1 channel %2 point %3: %4 vs %5")
                                                         .arg(c.name)
                                                         .arg(channel)
                                                         .arg(i)
                                                         .arg(s[begin + i], 0, 'g', 12)
                                                         .arg(expected, 0, 'g', 12)));
          if (std::abs(expected) >= 1e-3 * scale) worstRelative = std::max(worstRelative, error / std::abs(expected));
        }
      }
      QVERIFY2(worstRelative <= 1e-5, qPrintable(QStringLiteral("%1: %2").arg(c.name).arg(worstRelative)));
    }
  }

  void filterBankFrameBoundsMatchReference() {
    const auto [low, high] = scatterNet()->littlewoodPaleyRange();
    const QJsonArray expected = dpx::test::loadJson(QStringLiteral("scattering_reference.json"))
                                    .value(QStringLiteral("littlewood_paley"))
                                    .toArray();
    QVERIFY(dpx::test::relativelyClose(low, expected.at(0).toDouble(), 1e-9));
    QVERIFY(dpx::test::relativelyClose(high, expected.at(1).toDouble(), 1e-9));
  }

  // Each order keeps less energy than the one before (the cascade's energy decays), and the
  // three orders together keep most of the image's: 4^J·‖Sx‖² (the coefficients are sampled every
  // 2^J pixels) between 85 % and 100 % of ‖x‖² on every reference image. The bank's frame bounds
  // on the padded grid, [7.8e−4, 1.81], allow more either way; these images' spectra sit where the
  // Littlewood–Paley sum is close to 1.
  void energyIsKeptAcrossOrders() {
    const auto t = scatterNet();
    const std::size_t points = 49;
    for (const ReferenceCase& c : referenceCases()) {
      const std::vector<double> s = transform(*t, c.pixels);
      double imageEnergy = 0.0;
      for (float p : c.pixels) imageEnergy += static_cast<double>(p) * p;
      const double order0 = 16.0 * squaredNorm(s, 0, points);
      const double order1 = 16.0 * squaredNorm(s, points, 17 * points);
      const double order2 = 16.0 * squaredNorm(s, 17 * points, 81 * points);
      QVERIFY2(order0 > order1 && order1 > order2 && order2 > 0.0, qPrintable(c.name));
      const double kept = (order0 + order1 + order2) / imageEnergy;
      QVERIFY2(kept >= 0.85 && kept <= 1.0, qPrintable(QStringLiteral("%1: %2").arg(c.name).arg(kept)));
    }
  }

  // A one-pixel horizontal translation moves the pixels by 30–70 % of their norm on these images
  // and the coefficients by less than half as much, relatively: averaging over 2^J = 4 pixels makes
  // the representation nearly invariant to small shifts (Mallat 2012, Thm 2.10).
  void stableToAOnePixelShift() {
    const auto t = scatterNet();
    for (const ReferenceCase& c : referenceCases()) {
      std::vector<float> shifted = c.pixels;
      for (int r = 0; r < 28; ++r) {
        for (int col = 27; col > 0; --col)
          shifted[static_cast<std::size_t>(r * 28 + col)] = c.pixels[static_cast<std::size_t>(r * 28 + col - 1)];
      }
      double pixelChange = 0.0;
      double pixelNorm = 0.0;
      for (std::size_t i = 0; i < shifted.size(); ++i) {
        pixelChange += (shifted[i] - c.pixels[i]) * (shifted[i] - c.pixels[i]);
        pixelNorm += c.pixels[i] * c.pixels[i];
      }
      const double pixelRatio = std::sqrt(pixelChange / pixelNorm);
      const std::vector<double> s = transform(*t, c.pixels);
      const std::vector<double> moved = transform(*t, shifted);
      const double scatteringRatio = distance(s, moved) / std::sqrt(squaredNorm(s, 0, s.size()));
      QVERIFY2(pixelRatio > 0.3, qPrintable(c.name));
      QVERIFY2(scatteringRatio < 0.5 * pixelRatio,
               qPrintable(QStringLiteral("%1: %2 vs %3").arg(c.name).arg(scatteringRatio).arg(pixelRatio)));
    }
  }

  void refusesImpossibleGeometries() {
    for (const ScatteringGeometry& g : {ScatteringGeometry{28, 28, 0, 8}, ScatteringGeometry{28, 28, 2, 0},
                                        ScatteringGeometry{3, 28, 2, 8}, ScatteringGeometry{28, 28, 5, 8}}) {
      const auto t = ScatteringTransform::create(g);
      QVERIFY(!t.isOk());
      QVERIFY(t.status().message().find("scattering") != std::string::npos);
    }
  }

  // One transform serves every thread; each thread has its own workspace.
  void workspacesAreIndependent() {
    const auto t = scatterNet();
    const std::vector<ReferenceCase> cases = referenceCases();
    ScatteringWorkspace a = t->makeWorkspace();
    ScatteringWorkspace b = t->makeWorkspace();
    std::vector<double> first(3969), second(3969), again(3969);
    t->apply(cases[0].pixels, first, a);
    t->apply(cases[1].pixels, second, b);
    t->apply(cases[0].pixels, again, b);
    QVERIFY(first == again);
    QVERIFY(first != second);
  }
};

QTEST_APPLESS_MAIN(TestScatteringTransform)
#include "tst_scattering_transform.moc"
