// Shared helpers for the Qt Test suites: relative-tolerance comparison, reference data.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QTest>
#include <cmath>
#include <string>

namespace dpx::test {

// A sanitizer build (scripts/sanitize.sh) runs numeric code many times slower by design: heavy
// tests check the same properties on fewer, coarser cases there, and nothing is timed.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// Knobs that make every accountant quick, for tests that check what a command reports (keys, flags,
// round trips) rather than its numbers: t = 10 steps per epoch (random allocation's log-grid sums
// dominate a sanitized run at the defaults' t = 235: 17 s of ASan against 1 s) and a 20 % bracket.
// Empty in a plain build, where such tests run on the defaults.
inline QStringList quickRunFlags() {
  if (!kSanitizedBuild) return {};
  return {QStringLiteral("--n"), QStringLiteral("2560"), QStringLiteral("--accuracy"), QStringLiteral("0.2")};
}
// The same as text to append to a command line (" --n 2560 --accuracy 0.2", or empty).
inline QString quickRun() {
  const QStringList flags = quickRunFlags();
  return flags.isEmpty() ? QString() : QLatin1Char(' ') + flags.join(QLatin1Char(' '));
}

inline bool relativelyClose(double actual, double expected, double relTol, double absTol = 0.0) {
  return std::fabs(actual - expected) <= std::max(absTol, relTol * std::fabs(expected));
}

inline QByteArray describe(double actual, double expected, double relTol) {
  return QByteArray("actual ") + QByteArray::number(actual, 'g', 12) + " expected " +
         QByteArray::number(expected, 'g', 12) + " (rel. tolerance " + QByteArray::number(relTol, 'g', 3) +
         ", rel. error " + QByteArray::number(std::fabs(actual - expected) / std::fabs(expected), 'g', 3) + ")";
}

// Rounds to the number of decimals printed in a paper's table.
inline double roundTo(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

inline QJsonObject loadJson(const QString& relativePath) {
  QFile file(QStringLiteral(DPX_TEST_DATA_DIR) + QLatin1Char('/') + relativePath);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

}  // namespace dpx::test

// QVERIFY2 with a readable message for a relative tolerance.
#define DPX_COMPARE_REL(actual, expected, relTol)                                    \
  do {                                                                               \
    const double dpxActual_ = (actual);                                              \
    const double dpxExpected_ = (expected);                                          \
    QVERIFY2(::dpx::test::relativelyClose(dpxActual_, dpxExpected_, (relTol)),       \
             ::dpx::test::describe(dpxActual_, dpxExpected_, (relTol)).constData()); \
  } while (false)
