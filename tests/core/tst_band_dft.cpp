// The chirp-z band of a long DFT (core/numerics/band_dft.h): against the direct sum in long
// double with exactly reduced angles, and against the full real transform of the same size, on
// bands at 0, in the middle, across n/2 and at the end of the circle; the coarse magnitudes the
// survivors are bounded from.
#include <QTest>
#include <cmath>
#include <complex>
#include <cstddef>
#include <numbers>
#include <random>
#include <vector>

#include "numerics/band_dft.h"
#include "numerics/real_fft.h"

using namespace dpx::core::numerics;

namespace {

// Σ_j x_j e^{−2πijk/n} in long double, the angle reduced in integers (j·k mod n).
std::complex<long double> directSum(const std::vector<double>& x, std::size_t n, std::size_t k) {
  std::complex<long double> sum = 0.0L;
  const long double turn = 2.0L * std::numbers::pi_v<long double> / static_cast<long double>(n);
  for (std::size_t j = 0; j < x.size(); ++j) {
    const auto reduced = static_cast<long double>((static_cast<unsigned long long>(j) * k) % n);
    sum += static_cast<long double>(x[j]) * std::polar(1.0L, -turn * reduced);
  }
  return sum;
}

// Masses like a PLD step's: a bump of width `width` and tails many orders smaller.
std::vector<double> stepLike(std::size_t length, double width, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> x(length);
  double total = 0.0;
  const double centre = 0.3 * static_cast<double>(length);
  for (std::size_t j = 0; j < length; ++j) {
    const double z = (static_cast<double>(j) - centre) / width;
    x[j] = u(rng) * std::exp(-0.5 * z * z) + 1e-30 * u(rng);
    total += x[j];
  }
  for (double& v : x) v /= total;
  return x;
}

}  // namespace

class TestBandDft : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matchesTheDirectSum_data() {
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("width");
    QTest::newRow("band at 0, a long run's shape") << 5754 << 102400 << 0 << 140;
    QTest::newRow("one frequency") << 300 << 1000 << 0 << 1;
    QTest::newRow("band in the middle") << 1000 << 65536 << 20000 << 64;
    QTest::newRow("band across n/2") << 777 << 30000 << 14950 << 101;
    QTest::newRow("band at the end of the circle") << 512 << 9000 << 8900 << 100;
    QTest::newRow("n below the length") << 600 << 500 << 3 << 40;
    QTest::newRow("odd n, whole circle") << 50 << 97 << 0 << 97;
  }
  void matchesTheDirectSum() {
    QFETCH(int, length);
    QFETCH(int, n);
    QFETCH(int, first);
    QFETCH(int, width);
    const std::vector<double> x = stepLike(static_cast<std::size_t>(length), 3.0 + length / 300.0, 7);
    std::vector<std::complex<double>> band(static_cast<std::size_t>(width));
    bandDft(x, static_cast<std::size_t>(n), static_cast<std::size_t>(first), band);
    // An FFT's round-off, ~1e−16·log₂N·Σ|x| (Σ|x| = 1): measured ≤ 8e−16 on these rows.
    double worst = 0.0;
    for (int t = 0; t < width; ++t) {
      const std::complex<long double> exact =
          directSum(x, static_cast<std::size_t>(n), static_cast<std::size_t>(first + t));
      const std::complex<double> e(static_cast<double>(exact.real()), static_cast<double>(exact.imag()));
      worst = std::max(worst, std::abs(band[static_cast<std::size_t>(t)] - e));
    }
    QVERIFY2(worst <= 3e-15, qPrintable(QString::number(worst)));
  }

  void matchesTheFullRealTransform() {
    // The frequencies a long run keeps, from the step alone and from the transform of the whole
    // window, agree to the round-off of both.
    const std::size_t n = 102400;
    const std::vector<double> x = stepLike(5000, 3.0, 11);
    const RealTransform transform(n, 1);
    std::vector<double> real(n, 0.0);
    std::copy(x.begin(), x.end(), real.begin());
    std::vector<std::complex<double>> full(n / 2 + 1);
    transform.forward(real.data(), full.data());
    for (std::size_t first : {std::size_t{0}, std::size_t{25000}, n / 2 - 99}) {
      std::vector<std::complex<double>> band(100);
      bandDft(x, n, first, band);
      for (std::size_t t = 0; t < band.size(); ++t) {
        QVERIFY2(std::abs(band[t] - full[first + t]) <= 2e-15, qPrintable(QString::number(first + t)));
      }
    }
  }

  void anyLargerSizeGivesTheSameBand() {
    // The composition runs the chirp-z on the coarse grid's size when the band fits beside the
    // step: a longer circle changes the round-off only.
    const std::vector<double> x = stepLike(3000, 4.0, 5);
    std::vector<std::complex<double>> least(200), larger(200);
    bandDft(x, 81920, 0, least);
    bandDft(x, 81920, 0, larger, kissFftSize(bandDftSize(3000, 200) + 700));
    for (std::size_t t = 0; t < least.size(); ++t) QVERIFY(std::abs(least[t] - larger[t]) <= 2e-15);
  }

  void magnitudesAreTheCoarseSpectrum() {
    // |z| on the coarse grid the survivors are bounded from: the full real transform's, at a size
    // not a power of two and with the sequence shorter than it.
    const std::size_t size = 6480;
    const std::vector<double> x = stepLike(5754, 3.0, 3);
    std::vector<double> magnitude(size / 2 + 1);
    dftMagnitudes(x, size, magnitude);
    const RealTransform transform(size, 1);
    std::vector<double> real(size, 0.0);
    std::copy(x.begin(), x.end(), real.begin());
    std::vector<std::complex<double>> full(size / 2 + 1);
    transform.forward(real.data(), full.data());
    for (std::size_t r = 0; r < magnitude.size(); ++r) {
      QVERIFY2(std::fabs(magnitude[r] - std::abs(full[r])) <= 2e-15, qPrintable(QString::number(r)));
    }
  }

  void runsOnKissfftSizes() {
    // The transforms are kissfft's: 2^a 3^b 5^c, a multiple of 4, and at least length + band − 1.
    for (std::size_t length : {std::size_t{1}, std::size_t{7}, std::size_t{5754}, std::size_t{100001}}) {
      for (std::size_t band : {std::size_t{1}, std::size_t{130}, std::size_t{4000}}) {
        std::size_t size = bandDftSize(length, band);
        QVERIFY(size >= length + band - 1);
        QCOMPARE(size % 4, std::size_t{0});
        for (std::size_t p : {2, 3, 5}) {
          while (size % p == 0) size /= p;
        }
        QCOMPARE(size, std::size_t{1});
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestBandDft)
#include "tst_band_dft.moc"
