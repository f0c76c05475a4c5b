// The strict JSON reader (RFC 8259): documents of every kind, every class of malformed text with
// the offset, line and column its message names, duplicate keys, deep nesting, and a round trip
// through the JSON writer.
#include <QTest>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "io/json_reader.h"
#include "io/json_writer.h"

using dpx::core::JsonMember;
using dpx::core::JsonNumbers;
using dpx::core::JsonValue;
using dpx::core::JsonWriter;
using dpx::core::parseJson;
using dpx::core::StatusCode;
using Type = dpx::core::JsonValue::Type;

namespace {

// The value of a text that must parse.
JsonValue parsed(const std::string& text) {
  auto result = parseJson(text);
  if (!result) qWarning("%s: %s", text.c_str(), result.status().message().c_str());
  return result ? *result : JsonValue();
}

std::string errorOf(const std::string& text) {
  const auto result = parseJson(text);
  if (result) return "(parsed)";
  if (result.status().code() != StatusCode::kParseError) return "(not a parse error)";
  return result.status().message();
}

std::string nested(int depth, char open, char close) {
  return std::string(static_cast<std::size_t>(depth), open) + std::string(static_cast<std::size_t>(depth), close);
}

}  // namespace

class TestJsonReader : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void readsScalars() {
    QVERIFY(parsed("null").isNull());
    QCOMPARE(parsed("true").type(), Type::kBool);
    QCOMPARE(parsed("true").asBool(), true);
    QCOMPARE(parsed("false").asBool(), false);
    QCOMPARE(parsed("\"text\"").asString(), std::string("text"));
    QCOMPARE(parsed("\"\"").asString(), std::string());
    QCOMPARE(parsed("0").asNumber(), 0.0);
    QCOMPARE(parsed("-12").asNumber(), -12.0);
    QCOMPARE(parsed("1.5").asNumber(), 1.5);
    QCOMPARE(parsed("-0.25e2").asNumber(), -25.0);
    QCOMPARE(parsed("1E-5").asNumber(), 1e-5);
    QCOMPARE(parsed("1e+3").asNumber(), 1000.0);
    QCOMPARE(parsed("0.1").asNumber(), 0.1);
    QVERIFY(std::signbit(parsed("-0").asNumber()));
  }

  void keepsTheTextOfNumbers() {
    QCOMPARE(parsed("1e6").numberText(), std::string("1e6"));
    QCOMPARE(parsed("1000000").numberText(), std::string("1000000"));
    QCOMPARE(parsed("9007199254740993").numberText(), std::string("9007199254740993"));
    QCOMPARE(parsed("9007199254740993").asNumber(), 9007199254740992.0);
    QCOMPARE(JsonValue(0.5).numberText(), std::string("0.5"));
    QCOMPARE(parsed("\"1\"").numberText(), std::string());
  }

  void readsTheLimitsOfADouble() {
    QCOMPARE(parsed("1.7976931348623157e308").asNumber(), std::numeric_limits<double>::max());
    QCOMPARE(parsed("-1.7976931348623157e308").asNumber(), -std::numeric_limits<double>::max());
    QCOMPARE(parsed("5e-324").asNumber(), std::numeric_limits<double>::denorm_min());
    QCOMPARE(parsed("2.2250738585072014e-308").asNumber(), std::numeric_limits<double>::min());
    QCOMPARE(parsed("0e999999999999").asNumber(), 0.0);
    QCOMPARE(parsed("0.000e-99999").asNumber(), 0.0);
  }

  void readsContainersInDocumentOrder() {
    const JsonValue v = parsed("{\"b\": [1, \"two\", null, true, {\"c\": []}], \"a\": {}, \"z\": false}");
    QVERIFY(v.isObject());
    const JsonValue::Object& members = v.asObject();
    QCOMPARE(members.size(), std::size_t{3});
    QCOMPARE(members[0].key, std::string("b"));
    QCOMPARE(members[1].key, std::string("a"));
    QCOMPARE(members[2].key, std::string("z"));
    const JsonValue::Array& b = v.find("b")->asArray();
    QCOMPARE(b.size(), std::size_t{5});
    QCOMPARE(b[0].asNumber(), 1.0);
    QCOMPARE(b[1].asString(), std::string("two"));
    QVERIFY(b[2].isNull());
    QCOMPARE(b[3].asBool(), true);
    QVERIFY(b[4].find("c")->isArray());
    QVERIFY(b[4].find("c")->asArray().empty());
    QVERIFY(v.find("a")->isObject());
    QVERIFY(v.find("a")->asObject().empty());
    QVERIFY(v.find("missing") == nullptr);
    QVERIFY(v.find("b")->find("b") == nullptr);  // an array has no members
    QVERIFY(parsed("[]").isArray());
    QVERIFY(parsed("{}").isObject());
    QVERIFY(parsed("[[[]], {}]").asArray()[0].asArray()[0].isArray());
  }

  void findAnswersWithTheLastDuplicate() {
    const JsonValue v = parsed("{\"a\": 1, \"b\": 2, \"a\": 3}");
    QCOMPARE(v.asObject().size(), std::size_t{3});  // every member is kept
    QCOMPARE(v.find("a")->asNumber(), 3.0);
    QCOMPARE(v.find("b")->asNumber(), 2.0);
  }

  void accessorsOfAnotherTypeGiveEmptyValues() {
    const JsonValue v = parsed("\"x\"");
    QCOMPARE(v.asBool(), false);
    QCOMPARE(v.asNumber(), 0.0);
    QVERIFY(v.asArray().empty());
    QVERIFY(v.asObject().empty());
    QCOMPARE(parsed("1").asString(), std::string());
  }

  void allowsWhiteSpaceAndAByteOrderMark() {
    QCOMPARE(parsed(" \t\r\n[ 1 ,\n2 ]\r\n ").asArray().size(), std::size_t{2});
    QCOMPARE(parsed("\xEF\xBB\xBF{\"a\": 1}").find("a")->asNumber(), 1.0);
    QCOMPARE(errorOf("\xEF\xBB\xBF"),
             std::string("expected a JSON value but the text ends at byte 3 (line 1, column 1)"));
  }

  void decodesEscapesAndUtf8() {
    QCOMPARE(parsed("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"").asString(), std::string("\" \\ / \b \f \n \r \t"));
    QCOMPARE(parsed("\"\\u0041\\u00e9\\u20AC\"").asString(), std::string("A\xC3\xA9\xE2\x82\xAC"));
    QCOMPARE(parsed("\"\\u0000\"").asString(), std::string(1, '\0'));
    QCOMPARE(parsed("\"\\ud83d\\ude00\"").asString(), std::string("\xF0\x9F\x98\x80"));  // U+1F600
    QCOMPARE(parsed("\"\\uDBFF\\uDFFF\"").asString(), std::string("\xF4\x8F\xBF\xBF"));  // U+10FFFF
    QCOMPARE(parsed("\"\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \x7F\"").asString(),
             std::string("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \x7F"));
    QCOMPARE(parsed("{\"\\u00e9\": 1}").find("\xC3\xA9")->asNumber(), 1.0);
  }

  void refusesMalformedText_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* name, const QByteArray& text, const char* message) {
      QTest::newRow(name) << text << QString::fromUtf8(message);
    };
    // Structure.
    row("empty", "", "expected a JSON value but the text ends at byte 0 (line 1, column 1)");
    row("only white space", "  \n ", "expected a JSON value but the text ends at byte 4 (line 2, column 2)");
    row("two values", "[1] [2]", "expected the end of the text after the JSON value at byte 4 (line 1, column 5)");
    row("garbage after", "{} x", "expected the end of the text after the JSON value at byte 3 (line 1, column 4)");
    row("unclosed array", "[1, 2",
        "expected ',' or ']' after an array element but the text ends at byte 5 (line 1, column 6)");
    row("unclosed object", "{\"a\": 1",
        "expected ',' or '}' after an object member but the text ends at byte 7 (line 1, column 8)");
    row("open bracket only", "[", "expected a value or ']' but the text ends at byte 1 (line 1, column 2)");
    row("missing comma", "[1 2]", "expected ',' or ']' after an array element at byte 3 (line 1, column 4)");
    row("missing member comma", "{\"a\": 1 \"b\": 2}",
        "expected ',' or '}' after an object member at byte 8 (line 1, column 9)");
    row("missing colon", "{\"a\" 1}", "expected ':' after an object key at byte 5 (line 1, column 6)");
    row("key not a string", "{1: 2}", "expected a string key or '}' at byte 1 (line 1, column 2)");
    row("single-quoted key", "{'a': 2}", "expected a string key or '}' at byte 1 (line 1, column 2)");
    row("missing value", "{\"a\": }", "expected a value after ':' at byte 6 (line 1, column 7)");
    row("trailing comma in array", "[1, 2,]", "expected a value after ',' at byte 6 (line 1, column 7)");
    row("trailing comma in object", "{\"a\": 1,}", "expected a string key after ',' at byte 8 (line 1, column 9)");
    row("leading comma", "[,1]", "expected a value or ']' at byte 1 (line 1, column 2)");
    row("wrong closer", "[1}", "expected ',' or ']' after an array element at byte 2 (line 1, column 3)");
    row("line comment", "// note\n[1]", "expected a JSON value at byte 0 (line 1, column 1)");
    row("block comment", "[1 /* note */]", "expected ',' or ']' after an array element at byte 3 (line 1, column 4)");
    row("misspelt true", "[tru]", "expected 'true' at byte 1 (line 1, column 2)");
    row("misspelt false", "fals", "expected 'false' at byte 0 (line 1, column 1)");
    row("capital null", "Null", "expected a JSON value at byte 0 (line 1, column 1)");
    row("bare word", "{\"a\": yes}", "expected a value after ':' at byte 6 (line 1, column 7)");
    row("bare invalid UTF-8", "\xFF", "expected a JSON value at byte 0 (line 1, column 1)");
    // Numbers.
    row("leading zero", "[01]",
        "expected '.', 'e' or the end of the number after a leading '0' at byte 2 (line 1, column 3)");
    row("negative leading zero", "-00",
        "expected '.', 'e' or the end of the number after a leading '0' at byte 2 (line 1, column 3)");
    row("plus sign", "+1", "expected a JSON value at byte 0 (line 1, column 1)");
    row("leading point", "[.5]", "expected a value or ']' at byte 1 (line 1, column 2)");
    row("trailing point", "[1.]", "expected a digit after the decimal point at byte 3 (line 1, column 4)");
    row("trailing point at the end", "1.",
        "expected a digit after the decimal point but the text ends at byte 2 (line 1, column 3)");
    row("empty exponent", "[1e]", "expected a digit in the exponent at byte 3 (line 1, column 4)");
    row("signed empty exponent", "1E+",
        "expected a digit in the exponent but the text ends at byte 3 (line 1, column 4)");
    row("minus alone", "[-]", "expected a digit after '-' at byte 2 (line 1, column 3)");
    row("hex", "0x10", "expected the end of the text after the JSON value at byte 1 (line 1, column 2)");
    row("NaN", "[NaN]", "expected a value or ']' at byte 1 (line 1, column 2)");
    row("nan", "[nan]", "expected 'null' at byte 1 (line 1, column 2)");
    row("Infinity", "Infinity", "expected a JSON value at byte 0 (line 1, column 1)");
    row("minus Infinity", "-Infinity", "expected a digit after '-' at byte 1 (line 1, column 2)");
    row("overflow", "[0, 1e309]",
        "expected a number within the range of a double (magnitude at most 1.8e308) at byte 4 (line 1, column 5)");
    row("negative overflow", "-1.8e308",
        "expected a number within the range of a double (magnitude at most 1.8e308) at byte 0 (line 1, column 1)");
    row("long overflow", "1" + QByteArray(400, '0'),
        "expected a number within the range of a double (magnitude at most 1.8e308) at byte 0 (line 1, column 1)");
    row("underflow", "1e-400",
        "expected a number within the range of a double (a nonzero magnitude at least 4.9e-324) at byte 0 (line 1, "
        "column "
        "1)");
    row("long underflow", "0." + QByteArray(400, '0') + "1",
        "expected a number within the range of a double (a nonzero magnitude at least 4.9e-324) at byte 0 (line 1, "
        "column "
        "1)");
    // Strings.
    row("unterminated string", "[\"abc",
        "expected '\"' to close the string opened at byte 1 but the text ends at byte 5 (line 1, column 6)");
    row("raw tab", "\"a\tb\"",
        "expected an escape sequence instead of the control character U+0009 in a string at byte 2 (line 1, column 3)");
    row("raw newline", "\"a\nb\"",
        "expected an escape sequence instead of the control character U+000A in a string at byte 2 (line 1, column 3)");
    row("unknown escape", "\"\\x\"",
        "expected an escape sequence (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX) after '\\' at byte 2 (line "
        "1, "
        "column 3)");
    row("single-quote escape", "\"\\'\"",
        "expected an escape sequence (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX) after '\\' at byte 2 (line "
        "1, "
        "column 3)");
    row("backslash at the end", "\"\\",
        "expected an escape sequence after '\\' but the text ends at byte 2 (line 1, column 3)");
    row("short unicode escape", "\"\\u12G4\"", "expected four hex digits after '\\u' at byte 5 (line 1, column 6)");
    row("truncated unicode escape", "\"\\u12",
        "expected four hex digits after '\\u' but the text ends at byte 5 (line 1, column 6)");
    row("lone high surrogate", "\"\\ud800\"",
        "expected a low surrogate (\\uDC00 to \\uDFFF) after the high surrogate \\uD800 at byte 7 (line 1, column 8)");
    row("high surrogate and a letter", "\"\\uD83D\\u0041\"",
        "expected a low surrogate (\\uDC00 to \\uDFFF) after the high surrogate \\uD83D at byte 7 (line 1, column 8)");
    row("two high surrogates", "\"\\uD83D\\uD83D\"",
        "expected a low surrogate (\\uDC00 to \\uDFFF) after the high surrogate \\uD83D at byte 7 (line 1, column 8)");
    row("lone low surrogate", "[\"x\\uDE00\"]",
        "expected a high surrogate (\\uD800 to \\uDBFF) before the low surrogate \\uDE00 at byte 3 (line 1, column 4)");
    row("invalid byte", "\"a\xFF\"", "expected valid UTF-8 in a string at byte 2 (line 1, column 3)");
    row("continuation byte", "\"\x80\"", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("overlong", "\"\xC0\x80\"", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("overlong three bytes", "\"\xE0\x80\xAF\"", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("encoded surrogate", "\"\xED\xA0\x80\"", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("above U+10FFFF", "\"\xF4\x90\x80\x80\"", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("truncated sequence", "\"\xE2\x82\"", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("truncated at the end", "\"\xE2\x82", "expected valid UTF-8 in a string at byte 1 (line 1, column 2)");
    row("invalid key", "{\"\xC3\": 1}", "expected valid UTF-8 in a string at byte 2 (line 1, column 3)");
    // Where: lines and columns (in characters).
    row("line and column", "{\n  \"a\": 1,\n  \"b\" 2\n}",
        "expected ':' after an object key at byte 18 (line 3, column 7)");
    row("the brief's example", "{\n  \"format\": \"dpexplorer-privacy-statement\",\n  \"run\": {}\"x\"\n}",
        "expected ',' or '}' after an object member at byte 57 (line 3, column 12)");
    row("CRLF line ends", "[\r\n1,\r\n]", "expected a value after ',' at byte 7 (line 3, column 1)");
    row("CR line ends", "[\r1,\r]", "expected a value after ',' at byte 5 (line 3, column 1)");
    row("columns count characters", "[\"\xC3\xA9\xC3\xA9\" 1]",
        "expected ',' or ']' after an array element at byte 8 (line 1, column 7)");
    row("after a byte order mark", "\xEF\xBB\xBF[1 2]",
        "expected ',' or ']' after an array element at byte 6 (line 1, column 4)");
  }

  void refusesMalformedText() {
    QFETCH(QByteArray, text);
    QFETCH(QString, message);
    QCOMPARE(QString::fromStdString(errorOf(text.toStdString())), message);
  }

  void nestsTo512Levels() {
    QVERIFY(parseJson(nested(512, '[', ']')).isOk());
    std::string objects;
    for (int i = 0; i < 512; ++i) objects += "{\"a\":";
    objects += "1" + std::string(512, '}');
    const auto deep = parseJson(objects);
    QVERIFY(deep.isOk());
    const JsonValue* v = &*deep;
    for (int i = 0; i < 512; ++i) v = v->find("a");
    QCOMPARE(v->asNumber(), 1.0);
  }

  void refusesDeeperNesting() {
    const std::string expected = "expected at most 512 nested arrays and objects at byte 512 (line 1, column 513)";
    QCOMPARE(errorOf(nested(513, '[', ']')), expected);
    QCOMPARE(errorOf(nested(513, '{', '}')), std::string("expected a string key or '}' at byte 1 (line 1, column 2)"));
    std::string mixed;
    for (int i = 0; i < 256; ++i) mixed += "{\"\":[";
    mixed += "{}";
    QCOMPARE(errorOf(mixed), std::string("expected at most 512 nested arrays and objects at byte ") +
                                 std::to_string(mixed.size() - 2) + " (line 1, column " +
                                 std::to_string(mixed.size() - 1) + ")");
    // A million open brackets: refused at the 513th, without recursing into the rest.
    QCOMPARE(errorOf(std::string(1'000'000, '[')), expected);
  }

  void readsBackWhatTheWriterWrote_data() {
    QTest::addColumn<bool>("roundTrip");
    QTest::newRow("round-trip numbers") << true;
    QTest::newRow("display numbers") << false;
  }

  void readsBackWhatTheWriterWrote() {
    QFETCH(bool, roundTrip);
    std::vector<double> numbers = {0.0,  -0.0,          1.0,   -1.5,    0.1,    1.0 / 3.0,
                                   1e-5, 6.02214076e23, 1e300, -1e-300, 5e-324, 123456789.0};
    // At 10 digits the largest double prints as 1.797693135e+308, which is beyond it.
    if (roundTrip) numbers.push_back(std::numeric_limits<double>::max());
    const std::string text = std::string("quote \" backslash \\ slash / controls \x01\x1F\b\f\n\r\t ") +
                             "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 \x7F";
    JsonWriter w(roundTrip ? JsonNumbers::kRoundTrip : JsonNumbers::kDisplay);
    w.beginObject();
    w.field("text", text).field("yes", true).field("no", false).field("count", std::int64_t{-9007199254740993});
    w.key("none").null();
    w.key("numbers").numberArray(numbers);
    w.key("nested").beginArray().beginObject().field("a", 1).endObject().beginArray().endArray().endArray();
    w.key("empty").beginObject().endObject();
    w.field("text", "again");
    w.endObject();
    const auto result = parseJson(w.str());
    QVERIFY2(result.isOk(), result.status().message().c_str());
    const JsonValue& v = *result;
    QCOMPARE(v.find("text")->asString(), std::string("again"));  // the later duplicate
    QCOMPARE(v.asObject().front().value.asString(), text);
    QCOMPARE(v.find("yes")->asBool(), true);
    QCOMPARE(v.find("no")->asBool(), false);
    QCOMPARE(v.find("count")->numberText(), std::string("-9007199254740993"));
    QVERIFY(v.find("none")->isNull());
    const JsonValue::Array& read = v.find("numbers")->asArray();
    QCOMPARE(read.size(), numbers.size());
    for (std::size_t i = 0; i < numbers.size(); ++i) {
      // The writer's own 10 digits read back as the double nearest to that text.
      const double expected = roundTrip ? numbers[i] : std::strtod(read[i].numberText().c_str(), nullptr);
      QCOMPARE(read[i].asNumber(), expected);
      if (roundTrip) QCOMPARE(std::signbit(read[i].asNumber()), std::signbit(numbers[i]));
    }
    QCOMPARE(v.find("nested")->asArray()[0].find("a")->asNumber(), 1.0);
    QVERIFY(v.find("nested")->asArray()[1].asArray().empty());
    QVERIFY(v.find("empty")->asObject().empty());
  }
};

QTEST_GUILESS_MAIN(TestJsonReader)
#include "tst_json_reader.moc"
