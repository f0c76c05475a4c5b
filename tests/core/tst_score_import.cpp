// Reading membership scores computed elsewhere (score_import.h): CSV with the columns in any order
// and others ignored, JSON as an object with "scores" or a plain array, the canary subset, and
// every refusal naming the line (CSV) or the field's path (JSON) and what was wrong.
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <string>

#include "audit/score_import.h"

using namespace dpx::core;
using namespace dpx::core::audit;

class TestScoreImport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void csvColumnsInAnyOrderOthersIgnored() {
    const Result<ImportedScores> s = parseScoresCsv(
        "id,member,loss,score\n"
        "a,1,0.1,2.5\n"
        "\n"
        "b,0,0.9,-1e-3\n"
        "\"c, quoted\",true,0.2,+3\n"
        "d,False,0.3,0\r\n");
    QVERIFY2(s.isOk(), s.status().message().c_str());
    QCOMPARE(s->records, std::int64_t{4});
    QCOMPARE(s->audited(), std::int64_t{4});
    QCOMPARE(s->canaries, std::int64_t{0});
    QCOMPARE(s->auditedMembers(), std::int64_t{2});
    QCOMPARE(s->scores, (std::vector<double>{2.5, -1e-3, 3.0, 0.0}));
    QCOMPARE(s->members, (std::vector<std::uint8_t>{1, 0, 1, 0}));
    QCOMPARE(s->format, std::string("csv"));
  }

  void csvCanariesAreTheAuditedSubset() {
    const Result<ImportedScores> s = parseScoresCsv(
        "score,member,canary\n"
        "1,1,0\n"
        "2,0,1\n"
        "3,1,1\n"
        "4,0,0\n");
    QVERIFY2(s.isOk(), s.status().message().c_str());
    QCOMPARE(s->records, std::int64_t{4});
    QCOMPARE(s->canaries, std::int64_t{2});
    QCOMPARE(s->scores, (std::vector<double>{2.0, 3.0}));
    QCOMPARE(s->members, (std::vector<std::uint8_t>{0, 1}));
  }

  void jsonObjectAndPlainArray() {
    const Result<ImportedScores> object =
        parseScoresJson(R"({"attack":"loss","scores":[{"score":1.5,"member":1,"id":7},{"score":-2,"member":0},)"
                        R"({"score":0.25,"member":true,"canary":0}]})");
    QVERIFY2(object.isOk(), object.status().message().c_str());
    QCOMPARE(object->scores, (std::vector<double>{1.5, -2.0, 0.25}));
    QCOMPARE(object->members, (std::vector<std::uint8_t>{1, 0, 1}));
    QCOMPARE(object->format, std::string("json"));
    const Result<ImportedScores> array = parseScores(
        R"(  [{"member":0,"score":3},{"member":1,"score":4,"canary":1},{"member":0,"score":5,"canary":1}])");
    QVERIFY2(array.isOk(), array.status().message().c_str());
    QCOMPARE(array->canaries, std::int64_t{2});
    QCOMPARE(array->scores, (std::vector<double>{4.0, 5.0}));
    // parseScores takes text that does not open with '{' or '[' as CSV.
    const Result<ImportedScores> csv = parseScores("score,member\n1,1\n0,0\n");
    QVERIFY(csv.isOk());
    QCOMPARE(csv->format, std::string("csv"));
  }

  void refusals_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    // CSV: the line and the field.
    QTest::newRow("member 2") << "score,member\n1,1\n2,0\n3,1\n4,0\n5,1\n7,2\n0.5,0\n"
                              << "line 7: member must be 0 or 1, got '2'";
    QTest::newRow("member 0.5") << "score,member\n1,0.5\n"
                                << "line 2: member must be 0 or 1, got '0.5'";
    QTest::newRow("member empty") << "score,member\n1,\n"
                                  << "line 2: member must be 0 or 1, got ''";
    QTest::newRow("score not a number") << "member,score\n1,1\n0,abc\n"
                                        << "line 3: score 'abc' is not a number";
    QTest::newRow("score nan") << "score,member\nnan,1\n"
                               << "line 2: score 'nan' is not a finite number";
    QTest::newRow("score inf") << "score,member\n1,1\n-inf,0\n"
                               << "line 3: score '-inf' is not a finite number";
    QTest::newRow("score overflows") << "score,member\n1e999,1\n"
                                     << "line 2: score '1e999' is not a finite number";
    QTest::newRow("score empty") << "score,member\n,1\n"
                                 << "line 2: score is empty";
    QTest::newRow("canary 3") << "score,member,canary\n1,1,3\n"
                              << "line 2: canary must be 0 or 1, got '3'";
    QTest::newRow("too few fields") << "score,member,x\n1,1,a\n2,0\n"
                                    << "line 3: 2 fields, the header has 3";
    QTest::newRow("too many fields") << "score,member\n1,1,9\n"
                                     << "line 2: 3 fields, the header has 2";
    QTest::newRow("unterminated quote") << "score,member\n\"1,1\n"
                                        << "line 2: unterminated quoted field";
    QTest::newRow("no member column") << "\nscore,label\n1,1\n"
                                      << "line 2: the header has no 'member' column (columns: 'score', 'label')";
    QTest::newRow("no score column") << "loss,member\n1,1\n"
                                     << "line 1: the header has no 'score' column";
    QTest::newRow("empty file") << ""
                                << "no header";
    QTest::newRow("header only") << "score,member\n"
                                 << "no records";
    QTest::newRow("all members") << "score,member\n1,1\n2,1\n"
                                 << "the 2 records are all members (member = 1): an audit needs at least one member "
                                    "and one non-member";
    QTest::newRow("all non-members") << "score,member\n1,0\n"
                                     << "are all non-members";
    QTest::newRow("canaries all members") << "score,member,canary\n1,1,1\n2,0,0\n"
                                          << "the 1 canaries are all members";
    // JSON: the byte of a syntax error, the path of a field.
    QTest::newRow("json syntax") << R"({"scores":[{"score":1,"member":1},]})"
                                 << "not JSON: ";
    QTest::newRow("json syntax has the byte") << R"({"scores":[{"score":1,"member":1},]})"
                                              << "at byte 34";
    QTest::newRow("json member 2") << R"({"scores":[{"score":1,"member":1},{"score":2,"member":2}]})"
                                   << "scores[1].member must be 0 or 1, got 2";
    QTest::newRow("json member string") << R"([{"score":1,"member":"1"}])"
                                        << "[0].member must be 0 or 1, got the string '1'";
    QTest::newRow("json canary null") << R"([{"score":1,"member":1,"canary":null}])"
                                      << "[0].canary must be 0 or 1, got null";
    QTest::newRow("json score string") << R"({"scores":[{"score":"1","member":1}]})"
                                       << "scores[0].score must be a number";
    QTest::newRow("json no score") << R"({"scores":[{"score":1,"member":1},{"member":0}]})"
                                   << "scores[1] has no \"score\"";
    QTest::newRow("json no member") << R"([{"score":1}])"
                                    << "[0] has no \"member\"";
    QTest::newRow("json record not an object") << R"({"scores":[1,2]})"
                                               << "scores[0] must be an object";
    QTest::newRow("json no scores key") << R"({"score":[1],"member":[1]})"
                                        << "no \"scores\" key";
    QTest::newRow("json scores not an array") << R"({"scores":{"score":1}})"
                                              << "scores must be an array";
    QTest::newRow("json empty") << R"({"scores":[]})"
                                << "no records";
    QTest::newRow("json one side") << R"([{"score":1,"member":0},{"score":2,"member":false}])"
                                   << "are all non-members";
  }
  void refusals() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    const Result<ImportedScores> s = parseScores(text.toStdString());
    QVERIFY(!s.isOk());
    QCOMPARE(s.status().code(), StatusCode::kParseError);
    QVERIFY2(s.status().message().find(message.toStdString()) != std::string::npos, s.status().message().c_str());
  }

  void fileErrorsNameThePath() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string missing = dir.filePath(QStringLiteral("missing.csv")).toStdString();
    const Result<ImportedScores> none = readScoresFile(missing);
    QVERIFY(!none.isOk());
    QVERIFY2(none.status().message().find(missing) != std::string::npos, none.status().message().c_str());
    const std::string bad = dir.filePath(QStringLiteral("bad.csv")).toStdString();
    std::ofstream(bad) << "score,member\n1,1\n2,7\n";
    const Result<ImportedScores> refused = readScoresFile(bad);
    QVERIFY(!refused.isOk());
    QCOMPARE(refused.status().message(), bad + ": line 3: member must be 0 or 1, got '7'");
    const std::string good = dir.filePath(QStringLiteral("good.json")).toStdString();
    std::ofstream(good) << "\xEF\xBB\xBF{\"scores\":[{\"score\":1,\"member\":1},{\"score\":0,\"member\":0}]}";
    const Result<ImportedScores> read = readScoresFile(good);
    QVERIFY2(read.isOk(), read.status().message().c_str());
    QCOMPARE(read->audited(), std::int64_t{2});
  }
};

QTEST_GUILESS_MAIN(TestScoreImport)
#include "tst_score_import.moc"
