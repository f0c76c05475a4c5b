// The real transforms of core/numerics/real_fft.h that the PLD composition runs on: sizes of the
// forms each library handles, the exact spectrum of a shifted impulse and a round trip at kissfft
// and FFTW sizes, and the shipped FFTW wisdom — accepted by this FFTW, and covering every size
// it claims, planned exactly as the composition plans them (a change of buffer layout or flags
// would silently fall back to FFTW_ESTIMATE, 1.3–1.6× slower), and kissfft's transforms on plans
// shared by threads computing what Eigen's kissfft computes.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstring>
#include <numbers>
#include <random>
#include <thread>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "numerics/real_fft.h"

using namespace dpx::core::numerics;

namespace {

// n = 2^a 3^b 5^c.
bool smooth(std::size_t n) {
  for (std::size_t p : {2, 3, 5}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

bool powerOfTwo(std::size_t n) { return n > 0 && (n & (n - 1)) == 0; }

// Forward and inverse of `x` on a transform of size n; returns the largest error of the spectrum
// of an impulse at position `at` (e^{−2πi·k·at/n}) and of the round trip, relative to 1 and to
// max|x|.
struct Errors {
  double impulse = 0.0;
  double roundTrip = 0.0;
};

Errors transformErrors(std::size_t n) {
  const RealTransform transform(n, 1);
  const std::size_t half = n / 2 + 1;
  RealBuffer real = realBuffer(transform.inPlace() ? 2 * half : n);
  ComplexBuffer own = transform.inPlace() ? nullptr : complexBuffer(half);
  std::complex<double>* spectrum =
      transform.inPlace() ? reinterpret_cast<std::complex<double>*>(real.get()) : own.get();
  Errors e;
  const std::size_t at = n / 3 + 1;
  std::fill(real.get(), real.get() + n, 0.0);
  real[at] = 1.0;
  transform.forward(real.get(), spectrum);
  for (std::size_t k = 0; k < half; k += std::max<std::size_t>(1, half / 4096)) {
    const double angle = -2.0 * std::numbers::pi * static_cast<double>((k * at) % n) / static_cast<double>(n);
    e.impulse = std::max(e.impulse, std::abs(spectrum[k] - std::polar(1.0, angle)));
  }
  std::mt19937_64 rng(n);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> x(n);
  for (double& v : x) v = u(rng);
  std::copy(x.begin(), x.end(), real.get());
  transform.forward(real.get(), spectrum);
  transform.inverse(spectrum, real.get());
  for (std::size_t i = 0; i < n; ++i)
    e.roundTrip = std::max(e.roundTrip, std::fabs(real[i] / static_cast<double>(n) - x[i]));
  return e;
}

}  // namespace

class TestRealFft : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sizesHoldThePointsInEachLibrarysForm() {
    std::size_t previous = 0;
    for (std::size_t points = 1; points < (std::size_t{1} << 23); points = points * 5 / 4 + 1) {
      const std::size_t n = realFftSize(points);
      QVERIFY2(n >= points, qPrintable(QString::number(points)));
      QVERIFY(n >= previous);
      previous = n;
      if (n < kFftwMinimumSize) {
        QVERIFY2(n % 4 == 0 && smooth(n), qPrintable(QString::number(n)));
      } else {
        QVERIFY2(powerOfTwo(n) || (n % 3 == 0 && powerOfTwo(n / 3)) || (n % 5 == 0 && powerOfTwo(n / 5)),
                 qPrintable(QString::number(n)));
        QVERIFY2(3.0 * static_cast<double>(n) <= 4.0 * static_cast<double>(points),
                 qPrintable(QString::number(points)));
      }
    }
  }

  void impulseAndRoundTripAreExact() {
    for (std::size_t n : {std::size_t{12}, std::size_t{6400}, std::size_t{102400}, kFftwMinimumSize,
                          std::size_t{393216}, std::size_t{1} << 20}) {
      const Errors e = transformErrors(n);
      QVERIFY2(e.impulse < 1e-12, qPrintable(QStringLiteral("n = %1: impulse error %2").arg(n).arg(e.impulse)));
      QVERIFY2(e.roundTrip < 1e-14, qPrintable(QStringLiteral("n = %1: round trip %2").arg(n).arg(e.roundTrip)));
    }
  }

  // kissfft's sizes run on plans shared by every thread (the inverse one the forward plan
  // conjugated): forward and inverse compute what Eigen's own kissfft computes (to its round-off:
  // compiled in another file, GCC contracts other products into FMAs), and two threads
  // transforming at once on one plan get the same bits.
  void kissTransformsAreEigensOnOneSharedPlan() {
    for (std::size_t n : {std::size_t{12}, std::size_t{6400}, std::size_t{32400}, std::size_t{102400}}) {
      QVERIFY(n < kFftwMinimumSize);  // kissfft's sizes
      const std::size_t half = n / 2 + 1;
      std::mt19937_64 rng(n);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> signal(n);
      for (double& v : signal) v = u(rng);
      std::vector<std::complex<double>> spectrum(half);
      for (auto& z : spectrum) z = {u(rng), u(rng)};
      spectrum.front().imag(0.0);
      spectrum.back().imag(0.0);

      Eigen::FFT<double> eigen;
      eigen.SetFlag(Eigen::FFT<double>::HalfSpectrum);
      eigen.SetFlag(Eigen::FFT<double>::Unscaled);
      std::vector<std::complex<double>> eigenForward(half);
      eigen.fwd(eigenForward.data(), signal.data(), static_cast<Eigen::Index>(n));
      std::vector<double> eigenInverse(n);
      eigen.inv(eigenInverse.data(), spectrum.data(), static_cast<Eigen::Index>(n));

      const RealTransform transform(n, 1);
      QVERIFY(!transform.inPlace());
      struct Result {
        std::vector<std::complex<double>> forward;
        std::vector<double> inverse;
      } results[2];
      auto run = [&](int t) {
        results[t].forward.resize(half);
        transform.forward(signal.data(), results[t].forward.data());
        std::vector<std::complex<double>> in = spectrum;  // the inverse overwrites its input
        results[t].inverse.resize(n);
        transform.inverse(in.data(), results[t].inverse.data());
      };
      std::thread other(run, 1);
      run(0);
      other.join();
      double forwardError = 0.0;
      for (std::size_t k = 0; k < half; ++k)
        forwardError = std::max(forwardError, std::abs(results[0].forward[k] - eigenForward[k]));
      double inverseError = 0.0;
      for (std::size_t i = 0; i < n; ++i)
        inverseError = std::max(inverseError, std::fabs(results[0].inverse[i] - eigenInverse[i]));
      QVERIFY2(forwardError < 1e-12 && inverseError < 1e-12,
               qPrintable(QStringLiteral("n = %1: %2, %3").arg(n).arg(forwardError).arg(inverseError)));
      QVERIFY2(
          std::memcmp(results[0].forward.data(), results[1].forward.data(), half * sizeof(std::complex<double>)) == 0 &&
              std::memcmp(results[0].inverse.data(), results[1].inverse.data(), n * sizeof(double)) == 0,
          qPrintable(QString::number(n)));
    }
  }

  void shippedWisdomIsAccepted() { QVERIFY(fftwWisdomLoaded()); }

  void shippedWisdomCoversEverySizeItIsMeasuredFor() {
    // Its plans use FFTW's AVX codelets: a CPU without AVX plans every size with FFTW_ESTIMATE.
    if (!__builtin_cpu_supports("avx")) QSKIP("the shipped wisdom's plans need AVX");
    for (std::size_t n = fftwSize(kFftwMinimumSize); n <= (std::size_t{1} << 22); n = fftwSize(n + 1)) {
      for (int threads : {1, 2}) {
        if (threads == 2 && n < (std::size_t{1} << 18)) continue;
        const RealTransform transform(n, threads);
        RealBuffer buffer = realBuffer(2 * (n / 2 + 1));
        std::fill(buffer.get(), buffer.get() + 2 * (n / 2 + 1), 0.0);
        transform.inverse(reinterpret_cast<std::complex<double>*>(buffer.get()), buffer.get());  // plans it
        QVERIFY2(
            transform.fromWisdom(),
            qPrintable(QStringLiteral("n = %1 on %2 thread(s): not in resources/fftw/wisdom").arg(n).arg(threads)));
      }
    }
    // Beyond the measured sizes, and below FFTW's: no wisdom, and still a transform.
    QVERIFY(!RealTransform(std::size_t{1} << 23, 1).fromWisdom());
    QVERIFY(!RealTransform(6400, 1).fromWisdom());
  }
};

QTEST_GUILESS_MAIN(TestRealFft)
#include "tst_real_fft.moc"
