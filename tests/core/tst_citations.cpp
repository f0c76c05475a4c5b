// The product cites papers by authors, year and theorem (docs/REFERENCES.md): never by the internal
// names of the source papers ("seed 000" … "seed 004") nor by section numbers of the specification
// ("SPEC §2.4"). This guard scans every *.h and *.cpp under core/, ui/ and app/ — comments, tooltips,
// CLI help and JSON citations alike — and the human-readable fields of the built-in presets
// (resources/presets/*.json: name, description, source, notes), and reports each hit as file:line.
// Preset ids such as "seed003-mnist-row1" are stable keys stored in users' files and are not checked.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString& sourceRoot() {
  static const QString root = QDir::cleanPath(QString::fromUtf8(DPX_SOURCE_DIR));
  return root;
}

// The forbidden ways of citing: an internal seed name (any case) or a specification section.
const QList<QRegularExpression>& forbiddenPatterns() {
  static const QList<QRegularExpression> patterns{
      QRegularExpression(QStringLiteral("seed 00"), QRegularExpression::CaseInsensitiveOption),
      QRegularExpression(QString::fromUtf8("SPEC\\s*\xc2\xa7")),
  };
  return patterns;
}

bool isForbidden(const QString& text) {
  for (const QRegularExpression& re : forbiddenPatterns()) {
    if (re.match(text).hasMatch()) return true;
  }
  return false;
}

QString relativePath(const QString& path) { return QDir(sourceRoot()).relativeFilePath(path); }

// Every line of the file that cites the forbidden way, as "path:line: text".
QStringList scanLines(const QString& path, const QString& shownPath) {
  QStringList hits;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {shownPath + QStringLiteral(": cannot be read")};
  const QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
  for (qsizetype i = 0; i < lines.size(); ++i) {
    if (isForbidden(lines[i])) hits << QStringLiteral("%1:%2: %3").arg(shownPath).arg(i + 1).arg(lines[i].trimmed());
  }
  return hits;
}

// Scans every *.h and *.cpp under `directory` (recursively); `files` counts what was read.
QStringList scanSources(const QString& directory, int& files) {
  QStringList hits;
  QStringList paths;
  QDirIterator it(directory, {QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files,
                  QDirIterator::Subdirectories);
  while (it.hasNext()) paths << it.next();
  paths.sort();
  for (const QString& path : paths) {
    ++files;
    hits << scanLines(path, relativePath(path));
  }
  return hits;
}

// The line of `raw` where a forbidden citation inside `field` sits: the first forbidden line at or
// after the line of the field's key, else the first forbidden line anywhere; 0 when none is found
// (a preset written on one line still fails, at line 1).
int lineOfField(const QStringList& rawLines, const QString& field) {
  const QRegularExpression key(QStringLiteral("\"%1\"\\s*:").arg(field));
  int keyLine = -1;
  for (qsizetype i = 0; i < rawLines.size(); ++i) {
    if (key.match(rawLines[i]).hasMatch()) {
      keyLine = static_cast<int>(i);
      break;
    }
  }
  for (int start : {keyLine, 0}) {
    if (start < 0) continue;
    for (qsizetype i = start; i < rawLines.size(); ++i) {
      if (isForbidden(rawLines[i])) return static_cast<int>(i) + 1;
    }
  }
  return 0;
}

// The human-readable fields of one preset file that cite the forbidden way, as
// "path:line: field: text".
QStringList scanPreset(const QString& path, const QString& shownPath) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {shownPath + QStringLiteral(": cannot be read")};
  const QByteArray bytes = file.readAll();
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
  if (error.error != QJsonParseError::NoError || !doc.isObject()) {
    return {shownPath + QStringLiteral(": not a JSON object: ") + error.errorString()};
  }
  const QJsonObject preset = doc.object();
  const QStringList rawLines = QString::fromUtf8(bytes).split(QLatin1Char('\n'));
  QStringList hits;
  auto check = [&](const QString& field, const QString& text) {
    if (!isForbidden(text)) return;
    hits << QStringLiteral("%1:%2: %3: %4").arg(shownPath).arg(lineOfField(rawLines, field)).arg(field, text);
  };
  for (const char* field : {"name", "description", "source"}) {
    const QString key = QString::fromLatin1(field);
    check(key, preset.value(key).toString());
  }
  for (const QJsonValue& note : preset.value(QStringLiteral("notes")).toArray()) {
    check(QStringLiteral("notes"), note.toString());
  }
  return hits;
}

QString report(const QStringList& hits) {
  return QStringLiteral(
             "%1 citation(s) by seed name or specification section; cite the paper by "
             "authors, year and theorem (docs/REFERENCES.md):\n  %2")
      .arg(hits.size())
      .arg(hits.join(QStringLiteral("\n  ")));
}

}  // namespace

class TestCitations : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The scanner itself: a planted hit of each kind is found at its line, a clean citation and a
  // preset id are not — so an empty report means clean sources, not a blind scanner.
  void scannerFindsPlantedCitations() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString source = dir.filePath(QStringLiteral("planted.cpp"));
    {
      QFile f(source);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(
          "// Ryffel, Bach & Pointcheval 2022, Lemma 5.1\n"
          "// Seed 000 Lemma 5.1\n"
          "const char* id = \"seed003-mnist-row1\";\n"
          "// as SPEC \xc2\xa7"
          "2.4 maps the knobs\n");
    }
    const QStringList sourceHits = scanLines(source, QStringLiteral("planted.cpp"));
    QCOMPARE(sourceHits.size(), 2);
    QVERIFY2(sourceHits[0].startsWith(QStringLiteral("planted.cpp:2:")), qPrintable(sourceHits[0]));
    QVERIFY2(sourceHits[1].startsWith(QStringLiteral("planted.cpp:4:")), qPrintable(sourceHits[1]));

    const QString preset = dir.filePath(QStringLiteral("planted.json"));
    {
      QFile f(preset);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(
          "{\n"
          "  \"id\": \"seed003-mnist-row1\",\n"
          "  \"name\": \"Bu et al. 2020 \xc2\xb7 MNIST\",\n"
          "  \"source\": \"Bu, Dong, Long & Su 2020, Table 1\",\n"
          "  \"notes\": [\n"
          "    \"fine\",\n"
          "    \"the legacy grid (SPEC \xc2\xa7"
          "2.1)\"\n"
          "  ],\n"
          "  \"params\": {}\n"
          "}\n");
    }
    const QStringList presetHits = scanPreset(preset, QStringLiteral("planted.json"));
    QCOMPARE(presetHits.size(), 1);
    QVERIFY2(presetHits[0].startsWith(QStringLiteral("planted.json:7: notes:")), qPrintable(presetHits[0]));
  }

  void sourcesCiteByAuthors_data() {
    QTest::addColumn<QString>("directory");
    QTest::newRow("core") << QStringLiteral("core");
    QTest::newRow("ui") << QStringLiteral("ui");
    QTest::newRow("app") << QStringLiteral("app");
  }
  void sourcesCiteByAuthors() {
    QFETCH(QString, directory);
    const QString path = sourceRoot() + QLatin1Char('/') + directory;
    QVERIFY2(QDir(path).exists(), qPrintable(path));
    int files = 0;
    const QStringList hits = scanSources(path, files);
    QVERIFY2(files > 0, qPrintable(path + QStringLiteral(": no *.h or *.cpp found")));
    QVERIFY2(hits.isEmpty(), qPrintable(report(hits)));
  }

  void presetsCiteByAuthors() {
    const QString directory = sourceRoot() + QStringLiteral("/resources/presets");
    const QStringList names = QDir(directory).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY2(!names.isEmpty(), qPrintable(directory));
    QStringList hits;
    for (const QString& name : names) {
      const QString path = directory + QLatin1Char('/') + name;
      hits << scanPreset(path, relativePath(path));
    }
    QVERIFY2(hits.isEmpty(), qPrintable(report(hits)));
  }
};

QTEST_GUILESS_MAIN(TestCitations)
#include "tst_citations.moc"
