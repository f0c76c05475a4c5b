// The privacy statement: every registry accountant in it, each verdict equal to asking the
// accountant directly (bit for bit, through the JSON text), the checks behind the verdicts, the
// hand-off snippets carrying the run, and a document that is the same every time it is computed.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <limits>
#include <string>

#include "accounting/handoff_snippets.h"
#include "accounting/privacy_statement.h"
#include "accounting/registry.h"
#include "io/json_writer.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

Q_DECLARE_METATYPE(dpx::core::Params)

namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QJsonObject parse(const PrivacyStatement& s) {
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(privacyStatementJson(s)), &error);
  if (error.error != QJsonParseError::NoError) qWarning() << error.errorString() << error.offset;
  return doc.object();
}

QJsonObject entry(const QJsonObject& doc, const char* array, const char* key, std::string_view id) {
  for (const QJsonValue& v : doc.value(QLatin1String(array)).toArray()) {
    if (v.toObject().value(QLatin1String(key)).toString() == qs(id)) return v.toObject();
  }
  return {};
}

// Tests of the statement's text rather than its numbers take a coarse bracket under sanitizers.
EpsilonOptions quickOptions() {
  EpsilonOptions options;
  if (dpx::test::kSanitizedBuild) options.exact.accuracy = 0.5;
  return options;
}

Params distinctive() {
  Params p;
  p.n = 50000;
  p.m = 123;
  p.sigma = 1.37;
  p.L = 0.75;
  p.K = 4567;
  p.delta = 3e-6;
  return p;
}

}  // namespace

class TestPrivacyStatement : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void runs_data() {
    QTest::addColumn<Params>("params");
    QTest::addColumn<double>("discretisation");  // ≤ 0: automatic
    QTest::newRow("defaults (MNIST, Bu et al. 2020 Table 1 row 2)") << Params{} << 0.0;
    Params uniform;
    uniform.sampling = Sampling::kUniform;
    uniform.neighbouring = Neighbouring::kReplaceOne;
    QTest::newRow("uniform sampling, replace-one neighbours") << uniform << 0.0;
    Params convex;
    convex.lambda = 0.0;
    convex.schedule = Schedule::kDecreasing;
    QTest::newRow("no strong convexity, decreasing schedule") << convex << 0.0;
    // A loss window too large for the exact accountant: its verdict carries the Status' message.
    Params extreme;
    extreme.sigma = 0.05;
    extreme.K = 10'000'000;
    QTest::newRow("sigma 0.05 over 1e7 steps on a coarse grid") << extreme << 0.5;
  }

  // Every accountant of the registry, in display order, with its id, name, citation and kind;
  // applicable exactly when check() is empty; its ε, order, conversion and bracket equal to asking
  // it directly — after the JSON text, so the numbers round-trip exactly.
  void runs() {
    QFETCH(Params, params);
    QFETCH(double, discretisation);
    EpsilonOptions options;
    if (discretisation > 0) {
      options.exact.discretisation = discretisation;
    } else if (dpx::test::kSanitizedBuild) {
      // t = 10 steps per epoch and a 20 % bracket: random allocation's log-grid sums at the
      // defaults' t = 235 are most of a sanitized run; the verdicts' shape is the same.
      params.n = 2560;
      options.exact.accuracy = 0.2;
    }
    const Result<PrivacyStatement> s = makePrivacyStatement(params, options);
    QVERIFY2(s.isOk(), s.status().message().c_str());
    const QJsonObject doc = parse(*s);
    QCOMPARE(doc.value(QStringLiteral("format")).toString(), qs(kStatementFormat));
    QCOMPARE(doc.value(QStringLiteral("format_version")).toInt(), kStatementFormatVersion);
    QCOMPARE(doc.value(QStringLiteral("dpexplorer_version")).toString(), qs(dpxVersion()));
    const QJsonArray accountants = doc.value(QStringLiteral("accountants")).toArray();
    QCOMPARE(accountants.size(), static_cast<qsizetype>(allAccountants().size()));
    QCOMPARE(doc.value(QStringLiteral("assumptions_checked")).toArray().size(), accountants.size());
    for (std::size_t i = 0; i < allAccountants().size(); ++i) {
      const Accountant& a = *allAccountants()[i];
      const QJsonObject o = accountants.at(static_cast<qsizetype>(i)).toObject();
      QCOMPARE(o.value(QStringLiteral("id")).toString(), qs(a.id()));
      QCOMPARE(o.value(QStringLiteral("name")).toString(), qs(a.name()));
      QCOMPARE(o.value(QStringLiteral("citation")).toString(), qs(a.citation()));
      QCOMPARE(o.value(QStringLiteral("bound")).toString(), qs(boundKindName(a.boundKind())));
      checkVerdict(a, params, options, o);
      if (QTest::currentTestFailed()) return;
    }
  }

  // The checks of each accountant say which common check failed, as check() does.
  void checksFollowTheViolations() {
    Params p;
    p.sampling = Sampling::kCyclic;
    const Result<PrivacyStatement> s = makePrivacyStatement(p);
    QVERIFY(s.isOk());
    const QJsonObject doc = parse(*s);
    for (const AccountantVerdict& v : s->verdicts) {
      const QJsonObject checked = entry(doc, "assumptions_checked", "accountant", v.accountant->id());
      const QJsonArray checks = checked.value(QStringLiteral("checks")).toArray();
      QCOMPARE(checks.size(), 4);
      bool samplingViolated = false;
      for (const Violation& x : v.violations) samplingViolated |= x.assumption == "sampling";
      const QJsonObject sampling = checks.at(1).toObject();
      QCOMPARE(sampling.value(QStringLiteral("check")).toString(), QStringLiteral("sampling"));
      QCOMPARE(sampling.value(QStringLiteral("holds")).toBool(), !samplingViolated);
      QVERIFY(sampling.value(QStringLiteral("detail")).toString().contains(QStringLiteral("the run: cyclic")));
      bool allHold = true;
      for (const QJsonValue& c : checks) allHold &= c.toObject().value(QStringLiteral("holds")).toBool();
      QCOMPARE(allHold, v.applicable());
      const QJsonArray statements = checked.value(QStringLiteral("statements")).toArray();
      QCOMPARE(statements.size(), static_cast<qsizetype>(v.accountant->assumptions().statements.size()));
      QCOMPARE(checked.value(QStringLiteral("release")).toString(),
               qs(releaseName(v.accountant->assumptions().release)));
    }
  }

  void snippetsCarryTheRun_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<QStringList>("mustContain");
    QTest::newRow("opacus")
        << static_cast<int>(HandoffTarget::kOpacus)
        << QStringList{
               "NOISE_MULTIPLIER = 1.37", "MAX_GRAD_NORM = 0.75",  "BATCH_SIZE = 123", "STEPS = 4567", "N = 50000",
               "TARGET_DELTA = 3e-06",    "poisson_sampling=True", "make_private("};
    QTest::newRow("jax-privacy") << static_cast<int>(HandoffTarget::kJaxPrivacy)
                                 << QStringList{"noise_multiplier=1.37",
                                                "clipping_norm=0.75",
                                                "batch_size=123",
                                                "train_steps=4567",
                                                "train_size=50000",
                                                "delta=3e-06",
                                                "poisson_sampling_in_fit=True",
                                                "DPKerasConfig("};
  }

  void snippetsCarryTheRun() {
    QFETCH(int, target);
    QFETCH(QStringList, mustContain);
    const Result<PrivacyStatement> s = makePrivacyStatement(distinctive(), quickOptions());
    QVERIFY(s.isOk());
    const HandoffTarget t = static_cast<HandoffTarget>(target);
    const QString snippet = QString::fromStdString(handoffSnippet(t, *s));
    for (const QString& text : mustContain) QVERIFY2(snippet.contains(text), qPrintable(text + "\n" + snippet));
    // The same text is in the statement, printable alone.
    const QJsonObject handoff = parse(*s).value(QStringLiteral("handoff")).toObject();
    const QString key = t == HandoffTarget::kOpacus ? QStringLiteral("opacus") : QStringLiteral("jax_privacy");
    QCOMPARE(handoff.value(key).toString(), snippet);
    QCOMPARE(parseHandoff(handoffName(t)), std::optional<HandoffTarget>(t));
  }

  // K steps in fit() calls of n // m steps: 4567 = 11·406 + 101 for n // m = 406.
  void kerasStepsAddUpToK() {
    const Result<PrivacyStatement> s = makePrivacyStatement(distinctive(), quickOptions());
    QVERIFY(s.isOk());
    const QString snippet = QString::fromStdString(handoffSnippet(HandoffTarget::kJaxPrivacy, *s));
    QVERIFY(snippet.contains(QStringLiteral("epochs=11, steps_per_epoch=406")));
    QVERIFY(snippet.contains(QStringLiteral("epochs=1, steps_per_epoch=101)")));
  }

  // The budget the snippets quote is the smallest applicable DP-SGD upper bound, and JAX-Privacy's
  // budget is not below it.
  void dpSgdBoundIsTheTightestApplicableUpperBound() {
    const Result<PrivacyStatement> s = makePrivacyStatement(Params{});
    QVERIFY(s.isOk());
    QVERIFY(s->dpSgdBound.has_value());
    double best = std::numeric_limits<double>::infinity();
    for (const AccountantVerdict& v : s->verdicts) {
      const AccountantInfo& info = v.accountant->info();
      if (!v.epsilon || !v.epsilon->isOk() || info.bound != BoundKind::kUpper ||
          info.assumptions.sampling != Sampling::kPoisson || info.assumptions.release != Release::kAllIterates ||
          !info.noiseSetBySigma) {
        continue;
      }
      best = std::min(best, v.epsilon->value().epsilon);
    }
    QCOMPARE(s->dpSgdBound->epsilon, best);
    const QJsonObject handoff = parse(*s).value(QStringLiteral("handoff")).toObject();
    QCOMPARE(handoff.value(QStringLiteral("dp_sgd_epsilon")).toDouble(), best);
    const QString jax = handoff.value(QStringLiteral("jax_privacy")).toString();
    const qsizetype at = jax.indexOf(QStringLiteral("epsilon=")) + 8;
    const double budget = jax.mid(at, jax.indexOf(QLatin1Char(','), at) - at).toDouble();
    QVERIFY2(budget >= best && budget <= best * 1.001, qPrintable(jax.mid(at, 20)));
  }

  // No run of Poisson DP-SGD is covered when the run samples otherwise: no budget, and a note.
  void noDpSgdBoundForAnotherScheme() {
    Params p;
    p.sampling = Sampling::kShuffle;
    const Result<PrivacyStatement> s = makePrivacyStatement(p);
    QVERIFY(s.isOk());
    QVERIFY(!s->dpSgdBound);
    const QString opacus = QString::fromStdString(handoffSnippet(HandoffTarget::kOpacus, *s));
    QVERIFY(opacus.contains(QStringLiteral("NOTE: the run samples its batches by shuffle sampling")));
    QVERIFY(parse(*s).value(QStringLiteral("handoff")).toObject().value(QStringLiteral("dp_sgd_epsilon")).isNull());
  }

  void sameDocumentEveryTime() {
    const Params p = distinctive();
    const Result<PrivacyStatement> a = makePrivacyStatement(p, quickOptions());
    const Result<PrivacyStatement> b = makePrivacyStatement(p, quickOptions());
    QVERIFY(a.isOk() && b.isOk());
    QCOMPARE(privacyStatementJson(*a), privacyStatementJson(*b));
  }

  void numbersRoundTrip_data() {
    QTest::addColumn<double>("value");
    QTest::newRow("0.1") << 0.1;
    QTest::newRow("1e-05") << 1e-5;
    QTest::newRow("1/3") << 1.0 / 3.0;
    QTest::newRow("2^-1074") << std::numeric_limits<double>::denorm_min();
    QTest::newRow("max") << std::numeric_limits<double>::max();
    QTest::newRow("14063") << 14063.0;
  }

  void numbersRoundTrip() {
    QFETCH(double, value);
    JsonWriter json(JsonNumbers::kRoundTrip);
    json.beginArray().value(value).endArray();
    const QJsonArray back = QJsonDocument::fromJson(QByteArray::fromStdString(json.str())).array();
    QCOMPARE(back.size(), 1);
    QVERIFY2(back.at(0).toDouble() == value, json.str().c_str());
    QVERIFY(pythonFloat(value).find_first_of(".en") != std::string::npos);
  }

  void refusals() {
    Params bad;
    bad.sigma = 1000;
    Result<PrivacyStatement> s = makePrivacyStatement(bad);
    QVERIFY(!s.isOk());
    QCOMPARE(s.status().code(), StatusCode::kInvalidArgument);
    QVERIFY(QString::fromStdString(s.status().message()).contains(QStringLiteral("[0.05, 100]")));
    EpsilonOptions variant;
    variant.variant = "baseline";
    QCOMPARE(makePrivacyStatement(Params{}, variant).status().code(), StatusCode::kInvalidArgument);
    EpsilonOptions accuracy;
    accuracy.exact.accuracy = 0.7;
    QCOMPARE(makePrivacyStatement(Params{}, accuracy).status().code(), StatusCode::kInvalidArgument);
    EpsilonOptions orders;
    orders.orders = {0.5};
    QCOMPARE(makePrivacyStatement(Params{}, orders).status().code(), StatusCode::kInvalidArgument);
  }

  void cancellation() {
    std::atomic<bool> cancel{true};
    EpsilonOptions options;
    options.exact.cancel = &cancel;
    QCOMPARE(makePrivacyStatement(Params{}, options).status().code(), StatusCode::kCancelled);
  }

 private:
  static void checkVerdict(const Accountant& a, const Params& p, const EpsilonOptions& options, const QJsonObject& o) {
    const std::vector<Violation> violations = a.check(p);
    QCOMPARE(o.value(QStringLiteral("applicable")).toBool(), violations.empty());
    const QJsonArray listed = o.value(QStringLiteral("violations")).toArray();
    QCOMPARE(listed.size(), static_cast<qsizetype>(violations.size()));
    for (std::size_t k = 0; k < violations.size(); ++k) {
      const QJsonObject v = listed.at(static_cast<qsizetype>(k)).toObject();
      QCOMPARE(v.value(QStringLiteral("assumption")).toString().toStdString(), violations[k].assumption);
      QCOMPARE(v.value(QStringLiteral("reason")).toString().toStdString(), violations[k].reason);
    }
    if (!violations.empty()) {
      QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("not applicable"));
      QVERIFY(o.value(QStringLiteral("epsilon")).isNull());
      return;
    }
    const Result<EpsilonResult> direct = a.epsilon(p, options);
    if (!direct) {
      QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
      QCOMPARE(o.value(QStringLiteral("error")).toString().toStdString(), direct.status().message());
      QVERIFY(o.value(QStringLiteral("epsilon")).isNull());
      return;
    }
    QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("computed"));
    QVERIFY(o.value(QStringLiteral("epsilon")).toDouble() == direct->epsilon);  // exactly
    QVERIFY(o.value(QStringLiteral("delta")).toDouble() == direct->delta);
    QCOMPARE(o.value(QStringLiteral("alpha")).isNull(), !direct->alpha.has_value());
    if (direct->alpha) QVERIFY(o.value(QStringLiteral("alpha")).toDouble() == *direct->alpha);
    if (direct->conversion) {
      QCOMPARE(o.value(QStringLiteral("conversion")).toString(), qs(conversionName(*direct->conversion)));
    }
    QCOMPARE(o.contains(QStringLiteral("epsilon_upper")), direct->epsilonUpper.has_value());
    if (direct->epsilonLower) QVERIFY(o.value(QStringLiteral("epsilon_lower")).toDouble() == *direct->epsilonLower);
    const QJsonObject native = o.value(QStringLiteral("native")).toObject();
    if (const Result<std::vector<NativeValue>> n = a.native(p)) {
      for (const NativeValue& v : *n) {
        QVERIFY2(native.contains(qs(v.key)), v.key.c_str());
        const bool overridden = std::any_of(direct->native.begin(), direct->native.end(),
                                            [&](const NativeValue& e) { return e.key == v.key; });
        if (!overridden) QVERIFY2(native.value(qs(v.key)).toDouble() == v.value, v.key.c_str());
      }
    }
    for (const NativeValue& v : direct->native) {
      QVERIFY2(native.value(qs(v.key)).toDouble() == v.value, v.key.c_str());
    }
    for (const std::string& key : a.info().nativeKeys) QVERIFY2(native.contains(qs(key)), key.c_str());
  }
};

QTEST_GUILESS_MAIN(TestPrivacyStatement)
#include "tst_privacy_statement.moc"
