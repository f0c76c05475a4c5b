// The JSON writer of the dpx machine interface (numbers with 10 significant digits).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <limits>

#include "io/json_writer.h"

using dpx::core::JsonWriter;

class TestJsonWriter : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void writesValidJsonWithTenDigits() {
    JsonWriter w;
    w.beginObject().field("accountant", "rdp").field("epsilon", 1.234567890123).field("ok", true);
    w.key("list").numberArray({1.0, 0.5}).key("text").value("quote \" and \\ and \n");
    w.endObject();
    QCOMPARE(QString::fromStdString(w.str()).contains(QStringLiteral("1.23456789,")), true);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(w.str()), &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(doc.object().value(QStringLiteral("list")).toArray().size(), 2);
    QCOMPARE(doc.object().value(QStringLiteral("text")).toString(), QStringLiteral("quote \" and \\ and \n"));
    QCOMPARE(w.nonFiniteCount(), 0);
  }

  void nonFiniteBecomesNullAndIsCounted() {
    JsonWriter w;
    w.beginArray().value(std::numeric_limits<double>::infinity()).value(1.0).endArray();
    QCOMPARE(QString::fromStdString(w.str()), QStringLiteral("[null,1]"));
    QCOMPARE(w.nonFiniteCount(), 1);
  }

  void nestedContainersSeparateCorrectly() {
    JsonWriter w;
    w.beginArray().beginObject().field("a", 1).endObject().beginObject().field("b", 2).endObject().endArray();
    QCOMPARE(QString::fromStdString(w.str()), QStringLiteral("[{\"a\":1},{\"b\":2}]"));
  }
};

QTEST_GUILESS_MAIN(TestJsonWriter)
#include "tst_json_writer.moc"
