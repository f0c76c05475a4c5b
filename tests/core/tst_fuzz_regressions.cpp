// Replays the fuzz corpora of the dataset readers in the ordinary suite (gcc, no libFuzzer):
// every seed in tests/data/fuzz/<harness>/ and every reproducer the fuzzers found, kept in
// tests/data/fuzz/regressions/<harness>/, goes through exactly the call its harness makes
// (tests/fuzz/fuzz_inputs.h) and must give a clean Status with a message or a well-formed
// dataset; gunzip never returns more than its limit (the "bomb-…" seeds). The seeds named
// "claims-…" and "…-1e10-…" are refuse-before-allocating cases: a header claiming gigabytes
// must be refused (under ASan, scripts/sanitize.sh, an allocation that large would abort).
// (sklearn-claims-1e15-rows is not one: its first line is as wide as the data, so it reads as
// column names.)
#include <QDir>
#include <QFile>
#include <QTest>

#include "fuzz_inputs.h"
#include "test_util.h"

using namespace dpx;

namespace {

std::vector<std::uint8_t> readBytes(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QByteArray bytes = file.readAll();
  return {bytes.begin(), bytes.end()};
}

QStringList corpus(const QString& harness) {
  QStringList files;
  for (const QString& dir : {QStringLiteral(DPX_TEST_DATA_DIR "/fuzz/") + harness,
                             QStringLiteral(DPX_TEST_DATA_DIR "/fuzz/regressions/") + harness}) {
    const QDir d(dir);
    for (const QString& name : d.entryList(QDir::Files, QDir::Name)) files << d.filePath(name);
  }
  return files;
}

}  // namespace

class TestFuzzRegressions : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void loaders_data() {
    QTest::addColumn<QString>("harness");
    QTest::addColumn<QString>("path");
    for (const QString& harness :
         {QStringLiteral("csv"), QStringLiteral("libsvm"), QStringLiteral("idx"), QStringLiteral("gzip")}) {
      const QStringList files = corpus(harness);
      QVERIFY2(harness == QStringLiteral("gzip") || files.size() >= 10,
               qPrintable(harness + QStringLiteral(": seed corpus missing")));
      for (const QString& path : files) {
        QTest::newRow(qPrintable(harness + QLatin1Char('/') + QFileInfo(path).fileName())) << harness << path;
      }
    }
  }
  void loaders() {
    QFETCH(QString, harness);
    QFETCH(QString, path);
    const std::vector<std::uint8_t> bytes = readBytes(path);
    const std::span<const std::uint8_t> input(bytes);
    if (harness == QStringLiteral("gzip")) {
      const auto out = fuzz::runGzip(input);
      if (out.isOk()) {
        QVERIFY(static_cast<std::int64_t>(out->size()) <= fuzz::gzipLimit(input));
      } else {
        QVERIFY(!out.status().message().empty());
      }
      return;
    }
    core::training::LoadOptions options;
    core::Result<core::training::Dataset> parsed = core::Status::invalidArgument("unset");
    if (harness == QStringLiteral("csv")) {
      parsed = fuzz::runCsv(input);
      options = fuzz::csvOptions(bytes.empty() ? 0 : bytes[0]);
    } else if (harness == QStringLiteral("libsvm")) {
      parsed = fuzz::runLibsvm(input);
      options = fuzz::libsvmOptions(bytes.empty() ? 0 : bytes[0]);
    } else {
      parsed = fuzz::runIdx(input);
      options = fuzz::splitIdx(input).options;
    }
    if (parsed.isOk()) {
      const std::string defect = fuzz::datasetDefect(*parsed, options);
      QVERIFY2(defect.empty(), defect.c_str());
    } else {
      QVERIFY2(!parsed.status().message().empty(), "an error without a message");
      // What a user would see: the reason, and where (line, byte) for malformed text.
      qInfo("%s", parsed.status().message().c_str());
    }
    const QString name = QFileInfo(path).fileName();
    if (name.startsWith(QStringLiteral("claims-")) || name.contains(QStringLiteral("-1e10-"))) {
      QVERIFY2(!parsed.isOk(), "a header claiming more data than the file holds must be refused");
    }
  }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzz_regressions.moc"
