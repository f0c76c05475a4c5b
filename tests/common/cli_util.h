// Running dpx in-process for the CLI tests: the exit code and what it printed.
#pragma once

#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <sstream>

#include "cli.h"

namespace dpx::test {

struct CliRun {
  int code = 0;
  QString out;
  QString err;
};

// `dpx` followed by the arguments.
inline CliRun runDpx(const QStringList& arguments) {
  std::ostringstream out;
  std::ostringstream err;
  dpx::cli::Arguments all{"dpx"};
  for (const QString& a : arguments) all.push_back(a.toStdString());
  const int code = dpx::cli::run(all, out, err);
  return {code, QString::fromStdString(out.str()), QString::fromStdString(err.str())};
}

// The same from one line of space-separated arguments ("epsilon --accountant rdp --json").
inline CliRun runDpx(const QString& line) { return runDpx(line.split(QLatin1Char(' '), Qt::SkipEmptyParts)); }

// The words of a command line as a POSIX shell splits them (spaces; single quotes, with '\'' for
// a quote inside): what a user pasting a copied dpx command runs.
inline QStringList shellWords(const QString& line) {
  QStringList words;
  QString word;
  bool inWord = false;
  for (qsizetype i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (c == QLatin1Char('\'')) {
      const qsizetype close = line.indexOf(QLatin1Char('\''), i + 1);
      word += line.mid(i + 1, close - i - 1);
      i = close;
      inWord = true;
    } else if (c == QLatin1Char('\\') && i + 1 < line.size()) {
      word += line[++i];
      inWord = true;
    } else if (c.isSpace()) {
      if (inWord) words << word;
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words << word;
  return words;
}

// The one JSON object a run printed (empty, with a warning naming the output, when it is not JSON).
inline QJsonObject jsonOf(const CliRun& r) {
  QJsonParseError error;
  const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
  if (error.error != QJsonParseError::NoError) qWarning("not JSON: %s", qPrintable(r.out.left(300)));
  return o;
}

}  // namespace dpx::test
