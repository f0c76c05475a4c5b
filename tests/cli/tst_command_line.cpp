// The dpx command-line grammar (CommandLine): every way an option and its value may be written,
// what a mistake reports, and the --help layout (names in a column, descriptions wrapped at 79
// columns counted in characters, hidden options left out, positional arguments last).
#include <QTest>
#include <string>

#include "cli_support.h"
#include "command_line.h"
#include "common/utf8.h"

using dpx::cli::Arguments;
using dpx::cli::CommandLine;
using Mistake = dpx::cli::CommandLine::Mistake;

namespace {

CommandLine knobs() {
  CommandLine c;
  c.addOption("n", "number of records n", "value");
  c.addOption("sigma", "noise multiplier σ", "value");
  c.addOption("json", "machine-readable JSON output");
  c.addOption("variant", "not used", "id", {}, /*hidden=*/true);
  c.addOption("h", "show this help", {}, {"help"});
  return c;
}

}  // namespace

class TestCommandLine : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everySpellingSetsAnOption_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("sigma");
    QTest::newRow("--name value") << QStringList{"--sigma", "2"} << "2";
    QTest::newRow("--name=value") << QStringList{"--sigma=2"} << "2";
    QTest::newRow("-name value") << QStringList{"-sigma", "2"} << "2";
    QTest::newRow("-name=value") << QStringList{"-sigma=2"} << "2";
    QTest::newRow("value starting with a dash") << QStringList{"--sigma", "-1"} << "-1";
    QTest::newRow("value that looks like an option") << QStringList{"--sigma", "--json"} << "--json";
    QTest::newRow("the last one wins") << QStringList{"--sigma", "1", "--sigma=3"} << "3";
    QTest::newRow("empty value") << QStringList{"--sigma="} << "";
    QTest::newRow("'=' inside the value") << QStringList{"--sigma=a=b"} << "a=b";
  }
  void everySpellingSetsAnOption() {
    QFETCH(QStringList, args);
    QFETCH(QString, sigma);
    CommandLine c = knobs();
    Arguments a{"dpx"};
    for (const QString& s : args) a.push_back(s.toStdString());
    QVERIFY(c.parse(a));
    QVERIFY(c.isSet("sigma"));
    QCOMPARE(QString::fromStdString(c.value("sigma")), sigma);
    QVERIFY(c.positionalArguments().empty());
  }

  void oneLetterNamesTakeOneOrTwoDashes() {
    for (const char* spelling : {"-n", "--n"}) {
      CommandLine c = knobs();
      QVERIFY(c.parse({"dpx", spelling, "100"}));
      QCOMPARE(c.value("n"), std::string("100"));
    }
  }

  void aliasesNameOneOption() {
    CommandLine c = knobs();
    QVERIFY(c.parse({"dpx", "--help"}));
    QVERIFY(c.isSet("h"));
    QVERIFY(c.isSet("help"));
    QVERIFY(!c.isSet("json"));
    QVERIFY(!c.isSet("no-such-option"));
    QCOMPARE(c.value("no-such-option"), std::string());
  }

  void positionalArguments() {
    CommandLine c = knobs();
    QVERIFY(c.parse({"dpx", "file.json", "-", "--json", "--", "--sigma", "x"}));
    QVERIFY(c.isSet("json"));
    QVERIFY(!c.isSet("sigma"));
    QCOMPARE(c.positionalArguments(), (std::vector<std::string>{"file.json", "-", "--sigma", "x"}));
  }

  void hiddenOptionsAreAccepted() {
    CommandLine c = knobs();
    QVERIFY(c.parse({"dpx", "--variant", "v"}));
    QCOMPARE(c.value("variant"), std::string("v"));
  }

  void unknownOptionsAreNamedAsTyped() {
    CommandLine c = knobs();
    QVERIFY(!c.parse({"dpx", "-foo", "--bar=1", "--json"}));
    QCOMPARE(c.mistake(), Mistake::kUnknownOptions);
    QCOMPARE(c.unknownOptionNames(), (std::vector<std::string>{"foo", "bar"}));
    QCOMPARE(c.typed("foo"), std::string("-foo"));
    QCOMPARE(c.typed("bar"), std::string("--bar"));
    QCOMPARE(c.typed("never-given"), std::string("--never-given"));
    QVERIFY(c.isSet("json"));  // the rest is still read
  }

  void aMissingValueIsReportedAndEndsTheParse() {
    CommandLine c = knobs();
    QVERIFY(!c.parse({"dpx", "--foo", "-sigma"}));
    QCOMPARE(c.mistake(), Mistake::kMissingValue);  // wins over the unknown --foo
    QCOMPARE(c.mistakenOption(), std::string("-sigma"));
  }

  void aValueGivenToASwitch() {
    CommandLine c = knobs();
    QVERIFY(!c.parse({"dpx", "--json=1", "--sigma", "2"}));
    QCOMPARE(c.mistake(), Mistake::kUnexpectedValue);
    QCOMPARE(c.mistakenOption(), std::string("--json"));
    QCOMPARE(c.value("sigma"), std::string("2"));
  }

  void helpLayout() {
    CommandLine c = knobs();
    c.addOption("sampling", "the run's sampling: poisson | uniform | cyclic | shuffle (default: each accountant's own)",
                "name");
    c.addPositionalArgument("FILE", "a privacy statement");
    c.setDescription("ε at δ");
    const std::string expected =
        "Usage: dpx epsilon [options] FILE\n"
        "ε at δ\n"
        "\n"
        "Options:\n"
        "  -n <value>         number of records n\n"
        "  --sigma <value>    noise multiplier σ\n"
        "  --json             machine-readable JSON output\n"
        "  -h, --help         show this help\n"
        "  --sampling <name>  the run's sampling: poisson | uniform | cyclic | shuffle\n"
        "                     (default: each accountant's own)\n"
        "\n"
        "Arguments:\n"
        "  FILE               a privacy statement\n";
    QCOMPARE(QString::fromStdString(c.helpText("dpx epsilon")), QString::fromStdString(expected));
  }

  void unicodeSpaces() {
    QVERIFY(dpx::core::isUnicodeSpace(U'\u00A0'));
    QVERIFY(dpx::core::isUnicodeSpace(U'\u3000'));
    QVERIFY(!dpx::core::isUnicodeSpace(U'σ'));
    const std::string text = "σ = 1 ≤ 2";
    QCOMPARE(dpx::core::encodeUtf8(dpx::core::decodeUtf8(text)), text);
    QCOMPARE(dpx::core::decodeUtf8(text).size(), std::size_t{9});
    QCOMPARE(dpx::core::decodeUtf8("a\x80"
                                   "b"),
             std::u32string(U"a\uFFFDb"));
    QCOMPARE(dpx::core::decodeUtf8("\xC0\xB1"), std::u32string(U"\uFFFD\uFFFD"));  // overlong '1'
  }

  // Trimming strips well-formed white space only: a stray byte before a number stays, so the
  // number is refused rather than read.
  void trimmingKeepsIllFormedBytes_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("trimmed");
    QTest::newRow("spaces") << QByteArray(" \t1.5\n") << QByteArray("1.5");
    QTest::newRow("no-break and ideographic spaces") << QByteArray(
                                                            "\xC2\xA0"
                                                            "2\xE3\x80\x80")
                                                     << QByteArray("2");
    QTest::newRow("stray continuation byte") << QByteArray(
                                                    "\x80"
                                                    "1")
                                             << QByteArray(
                                                    "\x80"
                                                    "1");
    QTest::newRow("overlong digit") << QByteArray("\xC0\xB1.5") << QByteArray("\xC0\xB1.5");
    QTest::newRow("truncated lead byte") << QByteArray("\xC2 1") << QByteArray("\xC2 1");
    QTest::newRow("all space") << QByteArray("  ") << QByteArray();
  }
  void trimmingKeepsIllFormedBytes() {
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, trimmed);
    const std::string_view out = dpx::core::trimmedUtf8(std::string_view(text.constData(), text.size()));
    QCOMPARE(QByteArray(out.data(), static_cast<int>(out.size())), trimmed);
    const auto number = dpx::cli::parseNumber("sigma", std::string_view(text.constData(), text.size()));
    QCOMPARE(number.isOk(), trimmed == "1.5" || trimmed == "2");
  }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "tst_command_line.moc"
