// dpx statement and dpx verify: every shipped preset's statement verifies on this build; a
// tampered value is named (exit 1); a malformed file, a missing field or a knob out of range is
// refused with the reason (exit 2). The presets' params become knob flags the way the GUI's
// preset reader maps them (ui/presets.cpp): knobs as they are, "epochs" as --epochs, the choices,
// and the trainer's epochs standing for K when the params give no steps.
#include <sys/stat.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>

#include "accounting/registry.h"
#include "cli_util.h"
#include "test_util.h"

namespace {

using dpx::test::CliRun;
using dpx::test::runDpx;

QString describe(const CliRun& r) {
  return QStringLiteral("exit %1\nstdout: %2\nstderr: %3").arg(r.code).arg(r.out.left(2000), r.err);
}

QString number(double v) { return QString::number(v, 'g', 17); }

// A preset's "params" (and trainer.epochs) as dpx knob flags.
QStringList presetFlags(const QJsonObject& preset) {
  const QJsonObject params = preset.value(QStringLiteral("params")).toObject();
  QStringList flags;
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (it.key() == QLatin1String("averaged")) {
      if (it.value().toBool()) flags << QStringLiteral("--averaged");
    } else if (it.value().isString()) {
      flags << QStringLiteral("--") + it.key() << it.value().toString();
    } else {
      flags << QStringLiteral("--") + it.key() << number(it.value().toDouble());
    }
  }
  const QJsonValue trainerEpochs = preset.value(QStringLiteral("trainer")).toObject().value(QStringLiteral("epochs"));
  if (!params.contains(QStringLiteral("K")) && !params.contains(QStringLiteral("epochs")) && trainerEpochs.isDouble()) {
    flags << QStringLiteral("--epochs") << number(trainerEpochs.toDouble());
  }
  return flags;
}

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

bool writeBytes(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

bool writeJson(const QString& path, const QJsonObject& o) { return writeBytes(path, QJsonDocument(o).toJson()); }

}  // namespace

class TestDpxStatement : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  QString m_default;  // the default run's statement, written once

  QString path(const QString& name) const { return m_dir.filePath(name); }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_default = path(QStringLiteral("default.json"));
    const CliRun r = runDpx(
        QStringList{QStringLiteral("statement"), QStringLiteral("--json"), QStringLiteral("--output"), m_default} +
        dpx::test::quickRunFlags());
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
  }

  void helpListsBothCommands() {
    const CliRun r = runDpx({QStringLiteral("--help")});
    QVERIFY(r.out.contains(QStringLiteral("statement")));
    QVERIFY(r.out.contains(QStringLiteral("verify")));
  }

  void everyPresetRoundTrips_data() {
    QTest::addColumn<QString>("preset");
    const QDir dir(QStringLiteral(DPX_SOURCE_DIR "/resources/presets"));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 15);
    // Under sanitizers every fourth preset: the same code paths, each statement's random
    // allocation at the preset's own t being most of a sanitized run's time.
    const int stride = dpx::test::kSanitizedBuild ? 4 : 1;
    for (qsizetype i = 0; i < files.size(); i += stride) QTest::newRow(qPrintable(files[i])) << dir.filePath(files[i]);
  }

  // statement → file → verify → exit 0, for every shipped preset.
  void everyPresetRoundTrips() {
    QFETCH(QString, preset);
    QElapsedTimer timer;
    timer.start();
    const QString file = path(QFileInfo(preset).fileName());
    QStringList args{QStringLiteral("statement"), QStringLiteral("--json"), QStringLiteral("--output"), file};
    args << presetFlags(readJson(preset));
    const CliRun made = runDpx(args);
    QVERIFY2(made.code == 0, qPrintable(args.join(QLatin1Char(' ')) + "\n" + describe(made)));
    const CliRun checked = runDpx({QStringLiteral("verify"), file});
    QVERIFY2(checked.code == 0, qPrintable(describe(checked)));
    QVERIFY2(checked.out.startsWith(QStringLiteral("verified: ")), qPrintable(checked.out));
    QVERIFY(checked.out.contains(QStringLiteral(" values match")));
    // Every registry accountant is in it.
    const QJsonArray accountants = readJson(file).value(QStringLiteral("accountants")).toArray();
    QCOMPARE(accountants.size(), static_cast<qsizetype>(dpx::core::accounting::allAccountants().size()));
    qInfo("%s: %lld ms", qPrintable(QFileInfo(preset).fileName()), static_cast<long long>(timer.elapsed()));
  }

  // The default statement with the first computed accountant's ε replaced by change(ε), written to
  // `name`; the accountant's id, or empty when none was computed.
  QString withChangedEpsilon(const QString& name, const std::function<double(double)>& change) {
    QJsonObject o = readJson(m_default);
    QJsonArray accountants = o.value(QStringLiteral("accountants")).toArray();
    QString id;
    for (qsizetype i = 0; i < accountants.size() && id.isEmpty(); ++i) {
      QJsonObject a = accountants.at(i).toObject();
      if (a.value(QStringLiteral("status")).toString() != QLatin1String("computed")) continue;
      id = a.value(QStringLiteral("id")).toString();
      a.insert(QStringLiteral("epsilon"), change(a.value(QStringLiteral("epsilon")).toDouble()));
      accountants.replace(i, a);
    }
    o.insert(QStringLiteral("accountants"), accountants);
    return writeJson(path(name), o) ? id : QString();
  }

  void tamperedNumberIsNamed() {
    // A ten-thousandth: far beyond the last bits another CPU moves (every tolerance is ≤ 1e−6).
    const QString id = withChangedEpsilon(QStringLiteral("tampered.json"), [](double e) { return e * (1.0 + 1e-4); });
    QVERIFY(!id.isEmpty());
    const CliRun r = runDpx({QStringLiteral("verify"), path(QStringLiteral("tampered.json"))});
    QVERIFY2(r.code == 1, qPrintable(describe(r)));
    QVERIFY2(r.out.contains(QStringLiteral("accountants[%1].epsilon: statement ").arg(id)), qPrintable(r.out));
    QVERIFY(r.out.contains(QStringLiteral("1 value differs")));
  }

  // One ulp is what another CPU's arithmetic moves: accepted, and shown as such.
  void lastBitsMatchWithinTheRecordedTolerance() {
    const QString id =
        withChangedEpsilon(QStringLiteral("last-bit.json"), [](double e) { return std::nextafter(e, 1e300); });
    QVERIFY(!id.isEmpty());
    const CliRun r = runDpx({QStringLiteral("verify"), path(QStringLiteral("last-bit.json"))});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QVERIFY2(r.out.contains(QStringLiteral("≈ accountants[%1].epsilon: statement ").arg(id)), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("(1 of them in their last bits")), qPrintable(r.out));
  }

  // A statement cannot widen its own tolerance: the recorded one is compared exactly, and the
  // comparison uses this build's.
  void widenedToleranceIsNamed() {
    QJsonObject o = readJson(m_default);
    QJsonArray accountants = o.value(QStringLiteral("accountants")).toArray();
    QJsonObject a = accountants.at(0).toObject();
    const QString id = a.value(QStringLiteral("id")).toString();
    a.insert(QStringLiteral("tolerance"), QJsonObject{{QStringLiteral("relative"), 0.5}});
    if (a.value(QStringLiteral("status")).toString() == QLatin1String("computed")) {
      a.insert(QStringLiteral("epsilon"), a.value(QStringLiteral("epsilon")).toDouble() * 1.25);
    }
    accountants.replace(0, a);
    o.insert(QStringLiteral("accountants"), accountants);
    const QString file = path(QStringLiteral("wide.json"));
    QVERIFY(writeJson(file, o));
    const CliRun r = runDpx({QStringLiteral("verify"), file});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains(QStringLiteral("accountants[%1].tolerance.relative: statement 0.5").arg(id)),
             qPrintable(r.out));
  }

  void tamperedTextAndMissingAccountantAreNamed() {
    QJsonObject o = readJson(m_default);
    QJsonArray accountants = o.value(QStringLiteral("accountants")).toArray();
    const QString last = accountants.last().toObject().value(QStringLiteral("id")).toString();
    accountants.removeLast();
    o.insert(QStringLiteral("accountants"), accountants);
    QJsonObject handoff = o.value(QStringLiteral("handoff")).toObject();
    handoff.insert(QStringLiteral("opacus"), QStringLiteral("print('hello')"));
    o.insert(QStringLiteral("handoff"), handoff);
    const QString file = path(QStringLiteral("tampered-text.json"));
    QVERIFY(writeJson(file, o));
    const CliRun r = runDpx({QStringLiteral("verify"), file});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains(QStringLiteral("accountants[%1]: missing from the statement").arg(last)),
             qPrintable(r.out));
    QVERIFY(r.out.contains(QStringLiteral("handoff.opacus: statement \"print('hello')\" recomputed")));
  }

  // Another DP Explorer version wrote it: compared all the same, with a note.
  void otherVersionIsComparedWithANote() {
    QJsonObject o = readJson(m_default);
    o.insert(QStringLiteral("dpexplorer_version"), QStringLiteral("0.0.1-test"));
    const QString file = path(QStringLiteral("old.json"));
    QVERIFY(writeJson(file, o));
    const CliRun r = runDpx({QStringLiteral("verify"), file});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QVERIFY(r.out.contains(QStringLiteral("note: the statement was written by DP Explorer 0.0.1-test")));
    QVERIFY(r.out.contains(QStringLiteral("verified: ")));
  }

  // A pipe (like /dev/null or /dev/stdout) is written into, not replaced by a renamed file.
  void writesIntoAPipe() {
    const QString fifo = path(QStringLiteral("statement.fifo"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    auto received = std::make_shared<QByteArray>();  // shared: the reader may outlive a failed test
    std::thread reader([fifo, received] {
      QFile f(fifo);
      if (f.open(QIODevice::ReadOnly)) *received = f.readAll();
    });
    const CliRun r =
        runDpx(QStringList{QStringLiteral("statement"), QStringLiteral("--json"), QStringLiteral("--output"), fifo} +
               dpx::test::quickRunFlags());
    struct stat info {};
    const bool stillAPipe = ::stat(QFile::encodeName(fifo).constData(), &info) == 0 && S_ISFIFO(info.st_mode);
    if (!stillAPipe) {
      reader.detach();  // it may wait forever on the replaced pipe
      QFAIL("the pipe was replaced by a file");
    }
    reader.join();
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QFile stored(m_default);
    QVERIFY(stored.open(QIODevice::ReadOnly));
    QCOMPARE(*received, stored.readAll());
  }

  void malformedFileGivesTheOffset() {
    QFile f(m_default);
    QVERIFY(f.open(QIODevice::ReadOnly));
    // Cut inside the statement: the reader must say the text ended, and where.
    const QByteArray bytes = f.readAll().left(700);
    QCOMPARE(bytes.size(), 700);
    const QString file = path(QStringLiteral("truncated.json"));
    QVERIFY(writeBytes(file, bytes));
    const CliRun r = runDpx({QStringLiteral("verify"), file});
    QVERIFY2(r.code == 2, qPrintable(describe(r)));
    QVERIFY2(r.err.contains(file + QStringLiteral(": not JSON: expected ")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("but the text ends at byte 700 (line ")), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
  }

  void unreadableStatementsExitTwo_data() {
    QTest::addColumn<QString>("section");  // "" for the top level
    QTest::addColumn<QString>("key");
    QTest::addColumn<QJsonValue>("value");  // Undefined: remove the key
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("sigma out of range")
        << "run"
        << "sigma" << QJsonValue(1000)
        << "run.sigma: sigma = 1000 is out of range: the noise multiplier σ must be in [0.05, 100]";
    QTest::newRow("m above n") << "run"
                               << "m" << QJsonValue(70000) << "run.m: m = 70000 exceeds n = ";
    QTest::newRow("K not an integer") << "run"
                                      << "K" << QJsonValue(10.5) << "run.K: K = 10.5 is out of range";
    QTest::newRow("L missing") << "run"
                               << "L" << QJsonValue(QJsonValue::Undefined) << "run.L: missing";
    QTest::newRow("delta a string") << "run"
                                    << "delta" << QJsonValue(QStringLiteral("1e-5"))
                                    << "run.delta: expected a number, found a string";
    QTest::newRow("unknown sampling") << "run"
                                      << "sampling" << QJsonValue(QStringLiteral("random")) << "run.sampling";
    QTest::newRow("conversion") << "options"
                                << "conversion" << QJsonValue(QStringLiteral("best")) << "options.conversion";
    QTest::newRow("orders out of range") << "options"
                                         << "orders" << QJsonValue(QJsonArray{0.5, 2}) << "options.orders";
    QTest::newRow("another format") << ""
                                    << "format" << QJsonValue(QStringLiteral("dpexplorer-preset"))
                                    << "is not a DP Explorer privacy statement";
    QTest::newRow("a newer format") << ""
                                    << "format_version" << QJsonValue(2) << "format_version: 2 is newer";
    QTest::newRow("no run") << ""
                            << "run" << QJsonValue(QJsonValue::Undefined) << "run: missing";
  }

  void unreadableStatementsExitTwo() {
    QFETCH(QString, section);
    QFETCH(QString, key);
    QFETCH(QJsonValue, value);
    QFETCH(QString, mustMention);
    QJsonObject o = readJson(m_default);
    QJsonObject target = section.isEmpty() ? o : o.value(section).toObject();
    if (value.isUndefined()) {
      target.remove(key);
    } else {
      target.insert(key, value);
    }
    if (section.isEmpty()) {
      o = target;
    } else {
      o.insert(section, target);
    }
    const QString file = path(QStringLiteral("bad.json"));
    QVERIFY(writeJson(file, o));
    const CliRun r = runDpx({QStringLiteral("verify"), file});
    QVERIFY2(r.code == 2, qPrintable(describe(r)));
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);  // one line
  }

  void usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("no file") << QStringList{"verify"} << "give one statement file";
    QTest::newRow("two files") << QStringList{"verify", "a.json", "b.json"} << "2 given";
    QTest::newRow("missing file") << QStringList{"verify", "/nonexistent/statement.json"} << "cannot read";
    QTest::newRow("unknown flag") << QStringList{"verify", "--frobnicate", "x.json"} << "--frobnicate";
    QTest::newRow("knob out of range") << QStringList{"statement", "--sigma", "1000"} << "[0.05, 100]";
    QTest::newRow("snippet and json") << QStringList{"statement", "--snippet", "opacus", "--json"} << "give one";
    QTest::newRow("unknown snippet") << QStringList{"statement", "--snippet", "tensorflow"} << "opacus or jax-privacy";
    QTest::newRow("variant") << QStringList{"statement", "--variant", "baseline"} << "headline";
  }

  void usageErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, mustMention);
    const CliRun r = runDpx(args);
    QVERIFY2(r.code == 2, qPrintable(describe(r)));
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
  }

  void snippetPrintsOnlyTheSnippet() {
    const CliRun r = runDpx(QStringLiteral("statement --snippet opacus --sigma 1.37 --L 0.75 --m 123 --K 4567"));
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.startsWith(QStringLiteral("# Opacus configuration")));
    for (const char* text : {"NOISE_MULTIPLIER = 1.37", "MAX_GRAD_NORM = 0.75", "BATCH_SIZE = 123", "STEPS = 4567"}) {
      QVERIFY2(r.out.contains(QLatin1String(text)), text);
    }
    const CliRun jax = runDpx(QStringLiteral("statement --snippet jax-privacy"));
    QCOMPARE(jax.code, 0);
    QVERIFY(jax.out.contains(QStringLiteral("keras_api.DPKerasConfig(")));
  }

  void textSummaryNamesEveryAccountant() {
    const CliRun r = runDpx(QStringLiteral("statement --sampling uniform") + dpx::test::quickRun());
    QCOMPARE(r.code, 0);
    for (const auto* a : dpx::core::accounting::allAccountants()) {
      QVERIFY2(r.out.contains(QString::fromUtf8(a->id().data(), static_cast<qsizetype>(a->id().size())) + " — "),
               a->id().data());
    }
    QVERIFY(r.out.contains(QStringLiteral("not applicable")));
  }

  // Written on one code path, verified on the other (DPX_PORTABLE_NUMERICS: scalar math and
  // kissfft instead of libmvec and FFTW), both ways: the exact accountant's numbers move in their
  // last bits, within the tolerance its entry records, and the statement verifies.
  void statementVerifiesOnTheOtherCodePath_data() {
    QTest::addColumn<bool>("writtenPortable");
    QTest::newRow("fast → portable") << false;
    QTest::newRow("portable → fast") << true;
  }
  void statementVerifiesOnTheOtherCodePath() {
    QFETCH(bool, writtenPortable);
    const QString file = path(QStringLiteral("paths-%1.json").arg(writtenPortable));
    auto environment = [](bool portable) {
      QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
      e.remove(QStringLiteral("DPX_PORTABLE_NUMERICS"));
      if (portable) e.insert(QStringLiteral("DPX_PORTABLE_NUMERICS"), QStringLiteral("1"));
      return e;
    };
    QProcess write;
    write.setProcessEnvironment(environment(writtenPortable));
    write.start(QStringLiteral(DPX_DPX_BINARY),
                QStringList{QStringLiteral("statement"), QStringLiteral("--json"), QStringLiteral("--epochs"),
                            QStringLiteral("15"), QStringLiteral("--sigma"), QStringLiteral("1.3"),
                            QStringLiteral("--output"), file} +
                    dpx::test::quickRunFlags());
    QVERIFY(write.waitForFinished(60000));
    QCOMPARE(write.exitCode(), 0);
    QProcess verify;
    verify.setProcessEnvironment(environment(!writtenPortable));
    verify.start(QStringLiteral(DPX_DPX_BINARY), {QStringLiteral("verify"), file});
    QVERIFY(verify.waitForFinished(60000));
    const QString out = QString::fromUtf8(verify.readAllStandardOutput());
    QVERIFY2(verify.exitCode() == 0, qPrintable(out));
    // The paths do differ: otherwise this test would prove nothing.
    QVERIFY2(out.contains(QStringLiteral("≈ accountants[pld].epsilon: ")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("in their last bits")), qPrintable(out));
  }

  // The real binary, in two processes: what one writes the other recomputes bit for bit.
  void separateProcessesAgree() {
    const QString file = path(QStringLiteral("process.json"));
    QProcess write;
    write.start(QStringLiteral(DPX_DPX_BINARY),
                QStringList{QStringLiteral("statement"), QStringLiteral("--json"), QStringLiteral("--epochs"),
                            QStringLiteral("15"), QStringLiteral("--sigma"), QStringLiteral("1.3"),
                            QStringLiteral("--output"), file} +
                    dpx::test::quickRunFlags());
    QVERIFY(write.waitForFinished(60000));
    QCOMPARE(write.exitCode(), 0);
    QProcess verify;
    verify.start(QStringLiteral(DPX_DPX_BINARY), {QStringLiteral("verify"), file});
    QVERIFY(verify.waitForFinished(60000));
    QVERIFY2(verify.exitCode() == 0, verify.readAllStandardOutput().constData());
  }
};

QTEST_GUILESS_MAIN(TestDpxStatement)
#include "tst_dpx_statement.moc"
