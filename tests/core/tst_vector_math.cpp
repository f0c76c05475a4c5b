// Elementwise functions on arrays (core/numerics/vector_math): within a few ulp of <cmath>'s
// scalar functions over the ranges the discretisations use, the same value for an element
// wherever it sits in an array, and log(1 − eˣ)'s two branches and edges.
#include <QTest>
#include <cmath>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "numerics/special_functions.h"
#include "numerics/vector_math.h"

using namespace dpx::core::numerics;

namespace {

using ArrayFunction = void (*)(std::span<double>);

// Distance in units of the last place of `expected` (0 when both are the same value).
double ulps(double value, double expected) {
  if (value == expected) return 0.0;
  if (std::isnan(value) || std::isnan(expected)) return std::numeric_limits<double>::infinity();
  const double unit =
      std::nextafter(std::fabs(expected), std::numeric_limits<double>::infinity()) - std::fabs(expected);
  return std::fabs(value - expected) / unit;
}

// f over `count` evenly spaced points of [lo, hi], against the scalar function; returns the
// worst distance in ulp.
double worstUlps(ArrayFunction f, const std::function<double(double)>& scalar, double lo, double hi,
                 std::size_t count = 20011) {
  std::vector<double> x(count);
  for (std::size_t i = 0; i < count; ++i)
    x[i] = lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1);
  std::vector<double> y = x;
  f(y);
  double worst = 0.0;
  for (std::size_t i = 0; i < count; ++i) worst = std::max(worst, ulps(y[i], scalar(x[i])));
  return worst;
}

}  // namespace

class TestVectorMath : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void functionsAreWithinAFewUlpOfTheScalarOnes() {
    // glibc documents at most 4 ulp for its vector functions; the scalar ones are within 1 of
    // the correctly rounded value, so 5 between the two.
    struct Case {
      const char* name;
      ArrayFunction f;
      std::function<double(double)> scalar;
      double lo, hi;
    };
    const std::vector<Case> cases = {
        {"exp", expInPlace, [](double v) { return std::exp(v); }, -700.0, 700.0},
        {"exp near 0", expInPlace, [](double v) { return std::exp(v); }, -1e-3, 1e-3},
        {"expm1", expm1InPlace, [](double v) { return std::expm1(v); }, -40.0, 40.0},
        {"expm1 near 0", expm1InPlace, [](double v) { return std::expm1(v); }, -1e-6, 1e-6},
        {"log", logInPlace, [](double v) { return std::log(v); }, 1e-300, 1e300},
        {"log near 1", logInPlace, [](double v) { return std::log(v); }, 0.999, 1.001},
        {"log1p", log1pInPlace, [](double v) { return std::log1p(v); }, -0.999999, 1e6},
        {"log1p near 0", log1pInPlace, [](double v) { return std::log1p(v); }, -1e-8, 1e-8},
        {"erfc", erfcInPlace, [](double v) { return std::erfc(v); }, -6.0, 26.0},
        {"erfc in the tail", erfcInPlace, [](double v) { return std::erfc(v); }, 5.0, 26.0},
        {"sin", sinInPlace, [](double v) { return std::sin(v); }, -7.0, 7.0},
        {"cos", cosInPlace, [](double v) { return std::cos(v); }, -4.7, 0.0},
    };
    for (const Case& c : cases) {
      const double worst = worstUlps(c.f, c.scalar, c.lo, c.hi);
      QVERIFY2(worst <= 5.0,
               qPrintable(QStringLiteral("%1 on [%2, %3]: %4 ulp").arg(c.name).arg(c.lo).arg(c.hi).arg(worst)));
    }
  }

  void normalCdfMatchesTheScalarToTheTails() {
    // Relative accuracy into the lower tail (Φ(−37) ≈ 6e−300), where 1 − Φ would keep nothing.
    const double worst = worstUlps(
        normalCdfInPlace, [](double v) { return normalCdf(v); }, -37.0, 8.0);
    QVERIFY2(worst <= 6.0, qPrintable(QString::number(worst)));
  }

  void log1mExpTakesMaechlersBranchesAndEdges() {
    const double worst = worstUlps(
        log1mExpInPlace, [](double v) { return log1mExp(v); }, -50.0, -1e-12);
    QVERIFY2(worst <= 6.0, qPrintable(QString::number(worst)));
    // Both sides of the switch at −log 2, where either formula alone loses digits on the other.
    std::vector<double> x = {-0.6931471805599453,
                             std::nextafter(-0.6931471805599453, 0.0),
                             -0.69314718,
                             -0.6931472,
                             -1e-300,
                             -745.0,
                             -800.0,
                             0.0,
                             1e-9,
                             std::numeric_limits<double>::quiet_NaN()};
    std::vector<double> y = x;
    log1mExpInPlace(y);
    for (std::size_t i = 0; i + 3 < x.size(); ++i) {
      QVERIFY2(ulps(y[i], log1mExp(x[i])) <= 6.0, qPrintable(QString::number(x[i], 'g', 17)));
    }
    QCOMPARE(y[x.size() - 3], -std::numeric_limits<double>::infinity());  // log(1 − 1)
    QVERIFY(std::isnan(y[x.size() - 2]));                                 // 1 − eˣ < 0
    QVERIFY(std::isnan(y[x.size() - 1]));
  }

  // An element's value depends on it alone: alone, in a full pack, in a padded tail, or among
  // elements of the other branch, it comes out the same.
  void anElementsValueDoesNotDependOnItsPlace() {
    const std::vector<double> probes = {-3.7, -0.5, -1e-3, 0.25, 1.5, 4.2};
    const std::vector<ArrayFunction> functions = {expInPlace, expm1InPlace, erfcInPlace, normalCdfInPlace};
    for (ArrayFunction f : functions) {
      for (double probe : probes) {
        std::vector<double> alone = {probe};
        f(alone);
        for (std::size_t size : {2u, 3u, 4u, 5u, 7u, 8u, 9u, 300u}) {
          for (std::size_t at : {std::size_t{0}, size / 2, size - 1}) {
            std::vector<double> values(size, 0.75);
            values[at] = probe;
            f(values);
            QCOMPARE(values[at], alone[0]);
          }
        }
      }
    }
    // log(1 − eˣ): the branches are gathered from a mixed array and put back in place.
    std::vector<double> mixed;
    for (int i = 0; i < 600; ++i) mixed.push_back(i % 3 == 0 ? -0.1 - 1e-4 * i : -2.0 - 1e-3 * i);
    std::vector<double> together = mixed;
    log1mExpInPlace(together);
    for (std::size_t i = 0; i < mixed.size(); ++i) {
      std::vector<double> alone = {mixed[i]};
      log1mExpInPlace(alone);
      QCOMPARE(together[i], alone[0]);
    }
  }

  // The pair forms are the same functions, lane for lane, whichever lane a value goes in.
  void pairsAreTheScalarFunctionsInEitherLane() {
    for (double a = -6.0; a <= 26.0; a += 0.173) {
      const double b = 0.37 - 0.5 * a;
      const auto e = erfcOfTwo(a, b);
      const auto swapped = erfcOfTwo(b, a);
      QVERIFY2(ulps(e[0], std::erfc(a)) <= 5.0 && ulps(e[1], std::erfc(b)) <= 5.0, qPrintable(QString::number(a)));
      QCOMPARE(e[0], swapped[1]);
      QCOMPARE(e[1], swapped[0]);
      const auto x = expOfTwo(-a * a, a);
      QVERIFY2(ulps(x[0], std::exp(-a * a)) <= 5.0 && ulps(x[1], std::exp(a)) <= 5.0, qPrintable(QString::number(a)));
    }
  }

  void emptyArraysAreLeftAlone() {
    std::vector<double> none;
    expInPlace(none);
    log1mExpInPlace(none);
    normalCdfInPlace(none);
    QVERIFY(none.empty());
  }
};

QTEST_APPLESS_MAIN(TestVectorMath)
#include "tst_vector_math.moc"
