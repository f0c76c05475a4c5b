// dpx check: the findings through the command line (text and JSON agree), the exit status (0
// without an error-severity finding, 1 with one, 2 for invalid input with one line on stderr).
// Runs in-process, like tst_dpx_cli.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "cli_util.h"

namespace {

using Run = dpx::test::CliRun;
Run dpxRun(const QString& line) { return dpx::test::runDpx(line); }

using dpx::test::jsonOf;

// "error:sampling warning:epsilon" from the JSON findings.
QString findingsOf(const QJsonObject& o) {
  QStringList parts;
  for (const QJsonValue& v : o.value(QStringLiteral("findings")).toArray()) {
    const QJsonObject f = v.toObject();
    parts << f.value(QStringLiteral("severity")).toString() + QLatin1Char(':') +
                 f.value(QStringLiteral("knob")).toString();
  }
  return parts.join(QLatin1Char(' '));
}

}  // namespace

class TestDpxCheck : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void findings_data();
  void findings();
  void jsonShape();
  void invalidInput_data();
  void invalidInput();
  void help();
};

void TestDpxCheck::findings_data() {
  QTest::addColumn<QString>("flags");
  QTest::addColumn<QString>("expected");  // severity:knob in order
  QTest::addColumn<int>("code");
  QTest::newRow("defaults") << QString() << QString() << 0;
  QTest::newRow("shuffled batches, Poisson accountants (Chua et al. 2024)")
      << QStringLiteral("--sampling shuffle") << QStringLiteral("error:sampling") << 1;
  QTest::newRow("dp-sgd on fixed-size batches")
      << QStringLiteral("--mechanism dp-sgd --sampling uniform") << QStringLiteral("error:sampling") << 1;
  QTest::newRow("dp-sgld on Poisson batches")
      << QStringLiteral("--mechanism dp-sgld --sampling poisson") << QStringLiteral("error:sampling") << 1;
  QTest::newRow("dp-sgld on its own sampler") << QStringLiteral("--mechanism dp-sgld") << QString() << 0;
  QTest::newRow("replace-one, add/remove analysis")
      << QStringLiteral("--neighbouring replace-one") << QStringLiteral("error:neighbouring") << 1;
  QTest::newRow("realised batch average, Poisson")
      << QStringLiteral("--batch-average realised") << QStringLiteral("error:batch-average") << 1;
  QTest::newRow("realised batch average, fixed-size batches")
      << QStringLiteral("--batch-average realised --accountant sgld") << QString() << 0;
  QTest::newRow("delta above 1/n") << QStringLiteral("--delta 0.001") << QStringLiteral("error:delta") << 1;
  QTest::newRow("epsilon above 50: a warning, exit 0")
      << QStringLiteral("--sigma 0.3 --accountant rdp") << QStringLiteral("warning:epsilon") << 0;
  QTest::newRow("target epsilon above 50")
      << QStringLiteral("--target-epsilon 80") << QStringLiteral("warning:target-epsilon") << 0;
  QTest::newRow("a named estimate: a warning")
      << QStringLiteral("--accountant gdp") << QStringLiteral("warning:accountant") << 0;
  QTest::newRow("a named lower bound: an error")
      << QStringLiteral("--accountant shuffle --sampling shuffle") << QStringLiteral("error:accountant") << 1;
  QTest::newRow("dp-sgd's accountants include an estimate, as alternatives")
      << QStringLiteral("--mechanism dp-sgd") << QString() << 0;
  QTest::newRow("dp-sgd on balls-in-bins batches: random allocation reports it")
      << QStringLiteral("--mechanism dp-sgd --sampling balls-in-bins") << QString() << 0;
  QTest::newRow("errors first") << QStringLiteral("--sigma 0.3 --sampling cyclic --delta 0.01 --accountant rdp")
                                << QStringLiteral("error:sampling error:delta warning:epsilon") << 1;
}

// Text and JSON report the same findings, and the exit status follows their severity.
void TestDpxCheck::findings() {
  QFETCH(QString, flags);
  QFETCH(QString, expected);
  QFETCH(int, code);
  const Run json = dpxRun(QStringLiteral("check --json ") + flags);
  QVERIFY2(json.err.isEmpty(), qPrintable(json.err));
  QCOMPARE(json.code, code);
  QCOMPARE(findingsOf(jsonOf(json)), expected);
  const Run text = dpxRun(QStringLiteral("check ") + flags);
  QCOMPARE(text.code, code);
  const QStringList lines = text.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  if (expected.isEmpty()) {
    QCOMPARE(lines, QStringList{QStringLiteral("no findings")});
    return;
  }
  const QStringList kinds = expected.split(QLatin1Char(' '));
  QCOMPARE(lines.size(), kinds.size());
  for (int i = 0; i < lines.size(); ++i) {
    const QString prefix = QString(kinds[i]).replace(QLatin1Char(':'), QStringLiteral(": ")) + QStringLiteral(": ");
    QVERIFY2(lines[i].startsWith(prefix), qPrintable(lines[i]));
  }
}

void TestDpxCheck::jsonShape() {
  const Run r = dpxRun(QStringLiteral("check --json --sampling shuffle --L 2 --neighbouring replace-one"));
  QCOMPARE(r.code, 1);
  const QJsonObject o = jsonOf(r);
  const QJsonArray findings = o.value(QStringLiteral("findings")).toArray();
  QCOMPARE(findings.size(), 2);
  for (const QJsonValue& v : findings) {
    const QJsonObject f = v.toObject();
    QCOMPARE(f.keys(), (QStringList{QStringLiteral("knob"), QStringLiteral("message"), QStringLiteral("severity")}));
  }
  const QString sampling = findings[0].toObject().value(QStringLiteral("message")).toString();
  QVERIFY2(sampling.contains(QStringLiteral("rdp and pld")) && sampling.contains(QStringLiteral("Chua et al. 2024")),
           qPrintable(sampling));
  // The offending values: 2L with L = 2, and σ/2 of the default σ = 1.1.
  const QString neighbours = findings[1].toObject().value(QStringLiteral("message")).toString();
  QVERIFY2(neighbours.contains(QStringLiteral("2L = 4")) && neighbours.contains(QStringLiteral("σ/2 = 0.55")),
           qPrintable(neighbours));
  QCOMPARE(o.value(QStringLiteral("accountants")).toArray(),
           (QJsonArray{QStringLiteral("rdp"), QStringLiteral("pld")}));
  const QJsonObject empty = jsonOf(dpxRun(QStringLiteral("check --json")));
  QVERIFY(empty.value(QStringLiteral("findings")).isArray());
  QVERIFY(empty.value(QStringLiteral("findings")).toArray().isEmpty());
}

void TestDpxCheck::invalidInput_data() {
  QTest::addColumn<QString>("flags");
  QTest::addColumn<QString>("named");  // what the one line must name
  QTest::newRow("unknown accountant") << QStringLiteral("--accountant rpd") << QStringLiteral("--accountant 'rpd'");
  QTest::newRow("non-private mechanism") << QStringLiteral("--mechanism sgd") << QStringLiteral("--mechanism 'sgd'");
  QTest::newRow("both") << QStringLiteral("--accountant rdp --mechanism dp-sgd")
                        << QStringLiteral("--accountant and --mechanism");
  QTest::newRow("batch average") << QStringLiteral("--batch-average mean") << QStringLiteral("--batch-average 'mean'");
  QTest::newRow("target epsilon") << QStringLiteral("--target-epsilon -1") << QStringLiteral("--target-epsilon");
  QTest::newRow("sampling") << QStringLiteral("--sampling random") << QStringLiteral("--sampling 'random'");
  QTest::newRow("neighbouring") << QStringLiteral("--neighbouring swap") << QStringLiteral("--neighbouring 'swap'");
  QTest::newRow("knob out of range") << QStringLiteral("--sigma 0") << QStringLiteral("--sigma 0");
  QTest::newRow("unknown flag") << QStringLiteral("--variant baseline") << QStringLiteral("--variant");
}

void TestDpxCheck::invalidInput() {
  QFETCH(QString, flags);
  QFETCH(QString, named);
  const Run r = dpxRun(QStringLiteral("check ") + flags);
  QCOMPARE(r.code, 2);
  QVERIFY(r.out.isEmpty());
  QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
  QVERIFY2(r.err.startsWith(QStringLiteral("dpx check: ")) && r.err.contains(named), qPrintable(r.err));
}

void TestDpxCheck::help() {
  const Run r = dpxRun(QStringLiteral("check --help"));
  QCOMPARE(r.code, 0);
  QVERIFY(r.out.contains(QStringLiteral("Usage: dpx check")));
  QVERIFY2(r.out.contains(QStringLiteral("1 at least one error-severity finding")), qPrintable(r.out));
  for (const char* flag : {"--accountant", "--mechanism", "--batch-average", "--target-epsilon", "--sampling",
                           "--neighbouring", "--json"}) {
    QVERIFY2(r.out.contains(QLatin1String(flag)), flag);
  }
  QVERIFY(dpxRun(QStringLiteral("--help")).out.contains(QStringLiteral("  check ")));
}

QTEST_GUILESS_MAIN(TestDpxCheck)
#include "tst_dpx_check.moc"
