// Numbers are printed and read with '.' whatever the locale: the explorer's QApplication sets the
// user's (setlocale(LC_ALL, "")), and in a comma-decimal locale printf's %g wrote "2,5", which
// broke JSON exports and every printed value. Runs under de_DE (built with localedef into a
// temporary directory when the system has no such locale); skipped only when neither is possible.
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/format.h"
#include "io/json_reader.h"
#include "io/json_writer.h"

class TestFormatLocale : public QObject {
  Q_OBJECT

  QTemporaryDir m_locales;

  // A locale whose decimal separator is ',', or false.
  bool commaLocale() {
    for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8"}) {
      if (std::setlocale(LC_ALL, name)) return true;
    }
    const QString localedef = QStandardPaths::findExecutable(QStringLiteral("localedef"));
    if (localedef.isEmpty() || !m_locales.isValid()) return false;
    QProcess p;
    p.start(localedef, {QStringLiteral("-i"), QStringLiteral("de_DE"), QStringLiteral("-f"), QStringLiteral("UTF-8"),
                        m_locales.filePath(QStringLiteral("de_DE.UTF-8"))});
    if (!p.waitForFinished(60000)) return false;
    ::setenv("LOCPATH", m_locales.path().toLocal8Bit().constData(), 1);
    return std::setlocale(LC_ALL, "de_DE.UTF-8") != nullptr;
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!commaLocale()) QSKIP("no comma-decimal locale (none installed, localedef unavailable)");
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", 2.5);
    QCOMPARE(QByteArray(buffer), QByteArray("2,5"));  // the locale is in effect for printf
  }

  void printedWithAPoint() {
    QCOMPARE(dpx::core::formatNumber(2.5), std::string("2.5"));
    QCOMPARE(dpx::core::formatNumber(0.00012345678901234, 6), std::string("0.000123457"));
    QCOMPARE(dpx::core::formatNumber(1e-300), std::string("1e-300"));
    QCOMPARE(dpx::core::roundedUpToPrinted(2.00000000001, 3), 2.01);
    QCOMPARE(dpx::core::roundedDownToPrinted(2.0099999, 3), 2.0);
  }

  void jsonStaysJson() {
    dpx::core::JsonWriter json;
    json.beginObject().field("epsilon", 2.59707952).endObject();
    const std::string text = json.str();
    QVERIFY2(text.find("2.59707952") != std::string::npos, text.c_str());
    const auto parsed = dpx::core::parseJson(text);
    QVERIFY(parsed.isOk());
    QCOMPARE(parsed->find("epsilon")->asNumber(), 2.59707952);
  }

  // Waits are said in the largest two units, rounded where a unit carries over.
  void durationsAsPeopleSayThem() {
    QCOMPARE(dpx::core::formatDuration(0.0), std::string("0 s"));
    QCOMPARE(dpx::core::formatDuration(0.3), std::string("1 s"));
    QCOMPARE(dpx::core::formatDuration(8.4), std::string("8 s"));
    QCOMPARE(dpx::core::formatDuration(59.7), std::string("1 min"));
    QCOMPARE(dpx::core::formatDuration(250.0), std::string("4 min 10 s"));
    QCOMPARE(dpx::core::formatDuration(3599.8), std::string("1 h"));
    QCOMPARE(dpx::core::formatDuration(7500.0), std::string("2 h 5 min"));
    QCOMPARE(dpx::core::formatDuration(-1.0), std::string("0 s"));
  }
  void cleanupTestCase() { std::setlocale(LC_ALL, "C"); }
};

QTEST_GUILESS_MAIN(TestFormatLocale)
#include "tst_format_locale.moc"
