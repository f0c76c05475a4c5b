// The dpx JSON contract, subcommand by subcommand: the keys and the type of every value, the
// failure branch (exit 1 with a reason) and invalid input (exit 2, one line on stderr naming the
// flag and its range, nothing on stdout). Rows are generated from the accountant and mechanism
// registries, so a new accountant or mechanism is covered without editing this file. Runs
// in-process through dpx::cli::run, plus a few rows through the real binary.
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "accounting/registry.h"
#include "cli.h"
#include "cli_util.h"
#include "common/params.h"
#include "test_util.h"
#include "training/mechanism.h"

namespace {

using dpx::core::accounting::Accountant;
using dpx::core::accounting::allAccountants;
using dpx::core::accounting::findAccountant;

using Run = dpx::test::CliRun;
inline Run dpxRun(const QString& line) { return dpx::test::runDpx(line); }

QString id(const Accountant* a) { return QString::fromUtf8(a->id().data(), static_cast<qsizetype>(a->id().size())); }
QByteArray tag(const Accountant* a) { return id(a).toUtf8(); }

// The native keys every accountant's `epsilon --json` promises (the dpx JSON contract).
const std::map<QString, QStringList>& requiredNative() {
  static const std::map<QString, QStringList> keys{
      {QStringLiteral("rdp"), {QStringLiteral("q"), QStringLiteral("sigma"), QStringLiteral("steps")}},
      {QStringLiteral("gdp"), {QStringLiteral("mu")}},
      {QStringLiteral("pld"),
       {QStringLiteral("epsilon_upper"), QStringLiteral("epsilon_lower"), QStringLiteral("discretisation")}},
      {QStringLiteral("sgld"), {QStringLiteral("sigma_L"), QStringLiteral("sum_eta")}},
      {QStringLiteral("cyclic"), {QStringLiteral("k"), QStringLiteral("ell"), QStringLiteral("Lambda_k")}},
      {QStringLiteral("outpert"), {QStringLiteral("rho"), QStringLiteral("Delta"), QStringLiteral("Delta_inf")}},
      {QStringLiteral("sgmcmc"), {QStringLiteral("sigma_eff")}},
      {QStringLiteral("deterministic"),
       {QStringLiteral("mu"), QStringLiteral("steps_per_epoch"), QStringLiteral("epochs"),
        QStringLiteral("sigma_eff")}},
      {QStringLiteral("shuffle"), {QStringLiteral("steps_per_epoch"), QStringLiteral("epochs")}},
      {QStringLiteral("random-allocation"),
       {QStringLiteral("steps_per_epoch"), QStringLiteral("selections"), QStringLiteral("epochs"),
        QStringLiteral("epsilon_upper"), QStringLiteral("epsilon_lower"), QStringLiteral("discretisation")}},
      {QStringLiteral("heuristic-last-iterate"),
       {QStringLiteral("q"), QStringLiteral("steps"), QStringLiteral("sigma"), QStringLiteral("mu_mean"),
        QStringLiteral("group_width"), QStringLiteral("epsilon_merge_lower")}},
  };
  return keys;
}

// Runs dpx with the arguments, checks its exit code and parses its one JSON line: declares the
// run `r` and the document `doc`, and fails the test function with the reason otherwise.
#define DPX_RUN_JSON(r, doc, arguments, expectedCode)             \
  const Run r = dpxRun(arguments);                                \
  QVERIFY2(r.code == (expectedCode), qPrintable(describeRun(r))); \
  QJsonDocument doc;                                              \
  do {                                                            \
    const QString parseProblem = parseJsonLine(r.out, doc);       \
    QVERIFY2(parseProblem.isEmpty(), qPrintable(parseProblem));   \
  } while (false)

bool isNumber(const QJsonValue& v) { return v.isDouble() && std::isfinite(v.toDouble()); }

bool isBoundName(const QJsonValue& v) {
  const QString s = v.toString();
  return v.isString() && (s == QLatin1String("upper") || s == QLatin1String("estimate") || s == QLatin1String("lower"));
}

QString boundName(const Accountant& a) {
  const std::string_view name = dpx::core::accounting::boundKindName(a.boundKind());
  return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

// The most significant digits of any number in a JSON or CSV text; string literals are skipped.
int maxSignificantDigits(const QString& text) {
  static const QRegularExpression strings(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\""));
  static const QRegularExpression numbers(QStringLiteral("(?<![\\w.])-?(\\d+)(?:\\.(\\d+))?(?:[eE][+-]?\\d+)?"));
  QString stripped = text;
  stripped.replace(strings, QString());
  int most = 0;
  for (QRegularExpressionMatchIterator it = numbers.globalMatch(stripped); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    QString digits = m.captured(1) + m.captured(2);
    while (digits.size() > 1 && digits.startsWith(QLatin1Char('0'))) digits.remove(0, 1);
    while (digits.size() > 1 && digits.endsWith(QLatin1Char('0'))) digits.chop(1);
    most = std::max(most, static_cast<int>(digits.size()));
  }
  return most;
}

// stdout of a --json run: one line of valid JSON whose numbers carry at most 10 significant
// digits. Returns "" or the first problem.
QString parseJsonLine(const QString& out, QJsonDocument& doc) {
  if (out.count(QLatin1Char('\n')) != 1 || !out.endsWith(QLatin1Char('\n'))) {
    return QStringLiteral("stdout is not exactly one line: ") + out.left(200);
  }
  QJsonParseError error;
  doc = QJsonDocument::fromJson(out.toUtf8(), &error);
  if (error.error != QJsonParseError::NoError) return QStringLiteral("invalid JSON: ") + error.errorString();
  if (const int digits = maxSignificantDigits(out); digits > 10) {
    return QStringLiteral("a number has %1 significant digits (at most 10)").arg(digits);
  }
  return {};
}

QString describeRun(const Run& r) {
  return QStringLiteral("exit %1; stdout: %2; stderr: %3").arg(r.code).arg(r.out.left(300), r.err.left(300));
}

// A one-line message on stderr: "dpx <command>: …\n".
QString oneErrorLine(const Run& r, const QString& command) {
  if (r.err.count(QLatin1Char('\n')) != 1 || !r.err.endsWith(QLatin1Char('\n'))) {
    return QStringLiteral("stderr is not exactly one line: ") + r.err;
  }
  if (!r.err.startsWith(QStringLiteral("dpx ") + command + QStringLiteral(": "))) {
    return QStringLiteral("stderr does not start with 'dpx %1: ': %2").arg(command, r.err);
  }
  return {};
}

QString firstWord(const QString& line) { return line.section(QLatin1Char(' '), 0, 0, QString::SectionSkipEmpty); }

struct EpsilonExpectation {
  QString conversion;       // the conversion RDP-based accountants must name
  double fixedAlpha = 0.0;  // > 0: the order they must report
  double delta = 1e-5;
  QString sampling;  // non-empty: the run's sampling, a violation where the accountant assumes another
};

QString samplingName(const Accountant& a) {
  const std::string_view name = dpx::core::samplingName(a.assumptions().sampling);
  return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

// The contracted shape of one successful `epsilon --json` object. Returns "" or the first problem.
QString epsilonObjectProblem(const QJsonObject& o, const Accountant& a, const EpsilonExpectation& e) {
  const QString name = id(&a);
  if (o.value(QStringLiteral("accountant")).toString() != name) return QStringLiteral("accountant is not ") + name;
  if (o.contains(QStringLiteral("error"))) return QStringLiteral("a success carries an error");
  const QJsonValue eps = o.value(QStringLiteral("epsilon"));
  if (!isNumber(eps) || eps.toDouble() < 0.0) return QStringLiteral("epsilon is not a number ≥ 0");
  if (!isNumber(o.value(QStringLiteral("delta")))) return QStringLiteral("delta is not a number");
  if (!dpx::test::relativelyClose(o.value(QStringLiteral("delta")).toDouble(), e.delta, 1e-12)) {
    return QStringLiteral("delta is not the requested δ");
  }
  if (!o.contains(QStringLiteral("alpha")) || !o.contains(QStringLiteral("conversion"))) {
    return QStringLiteral("alpha or conversion is missing");
  }
  const QJsonValue alpha = o.value(QStringLiteral("alpha"));
  const QJsonValue conversion = o.value(QStringLiteral("conversion"));
  if (a.hasRdp()) {
    if (!isNumber(alpha) || alpha.toDouble() < 1.01 || alpha.toDouble() > 1024.0) {
      return QStringLiteral("alpha of an RDP analysis is not a number in [1.01, 1024]");
    }
    if (e.fixedAlpha > 0.0 && alpha.toDouble() != e.fixedAlpha) return QStringLiteral("alpha is not the fixed order");
    if (conversion.toString() != e.conversion) return QStringLiteral("conversion is not ") + e.conversion;
  } else if (!alpha.isNull() || !conversion.isNull()) {
    return QStringLiteral("alpha and conversion of an analysis without Rényi orders are not null");
  }
  if (!isBoundName(o.value(QStringLiteral("bound")))) return QStringLiteral("bound is not upper|estimate|lower");
  if (o.value(QStringLiteral("bound")).toString() != boundName(a)) {
    return QStringLiteral("bound is not the accountant's");
  }
  const QJsonValue violations = o.value(QStringLiteral("violations"));
  if (!violations.isArray()) return QStringLiteral("violations is not an array");
  for (const QJsonValue& v : violations.toArray()) {
    if (!v.isString() || v.toString().isEmpty()) return QStringLiteral("a violation is not a non-empty string");
  }
  if (!e.sampling.isEmpty() && e.sampling != samplingName(a)) {
    bool named = false;
    for (const QJsonValue& v : violations.toArray()) named = named || v.toString().contains(QStringLiteral("sampling"));
    if (!named) {
      return QStringLiteral("no violation names the sampling %1 (assumed: %2)").arg(e.sampling, samplingName(a));
    }
  }
  const QJsonValue applicable = o.value(QStringLiteral("applicable"));
  if (!applicable.isBool()) return QStringLiteral("applicable is not a bool");
  if (applicable.toBool() != violations.toArray().isEmpty()) {
    return QStringLiteral("applicable disagrees with the violations");
  }
  const QJsonValue native = o.value(QStringLiteral("native"));
  if (!native.isObject()) return QStringLiteral("native is not an object");
  const auto required = requiredNative().find(name);
  if (required == requiredNative().end()) {
    return QStringLiteral("no native keys are contracted for ") + name + QStringLiteral(": add them to the contract");
  }
  const QJsonObject nativeObject = native.toObject();
  for (const QString& key : required->second) {
    if (!isNumber(nativeObject.value(key))) return QStringLiteral("native.%1 is not a finite number").arg(key);
  }
  for (auto it = nativeObject.begin(); it != nativeObject.end(); ++it) {
    if (!isNumber(it.value())) return QStringLiteral("native.%1 is not a number").arg(it.key());
  }
  if (o.contains(QStringLiteral("epsilon_upper")) || o.contains(QStringLiteral("epsilon_lower"))) {
    const double upper = o.value(QStringLiteral("epsilon_upper")).toDouble(-1.0);
    const double lower = o.value(QStringLiteral("epsilon_lower")).toDouble(-1.0);
    if (!(lower >= 0.0 && lower <= upper)) {
      return QStringLiteral("the bracket is not 0 ≤ epsilon_lower ≤ epsilon_upper");
    }
    if (eps.toDouble() != upper) return QStringLiteral("epsilon is not the pessimistic epsilon_upper");
  }
  if (o.contains(QStringLiteral("citation")) &&
      (!o.value(QStringLiteral("citation")).isString() || o.value(QStringLiteral("citation")).toString().isEmpty())) {
    return QStringLiteral("citation is not a non-empty string");
  }
  return {};
}

// The native values of the default run (knob defaults, --epochs 1) are the quantities the
// accountants' formulas name.
QString nativeFormulaProblem(const QString& name, const QJsonObject& native) {
  dpx::core::Params p;
  p.K = *dpx::core::stepsForEpochs(1.0, p.n, p.m);
  const double n = static_cast<double>(p.n);
  const double m = static_cast<double>(p.m);
  const double K = static_cast<double>(p.K);
  const double q = m / n;
  const double batches = std::ceil(n / m);
  std::map<QString, double> expected;
  if (name == QLatin1String("rdp")) {
    expected = {{QStringLiteral("q"), q}, {QStringLiteral("sigma"), p.sigma}, {QStringLiteral("steps"), K}};
  } else if (name == QLatin1String("gdp")) {
    expected = {{QStringLiteral("mu"), q * std::sqrt(K * std::expm1(1.0 / (p.sigma * p.sigma)))}};
  } else if (name == QLatin1String("sgld")) {
    expected = {{QStringLiteral("sum_eta"), K * p.eta},
                {QStringLiteral("sigma_L"), p.sigma * p.L * std::sqrt(p.eta) / (m * std::sqrt(2.0))}};
  } else if (name == QLatin1String("cyclic")) {
    const double ell = std::sqrt(1.0 + 2.0 * p.eta * p.w + p.eta * p.w * p.w / (p.M + p.w));
    double lambdaK = 0.0;
    for (int i = 0; i < static_cast<int>(batches); ++i) lambdaK += std::pow(ell, -2.0 * i);
    expected = {{QStringLiteral("k"), batches}, {QStringLiteral("ell"), ell}, {QStringLiteral("Lambda_k"), lambdaK}};
  } else if (name == QLatin1String("outpert")) {
    const double rho = std::max(std::fabs(1.0 - p.eta * p.lambda), std::fabs(1.0 - p.eta * p.beta));
    expected = {{QStringLiteral("rho"), rho},
                {QStringLiteral("Delta_inf"), 2.0 * p.eta * p.L / (m * (1.0 - std::pow(rho, batches)))}};
    const double delta = native.value(QStringLiteral("Delta")).toDouble();
    if (!(delta > 0.0 && delta <= native.value(QStringLiteral("Delta_inf")).toDouble())) {
      return QStringLiteral("Delta is not in (0, Delta_inf]");
    }
  } else if (name == QLatin1String("sgmcmc")) {
    expected = {{QStringLiteral("sigma_eff"), m / (p.L * std::sqrt(p.eta * n))}};
  } else if (name == QLatin1String("deterministic")) {
    expected = {{QStringLiteral("mu"), 1.0 / p.sigma},
                {QStringLiteral("steps_per_epoch"), batches},
                {QStringLiteral("epochs"), 1.0},
                {QStringLiteral("sigma_eff"), p.sigma}};
  } else if (name == QLatin1String("shuffle")) {
    expected = {{QStringLiteral("steps_per_epoch"), batches}, {QStringLiteral("epochs"), 1.0}};
  } else if (name == QLatin1String("random-allocation")) {
    // k = 1 of t = ⌈n/m⌉ steps, the one epoch of the base run.
    expected = {{QStringLiteral("steps_per_epoch"), batches},
                {QStringLiteral("selections"), 1.0},
                {QStringLiteral("epochs"), 1.0}};
  } else if (name == QLatin1String("heuristic-last-iterate")) {
    expected = {{QStringLiteral("q"), q},
                {QStringLiteral("steps"), K},
                {QStringLiteral("sigma"), p.sigma},
                {QStringLiteral("mu_mean"), std::sqrt(K) * q / p.sigma}};
    if (!(native.value(QStringLiteral("group_width")).toDouble() >= 1.0)) return QStringLiteral("group_width < 1");
  }
  for (const auto& [key, value] : expected) {
    const double actual = native.value(key).toDouble(std::nan(""));
    if (!dpx::test::relativelyClose(actual, value, 1e-8)) {
      return QStringLiteral("native.%1 = %2, the formula gives %3")
          .arg(key)
          .arg(actual, 0, 'g', 12)
          .arg(value, 0, 'g', 12);
    }
  }
  return {};
}

// The failure branch of `epsilon --json`: ε null, a reason, the contracted keys still there.
QString epsilonFailureProblem(const QJsonObject& o, const Accountant& a, const QString& mustMention) {
  if (o.value(QStringLiteral("accountant")).toString() != id(&a)) return QStringLiteral("accountant is not ") + id(&a);
  if (!o.contains(QStringLiteral("epsilon")) || !o.value(QStringLiteral("epsilon")).isNull()) {
    return QStringLiteral("epsilon is not null");
  }
  const QString error = o.value(QStringLiteral("error")).toString();
  if (error.isEmpty()) return QStringLiteral("error is not a non-empty string");
  if (!error.contains(mustMention)) {
    return QStringLiteral("error does not say ") + mustMention + QStringLiteral(": ") + error;
  }
  if (!isNumber(o.value(QStringLiteral("delta")))) return QStringLiteral("delta is not a number");
  if (!o.contains(QStringLiteral("alpha")) || !o.value(QStringLiteral("alpha")).isNull()) {
    return QStringLiteral("alpha is not null");
  }
  if (!o.contains(QStringLiteral("conversion")) || !o.value(QStringLiteral("conversion")).isNull()) {
    return QStringLiteral("conversion is not null");
  }
  if (o.value(QStringLiteral("bound")).toString() != boundName(a)) {
    return QStringLiteral("bound is not the accountant's");
  }
  if (o.value(QStringLiteral("applicable")) != QJsonValue(false)) return QStringLiteral("applicable is not false");
  if (!o.value(QStringLiteral("violations")).isArray()) return QStringLiteral("violations is not an array");
  const QJsonObject native = o.value(QStringLiteral("native")).toObject();
  for (const QString& key : requiredNative().at(id(&a))) {
    const QJsonValue v = native.value(key);
    if (!native.contains(key) || !(v.isNull() || isNumber(v))) {
      return QStringLiteral("native.%1 is missing or neither a number nor null").arg(key);
    }
  }
  return {};
}

// The ROC band, Gaussian-DP μ and f-DP audit keys of an audit object; fdp_audit is an object
// when the run has a proven curve (`private`), else null.
QString rocBandProblem(const QJsonObject& o, bool isPrivate) {
  const QJsonObject band = o.value(QStringLiteral("roc_band")).toObject();
  if (!band.value(QStringLiteral("method")).isString()) return QStringLiteral("roc_band.method is not a string");
  if (!isNumber(band.value(QStringLiteral("confidence")))) return QStringLiteral("roc_band.confidence");
  const QJsonArray points = band.value(QStringLiteral("points")).toArray();
  if (points.isEmpty()) return QStringLiteral("roc_band has no points");
  for (const QJsonValue& v : points) {
    const QJsonObject p = v.toObject();
    const double values[] = {p.value(QStringLiteral("fpr_lower")).toDouble(-1),
                             p.value(QStringLiteral("fpr")).toDouble(-1),
                             p.value(QStringLiteral("fpr_upper")).toDouble(-1)};
    const double tprs[] = {p.value(QStringLiteral("tpr_lower")).toDouble(-1),
                           p.value(QStringLiteral("tpr")).toDouble(-1),
                           p.value(QStringLiteral("tpr_upper")).toDouble(-1)};
    if (!(0 <= values[0] && values[0] <= values[1] && values[1] <= values[2] && values[2] <= 1)) {
      return QStringLiteral("a roc_band point has fpr_lower ≤ fpr ≤ fpr_upper out of order or outside [0, 1]");
    }
    if (!(0 <= tprs[0] && tprs[0] <= tprs[1] && tprs[1] <= tprs[2] && tprs[2] <= 1)) {
      return QStringLiteral("a roc_band point has tpr_lower ≤ tpr ≤ tpr_upper out of order or outside [0, 1]");
    }
  }
  const QJsonArray mu = o.value(QStringLiteral("mu_interval")).toArray();
  const double muHat = o.value(QStringLiteral("mu_hat")).toDouble(-1);
  if (mu.size() != 2 || !(0 <= mu.at(0).toDouble(-1) && mu.at(0).toDouble() <= muHat && muHat <= mu.at(1).toDouble())) {
    return QStringLiteral("mu_interval is not [lo, hi] around mu_hat with lo ≥ 0");
  }
  if (!o.value(QStringLiteral("band_contradiction")).isBool()) return QStringLiteral("band_contradiction");
  if (!o.value(QStringLiteral("band_flagged")).isArray()) return QStringLiteral("band_flagged is not an array");
  const QJsonValue fdp = o.value(QStringLiteral("fdp_audit"));
  if (!isPrivate) return fdp.isNull() ? QString() : QStringLiteral("fdp_audit is not null for a non-private run");
  const QJsonObject f = fdp.toObject();
  for (const char* key : {"confidence", "p_value", "mu_lower_bound"}) {
    if (!isNumber(f.value(QLatin1String(key)))) return QStringLiteral("fdp_audit.%1").arg(QLatin1String(key));
  }
  if (!f.value(QStringLiteral("rejected")).isBool() || !f.value(QStringLiteral("family")).isString() ||
      !f.value(QStringLiteral("method")).isString()) {
    return QStringLiteral("fdp_audit lacks rejected, family or method");
  }
  return {};
}

// The `train` part of a train or audit object.
QString trainObjectProblem(const QJsonObject& o, dpx::core::training::Mechanism mechanism, int epochs) {
  const std::string_view mid = dpx::core::training::mechanismId(mechanism);
  const bool isPrivate = !dpx::core::training::accountantsFor(mechanism).empty();
  if (o.value(QStringLiteral("mechanism")).toString() !=
      QString::fromUtf8(mid.data(), static_cast<qsizetype>(mid.size()))) {
    return QStringLiteral("mechanism is not the one asked for");
  }
  const QJsonValue eps = o.value(QStringLiteral("epsilon"));
  if (!o.contains(QStringLiteral("epsilon"))) return QStringLiteral("epsilon is missing");
  if (isPrivate && !(isNumber(eps) && eps.toDouble() > 0.0)) return QStringLiteral("epsilon is not a number > 0");
  if (!isPrivate && !eps.isNull()) return QStringLiteral("epsilon of a non-private run is not null");
  const double delta = o.value(QStringLiteral("delta")).toDouble(-1.0);
  if (!isNumber(o.value(QStringLiteral("delta"))) || !(delta > 0.0 && delta <= 0.1)) {
    return QStringLiteral("delta is not a number in (0, 0.1]");
  }
  if (!isNumber(o.value(QStringLiteral("sigma"))) || !(o.value(QStringLiteral("sigma")).toDouble() > 0.0)) {
    return QStringLiteral("sigma is not a number > 0");
  }
  if (!isNumber(o.value(QStringLiteral("epochs"))) || o.value(QStringLiteral("epochs")).toDouble() != epochs) {
    return QStringLiteral("epochs is not %1").arg(epochs);
  }
  if (!isNumber(o.value(QStringLiteral("seconds"))) || o.value(QStringLiteral("seconds")).toDouble() < 0.0) {
    return QStringLiteral("seconds is not a number ≥ 0");
  }
  const QJsonValue historyValue = o.value(QStringLiteral("history"));
  const QJsonArray history = historyValue.toArray();
  if (!historyValue.isArray() || history.size() != epochs) {
    return QStringLiteral("history is not an array of %1 epochs").arg(epochs);
  }
  double lastSpent = 0.0;
  for (qsizetype i = 0; i < history.size(); ++i) {
    const QJsonObject h = history.at(i).toObject();
    if (h.value(QStringLiteral("epoch")).toDouble(-1.0) != static_cast<double>(i + 1)) {
      return QStringLiteral("history[%1].epoch is not %2").arg(i).arg(i + 1);
    }
    for (const char* key : {"train_accuracy", "test_accuracy"}) {
      const QJsonValue v = h.value(QLatin1String(key));
      if (!isNumber(v) || v.toDouble() < 0.0 || v.toDouble() > 1.0) {
        return QStringLiteral("history[%1].%2 is not a number in [0, 1]").arg(i).arg(QLatin1String(key));
      }
    }
    if (!isNumber(h.value(QStringLiteral("loss"))) || h.value(QStringLiteral("loss")).toDouble() < 0.0) {
      return QStringLiteral("history[%1].loss is not a number ≥ 0").arg(i);
    }
    const QJsonValue spent = h.value(QStringLiteral("epsilon_spent"));
    if (!h.contains(QStringLiteral("epsilon_spent"))) {
      return QStringLiteral("history[%1].epsilon_spent is missing").arg(i);
    }
    if (!isPrivate) {
      if (!spent.isNull()) return QStringLiteral("history[%1].epsilon_spent of a non-private run is not null").arg(i);
      continue;
    }
    if (!isNumber(spent) || spent.toDouble() < lastSpent) {
      return QStringLiteral("history[%1].epsilon_spent is not a number ≥ the epoch before").arg(i);
    }
    lastSpent = spent.toDouble();
  }
  if (isPrivate && !dpx::test::relativelyClose(lastSpent, eps.toDouble(), 1e-9)) {
    return QStringLiteral("the last epoch's epsilon_spent %1 is not the run's epsilon %2")
        .arg(lastSpent)
        .arg(eps.toDouble());
  }
  return {};
}

// x of a curve: `points` numbers from `from` to `to`, increasing.
QString axisProblem(const std::vector<double>& xs, double from, double to, int points) {
  if (static_cast<int>(xs.size()) != points) return QStringLiteral("%1 x values, not %2").arg(xs.size()).arg(points);
  if (!dpx::test::relativelyClose(xs.front(), from, 1e-9) || !dpx::test::relativelyClose(xs.back(), to, 1e-9)) {
    return QStringLiteral("x does not run from --from to --to");
  }
  for (std::size_t i = 1; i < xs.size(); ++i) {
    if (!(xs[i] > xs[i - 1])) return QStringLiteral("x is not increasing at %1").arg(i);
  }
  return {};
}

}  // namespace

class TestDpxJsonContract : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // `epsilon --json` for every accountant of the registry and for `all`.
  void epsilonJson_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("accountant");  // an id, or "all" for the array
    QTest::addColumn<QString>("conversion");
    QTest::addColumn<double>("fixedAlpha");
    QTest::addColumn<double>("delta");
    QTest::addColumn<QString>("sampling");
    QTest::addColumn<bool>("defaultKnobs");
    const QString base = QStringLiteral("epsilon --epochs 1 --json --accountant ");
    QStringList ids;
    for (const Accountant* a : allAccountants()) ids << id(a);
    ids << QStringLiteral("all");
    for (const QString& name : ids) {
      const QByteArray tag = name.toUtf8();
      QTest::addRow("%s: default run, native values match the formulas", tag.constData())
          << base + name << name << "improved" << 0.0 << 1e-5 << QString() << true;
      QTest::addRow("%s: classic conversion is named, delta echoed", tag.constData())
          << base + name + QStringLiteral(" --conversion classic --delta 1e-7") << name << "classic" << 0.0 << 1e-7
          << QString() << false;
      QTest::addRow("%s: fixed order alpha 8 is reported", tag.constData())
          << base + name + QStringLiteral(" --alpha 8") << name << "improved" << 8.0 << 1e-5 << QString() << false;
      // A sampling the accountant does not assume (for `all`: cyclic, assumed by some only).
      QString other = QStringLiteral("cyclic");
      if (name != QLatin1String("all")) {
        const QString own = samplingName(*findAccountant(name.toStdString()));
        other = own == QLatin1String("poisson") ? QStringLiteral("shuffle") : QStringLiteral("poisson");
      }
      QTest::addRow("%s: sampling %s it does not assume is a violation, applicable false", tag.constData(),
                    qPrintable(other))
          << base + name + QStringLiteral(" --sampling ") + other << name << "improved" << 0.0 << 1e-5 << other
          << false;
      if (name == QLatin1String("all")) continue;
      for (const auto& variant : findAccountant(name.toStdString())->variants()) {
        if (variant.id.empty()) continue;
        QTest::addRow("%s: variant %s keeps the shape", tag.constData(), variant.id.c_str())
            << base + name + QStringLiteral(" --variant ") + QString::fromStdString(variant.id) << name << "improved"
            << 0.0 << 1e-5 << QString() << false;
      }
    }
  }
  void epsilonJson() {
    QFETCH(QString, args);
    QFETCH(QString, accountant);
    QFETCH(QString, conversion);
    QFETCH(double, fixedAlpha);
    QFETCH(double, delta);
    QFETCH(QString, sampling);
    QFETCH(bool, defaultKnobs);
    DPX_RUN_JSON(r, doc, args, dpx::cli::kExitOk);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const EpsilonExpectation expect{conversion, fixedAlpha, delta, sampling};
    std::vector<std::pair<const Accountant*, QJsonObject>> objects;
    if (accountant == QLatin1String("all")) {
      QVERIFY2(doc.isArray(), "--accountant all does not print an array");
      const QJsonArray array = doc.array();
      QCOMPARE(array.size(), static_cast<qsizetype>(allAccountants().size()));
      for (qsizetype i = 0; i < array.size(); ++i) {
        QVERIFY2(array.at(i).isObject(), "an element of the array is not an object");
        objects.emplace_back(allAccountants()[static_cast<std::size_t>(i)], array.at(i).toObject());
      }
    } else {
      QVERIFY2(doc.isObject(), "one accountant does not print an object");
      objects.emplace_back(findAccountant(accountant.toStdString()), doc.object());
    }
    for (const auto& [a, o] : objects) {
      const QString problem = epsilonObjectProblem(o, *a, expect);
      QVERIFY2(problem.isEmpty(), qPrintable(id(a) + QStringLiteral(": ") + problem));
      if (defaultKnobs) {
        const QString formula = nativeFormulaProblem(id(a), o.value(QStringLiteral("native")).toObject());
        QVERIFY2(formula.isEmpty(), qPrintable(id(a) + QStringLiteral(": ") + formula));
      }
    }
  }

  // A valid run an accountant cannot account for: ε null, a reason, exit 1 (for one accountant)
  // or the failing entry reported in place among the others (exit 0 for `all`).
  void epsilonFailure_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("failing");
    QTest::addColumn<QString>("mustMention");
    QTest::addColumn<int>("code");
    const QString outpert = QStringLiteral("--eta 10 --beta 1 --averaged --K 400 --json");
    QTest::newRow("outpert: averaged release with rho >= 1 has Delta_E beyond 1e300, exit 1")
        << QStringLiteral("epsilon --accountant outpert ") + outpert << "outpert"
        << "Δ_E" << 1;
    QTest::newRow("sgld: decreasing schedule with a subnormal beta has no first step, exit 1")
        << "epsilon --accountant sgld --schedule decreasing --beta 1e-320 --json"
        << "sgld"
        << "η₀" << 1;
    QTest::newRow("all: the failing outpert entry is null with its reason, the others numbers, exit 0")
        << QStringLiteral("epsilon --accountant all ") + outpert + dpx::test::quickRun() << "outpert"
        << "Δ_E" << 0;
  }
  void epsilonFailure() {
    QFETCH(QString, args);
    QFETCH(QString, failing);
    QFETCH(QString, mustMention);
    QFETCH(int, code);
    DPX_RUN_JSON(r, doc, args, code);
    const Accountant* a = findAccountant(failing.toStdString());
    QVERIFY(a != nullptr);
    if (doc.isObject()) {
      const QString problem = epsilonFailureProblem(doc.object(), *a, mustMention);
      QVERIFY2(problem.isEmpty(), qPrintable(problem));
      return;
    }
    QVERIFY2(doc.isArray(), "neither an object nor an array");
    bool seen = false;
    for (const QJsonValue& v : doc.array()) {
      const QJsonObject o = v.toObject();
      if (o.value(QStringLiteral("accountant")).toString() == failing) {
        const QString problem = epsilonFailureProblem(o, *a, mustMention);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        seen = true;
      } else {
        QVERIFY2(isNumber(o.value(QStringLiteral("epsilon"))),
                 qPrintable(o.value(QStringLiteral("accountant")).toString() + QStringLiteral(" has no ε")));
        QVERIFY(!o.contains(QStringLiteral("error")));
      }
    }
    QVERIFY2(seen, "the failing accountant is missing from the array");
  }

  // Invalid input: exit 2, nothing on stdout even with --json, one line naming flag and range.
  void invalidInput_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QStringList>("mustMention");
    auto row = [](const char* name, const char* args, QStringList mention) {
      QTest::newRow(name) << QString::fromUtf8(args) << mention;
    };
    row("epsilon: unknown flag is named", "epsilon --accountant rdp --frobnicate 3 --json", {"--frobnicate"});
    row("epsilon: sigma above range names [0.05, 100]", "epsilon --accountant rdp --sigma 200 --json",
        {"--sigma", "[0.05, 100]"});
    row("epsilon: delta above range names (0, 1) and the sliders' range", "epsilon --accountant gdp --delta 1 --json",
        {"--delta", "(0, 1)", "[1e-15, 0.1]"});
    row("epsilon: alpha below range names [1.01, 1024]", "epsilon --accountant rdp --alpha 0.5 --json",
        {"--alpha", "[1.01, 1024]"});
    row("epsilon: pld discretisation names (0, 1]", "epsilon --accountant pld --discretisation 2 --json",
        {"--discretisation", "(0, 1]"});
    row("epsilon: pld accuracy names (0, 0.5]", "epsilon --accountant pld --accuracy 0.9 --json",
        {"--accuracy", "(0, 0.5]"});
    row("epsilon: unknown conversion names both", "epsilon --accountant rdp --conversion fancy --json",
        {"--conversion", "improved", "classic"});
    row("epsilon: unknown accountant lists the ids", "epsilon --accountant nope --json", {"--accountant", "rdp, gdp"});
    row("epsilon: unknown variant of rdp is named", "epsilon --accountant rdp --variant nope --json",
        {"--variant", "no variants"});
    row("epsilon: unknown variant of cyclic lists its variants", "epsilon --accountant cyclic --variant nope --json",
        {"--variant", "first-batch"});
    row("rdp: order below range names [1.01, 1024]", "rdp --accountant rdp --alphas 0.5 --json",
        {"--alphas", "[1.01, 1024]"});
    row("rdp: unknown variant of sgld lists its variants", "rdp --accountant sgld --variant nope --alphas 2 --json",
        {"--variant", "baseline"});
    for (const Accountant* a : allAccountants()) {
      if (a->hasRdp()) continue;
      const QString args = QStringLiteral("rdp --accountant %1 --alphas 2 --json").arg(id(a));
      QTest::addRow("rdp: %s has no RDP curve", tag(a).constData())
          << args << QStringList{QStringLiteral("--accountant"), id(a)};
    }
    row("delta: negative epsilon names >= 0", "delta --accountant rdp --epsilon -1 --json", {"--epsilon", "≥ 0"});
    row("delta: missing epsilon is named", "delta --accountant rdp --json", {"--epsilon"});
    row("curve: one point names [2, 100000]", "curve --accountant rdp --vary K --from 1 --to 10 --points 1 --json",
        {"--points", "[2, 100000]"});
    row("curve: unknown knob lists the knobs", "curve --accountant rdp --vary zeta --from 1 --to 10 --points 3 --json",
        {"--vary", "K, epochs, sigma, n, m, eta"});
    row("curve: K range starting at 0 names --from and [1, 1e+07]",
        "curve --accountant rdp --vary K --from 0 --to 10 --points 3 --json", {"--from", "[1, 1e+07]"});
    row("curve: sigma range beyond 100 names --to and [0.05, 100]",
        "curve --accountant rdp --vary sigma --from 1 --to 200 --points 3 --json", {"--to", "[0.05, 100]"});
    row("curve: unknown variant of cyclic lists its variants",
        "curve --accountant cyclic --variant nope --vary K --from 1 --to 10 --points 3 --json",
        {"--variant", "baseline"});
    row("curve: json and csv together", "curve --accountant rdp --vary K --from 1 --to 10 --points 3 --json --csv",
        {"--json", "--csv"});
    row("tradeoff: two points names [3, 100000]", "tradeoff --mu 1 --points 2 --json", {"--points", "[3, 100000]"});
    row("tradeoff: mu 0 names (0, 1000]", "tradeoff --mu 0 --json", {"--mu", "(0, 1000]"});
    row("tradeoff: mu and accountant together", "tradeoff --mu 1 --accountant rdp --json", {"--mu", "--accountant"});
    row("calibrate: target 0 names > 0", "calibrate --accountant rdp --target-epsilon 0 --json",
        {"--target-epsilon", "> 0"});
    row("calibrate: unknown variant of sgld lists its variants",
        "calibrate --accountant sgld --variant nope --target-epsilon 1 --json", {"--variant", "closed-form"});
    row("stepsize: negative target names > 0", "stepsize --target-epsilon -1 --json", {"--target-epsilon", "> 0"});
    row("stepsize: K 0 names [1, 1e+07]", "stepsize --target-epsilon 1 --K 0 --json", {"--K", "[1, 1e+07]"});
    row("train: epochs 0 names (0, 1e5]", "train --data builtin:digits --epochs 0 --json", {"--epochs", "(0, 1e5]"});
    row("train: threads above range names [0, 1024]", "train --data builtin:digits --threads 2000 --json",
        {"--threads", "[0, 1024]"});
    row("train: test fraction 1 names [0, 1)", "train --data builtin:digits --test-fraction 1 --json",
        {"--test-fraction", "[0, 1)"});
    row("train: unknown mechanism lists the mechanisms", "train --data builtin:digits --mechanism magic --json",
        {"--mechanism", "dp-sgd", "sgld-posterior"});
    row("train: n is set by the data", "train --data builtin:digits --n 100 --json", {"--n"});
    row("audit: no shadow models names [1, 1024]", "audit --data builtin:digits --shadow-models 0 --json",
        {"--shadow-models", "[1, 1024]"});
    row("audit: confidence below range names [0.5, 1)", "audit --data builtin:digits --confidence 0.2 --json",
        {"--confidence", "[0.5, 1)"});
  }
  void invalidInput() {
    QFETCH(QString, args);
    QFETCH(QStringList, mustMention);
    const Run r = dpxRun(args);
    QVERIFY2(r.code == dpx::cli::kExitUsage, qPrintable(describeRun(r)));
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    const QString line = oneErrorLine(r, firstWord(args));
    QVERIFY2(line.isEmpty(), qPrintable(line));
    for (const QString& text : mustMention) {
      QVERIFY2(r.err.contains(text), qPrintable(QStringLiteral("'%1' not in: %2").arg(text, r.err)));
    }
  }

  // Valid requests that cannot be met: exit 1, one line with the reason, nothing on stdout.
  void refusalExitsOne_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("mustMention");
    for (const Accountant* a : allAccountants()) {
      const QString pld = a->isAnalytic() ? QString() : QStringLiteral(" --discretisation 0.01");
      if (!a->noiseSetBySigma()) {
        QTest::addRow("calibrate %s: sigma does not set its noise, refused pointing to stepsize", tag(a).constData())
            << QStringLiteral("calibrate --accountant %1 --epochs 1 --target-epsilon 1 --json").arg(id(a))
            << "stepsize";
        continue;
      }
      if (a->boundKind() == dpx::core::accounting::BoundKind::kLower) {
        QTest::addRow("calibrate %s: a lower bound is refused, saying why", tag(a).constData())
            << QStringLiteral("calibrate --accountant %1 --epochs 1 --target-epsilon 1 --json").arg(id(a))
            << "lower bound";
        continue;
      }
      QTest::addRow("calibrate %s: unreachable target says so", tag(a).constData())
          << QStringLiteral("calibrate --accountant %1 --epochs 1 --target-epsilon 1e-9 --json").arg(id(a)) + pld
          << "unreachable";
    }
    QTest::newRow("stepsize: a target that never limits the step size says so")
        << "stepsize --target-epsilon 1e300 --json"
        << "not limited by privacy";
    QTest::newRow("train dp-sgd: unreachable target is a failure, not invalid input")
        << "train --data builtin:digits --mechanism dp-sgd --target-epsilon 1e-9 --epochs 1 --json --quiet"
        << "unreachable";
    QTest::newRow("train sgld-posterior: unreachable target is a failure, not invalid input")
        << "train --data builtin:digits --mechanism sgld-posterior --target-epsilon 1e-9 --epochs 1 --json --quiet"
        << "unreachable";
    QTest::newRow("audit dp-sgd: unreachable target is a failure, not invalid input")
        << "audit --data builtin:breast-cancer --mechanism dp-sgd --target-epsilon 1e-9 --epochs 1 --json --quiet"
        << "unreachable";
  }
  void refusalExitsOne() {
    QFETCH(QString, args);
    QFETCH(QString, mustMention);
    const Run r = dpxRun(args);
    QVERIFY2(r.code == dpx::cli::kExitFailure, qPrintable(describeRun(r)));
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    const QString line = oneErrorLine(r, firstWord(args));
    QVERIFY2(line.isEmpty(), qPrintable(line));
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
  }

  // `rdp --json`: {accountant, alphas[], rdp[]}, same lengths, finite, non-decreasing in α.
  void rdpJson_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("accountant");
    QTest::addColumn<QList<double>>("alphas");  // empty: the default grid
    for (const Accountant* a : allAccountants()) {
      if (!a->hasRdp()) continue;
      QTest::addRow("%s: given orders echoed, RDP non-decreasing", tag(a).constData())
          << QStringLiteral("rdp --accountant %1 --alphas 1.5,2,4,8.5,64 --json").arg(id(a)) << id(a)
          << QList<double>{1.5, 2, 4, 8.5, 64};
      QTest::addRow("%s: default order grid, RDP non-decreasing", tag(a).constData())
          << QStringLiteral("rdp --accountant %1 --epochs 1 --json").arg(id(a)) << id(a) << QList<double>{};
    }
  }
  void rdpJson() {
    QFETCH(QString, args);
    QFETCH(QString, accountant);
    QFETCH(QList<double>, alphas);
    DPX_RUN_JSON(r, doc, args, dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), accountant);
    QVERIFY(o.value(QStringLiteral("alphas")).isArray());
    QVERIFY(o.value(QStringLiteral("rdp")).isArray());
    const QJsonArray orders = o.value(QStringLiteral("alphas")).toArray();
    const QJsonArray values = o.value(QStringLiteral("rdp")).toArray();
    QCOMPARE(values.size(), orders.size());
    if (alphas.isEmpty()) {
      QVERIFY2(orders.size() > 100, "the default grid has fewer than 100 orders");
    } else {
      QCOMPARE(orders.size(), alphas.size());
      for (qsizetype i = 0; i < alphas.size(); ++i) QCOMPARE(orders.at(i).toDouble(), alphas.at(i));
    }
    for (qsizetype i = 0; i < orders.size(); ++i) {
      QVERIFY2(isNumber(orders.at(i)) && orders.at(i).toDouble() > 1.0, "an order is not a number > 1");
      QVERIFY2(isNumber(values.at(i)) && values.at(i).toDouble() >= 0.0, "an RDP value is not a number ≥ 0");
      if (i == 0) continue;
      QVERIFY2(orders.at(i).toDouble() > orders.at(i - 1).toDouble(), "orders are not increasing");
      QVERIFY2(values.at(i).toDouble() >= values.at(i - 1).toDouble() * (1.0 - 1e-12),
               qPrintable(QStringLiteral("RDP decreases from α = %1 to %2")
                              .arg(orders.at(i - 1).toDouble())
                              .arg(orders.at(i).toDouble())));
    }
  }

  // `delta --json`: {accountant, epsilon, delta} with δ in [0, 1], pld's bracket, and δ(ε(δ₀)) = δ₀.
  void deltaJson_data() {
    QTest::addColumn<QString>("accountant");
    QTest::addColumn<double>("epsilon");  // < 0: use the accountant's own ε at δ = 1e-5
    for (const Accountant* a : allAccountants()) {
      QTest::addRow("%s: delta at epsilon 1 in [0, 1]", tag(a).constData()) << id(a) << 1.0;
      QTest::addRow("%s: delta at epsilon 0 in [0, 1]", tag(a).constData()) << id(a) << 0.0;
      QTest::addRow("%s: delta at its own epsilon(1e-5) is 1e-5", tag(a).constData()) << id(a) << -1.0;
    }
  }
  void deltaJson() {
    QFETCH(QString, accountant);
    QFETCH(double, epsilon);
    QString epsilonText = QString::number(epsilon, 'g', 17);
    const bool roundTrip = epsilon < 0.0;
    if (roundTrip) {
      const Run e = dpxRun(QStringLiteral("epsilon --accountant %1 --epochs 1 --json").arg(accountant));
      QVERIFY2(e.code == dpx::cli::kExitOk, qPrintable(describeRun(e)));
      const QJsonValue value = QJsonDocument::fromJson(e.out.toUtf8()).object().value(QStringLiteral("epsilon"));
      QVERIFY(isNumber(value));
      epsilon = value.toDouble();
      epsilonText = QString::number(epsilon, 'g', 17);
    }
    DPX_RUN_JSON(r, doc,
                 QStringLiteral("delta --accountant %1 --epochs 1 --epsilon %2 --json").arg(accountant, epsilonText),
                 dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), accountant);
    QVERIFY(isNumber(o.value(QStringLiteral("epsilon"))));
    DPX_COMPARE_REL(o.value(QStringLiteral("epsilon")).toDouble(), epsilon, 1e-9);
    const QJsonValue delta = o.value(QStringLiteral("delta"));
    QVERIFY2(isNumber(delta) && delta.toDouble() >= 0.0 && delta.toDouble() <= 1.0, "delta is not a number in [0, 1]");
    if (o.contains(QStringLiteral("delta_upper")) || o.contains(QStringLiteral("delta_lower"))) {
      const double upper = o.value(QStringLiteral("delta_upper")).toDouble(-1.0);
      const double lower = o.value(QStringLiteral("delta_lower")).toDouble(-1.0);
      QVERIFY2(lower >= 0.0 && lower <= upper && upper <= 1.0, "the δ bracket is not 0 ≤ lower ≤ upper ≤ 1");
      QCOMPARE(delta.toDouble(), upper);  // the contracted δ is the pessimistic one
    }
    if (o.contains(QStringLiteral("bound"))) QVERIFY(isBoundName(o.value(QStringLiteral("bound"))));
    if (roundTrip) DPX_COMPARE_REL(delta.toDouble(), 1e-5, 1e-6);
  }

  // `curve --csv` (header x,<id>,…, one row per point) and `curve --json` on the same requests.
  void curveCsv_data() { curveRows(); }
  void curveCsv() {
    QFETCH(QString, args);
    QFETCH(QStringList, ids);
    QFETCH(QString, vary);
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(int, points);
    QFETCH(bool, gaps);
    const Run r = dpxRun(args + QStringLiteral(" --csv"));
    QVERIFY2(r.code == dpx::cli::kExitOk, qPrintable(describeRun(r)));
    QVERIFY2(maxSignificantDigits(r.out) <= 10, "a number has more than 10 significant digits");
    const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), points + 1);
    QCOMPARE(lines.first(), QStringLiteral("x,") + ids.join(QLatin1Char(',')));
    std::vector<double> xs;
    QStringList withGaps;  // accountants with an empty cell: stderr says why, one line each
    for (qsizetype i = 1; i < lines.size(); ++i) {
      const QStringList cells = lines.at(i).split(QLatin1Char(','));
      QCOMPARE(cells.size(), ids.size() + 1);
      bool ok = false;
      xs.push_back(cells.first().toDouble(&ok));
      QVERIFY2(ok, qPrintable(QStringLiteral("x is not a number: ") + lines.at(i)));
      for (qsizetype c = 1; c < cells.size(); ++c) {
        if (cells.at(c).isEmpty()) {
          if (!withGaps.contains(ids.at(c - 1))) withGaps << ids.at(c - 1);
          continue;
        }
        const double v = cells.at(c).toDouble(&ok);
        QVERIFY2(ok && std::isfinite(v) && v >= 0.0, qPrintable(QStringLiteral("bad ε cell: ") + lines.at(i)));
      }
    }
    const QString axis = axisProblem(xs, from, to, points);
    QVERIFY2(axis.isEmpty(), qPrintable(axis));
    QCOMPARE(!withGaps.isEmpty(), gaps);
    QCOMPARE(r.err.count(QLatin1Char('\n')), withGaps.size());
    for (const QString& gap : withGaps) {
      QVERIFY2(r.err.contains(QStringLiteral("dpx curve: ") + gap + QStringLiteral(": ")), qPrintable(r.err));
    }
    Q_UNUSED(vary);
  }
  void curveJson_data() { curveRows(); }
  void curveJson() {
    QFETCH(QString, args);
    QFETCH(QStringList, ids);
    QFETCH(QString, vary);
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(int, points);
    QFETCH(bool, gaps);
    DPX_RUN_JSON(r, doc, args + QStringLiteral(" --json"), dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("vary")).toString(), vary);
    QVERIFY(isNumber(o.value(QStringLiteral("delta"))));
    std::vector<double> xs;
    for (const QJsonValue& x : o.value(QStringLiteral("x")).toArray()) {
      QVERIFY(isNumber(x));
      xs.push_back(x.toDouble());
    }
    const QString axis = axisProblem(xs, from, to, points);
    QVERIFY2(axis.isEmpty(), qPrintable(axis));
    const QJsonArray curves = o.value(QStringLiteral("curves")).toArray();
    QCOMPARE(curves.size(), ids.size());
    bool anyGap = false;
    for (qsizetype i = 0; i < curves.size(); ++i) {
      const QJsonObject c = curves.at(i).toObject();
      QCOMPARE(c.value(QStringLiteral("accountant")).toString(), ids.at(i));
      const QJsonArray eps = c.value(QStringLiteral("epsilon")).toArray();
      QCOMPARE(eps.size(), static_cast<qsizetype>(points));
      bool anyNull = false;
      for (const QJsonValue& e : eps) {
        QVERIFY2(e.isNull() || (isNumber(e) && e.toDouble() >= 0.0), "an ε is neither null nor a number ≥ 0");
        anyNull = anyNull || e.isNull();
      }
      if (anyNull) QVERIFY2(c.value(QStringLiteral("error")).isString(), "a missing ε without an error");
      anyGap = anyGap || anyNull;
    }
    QCOMPARE(anyGap, gaps);
  }

  // `tradeoff --json`: {x[], y[]}, x from 0 to 1, y in [0, 1] non-increasing and below 1 − x.
  void tradeoffJson_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("points");
    QTest::newRow("G_mu with mu 0.5") << "tradeoff --mu 0.5 --points 9 --json"
                                      << "G_mu" << 9;
    QTest::newRow("G_mu with mu 5") << "tradeoff --mu 5 --points 9 --json"
                                    << "G_mu" << 9;
    QTest::newRow("G_mu with the default 200 points") << "tradeoff --mu 1 --json"
                                                      << "G_mu" << 200;
    for (const Accountant* a : allAccountants()) {
      QTest::addRow("accountant %s: a trade-off function", tag(a).constData())
          << QStringLiteral("tradeoff --accountant %1 --epochs 1 --points 9 --json").arg(id(a)) << id(a) << 9;
    }
  }
  void tradeoffJson() {
    QFETCH(QString, args);
    QFETCH(QString, source);
    QFETCH(int, points);
    DPX_RUN_JSON(r, doc, args, dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("source")).toString(), source);
    const QJsonArray x = o.value(QStringLiteral("x")).toArray();
    const QJsonArray y = o.value(QStringLiteral("y")).toArray();
    QCOMPARE(x.size(), static_cast<qsizetype>(points));
    QCOMPARE(y.size(), x.size());
    QCOMPARE(x.first().toDouble(-1.0), 0.0);
    QCOMPARE(x.last().toDouble(-1.0), 1.0);
    for (qsizetype i = 0; i < x.size(); ++i) {
      QVERIFY2(isNumber(x.at(i)) && x.at(i).toDouble() >= 0.0 && x.at(i).toDouble() <= 1.0, "x is not in [0, 1]");
      QVERIFY2(isNumber(y.at(i)) && y.at(i).toDouble() >= 0.0 && y.at(i).toDouble() <= 1.0, "y is not in [0, 1]");
      QVERIFY2(y.at(i).toDouble() <= 1.0 - x.at(i).toDouble() + 1e-9, "y is above the identity 1 − x");
      if (i == 0) continue;
      QVERIFY2(x.at(i).toDouble() >= x.at(i - 1).toDouble(), "x decreases");
      QVERIFY2(y.at(i).toDouble() <= y.at(i - 1).toDouble(), qPrintable(QStringLiteral("y increases at %1").arg(i)));
    }
  }

  // `calibrate --json`: {accountant, sigma, epsilon} with ε ≤ target, and the σ printed really
  // gives ε ≤ target when fed back to `epsilon`.
  void calibrateJson_data() {
    QTest::addColumn<QString>("accountant");
    QTest::addColumn<QString>("extra");
    QTest::addColumn<double>("target");
    for (const Accountant* a : allAccountants()) {
      if (!a->noiseSetBySigma() || a->boundKind() == dpx::core::accounting::BoundKind::kLower)
        continue;  // refused: see refusalExitsOne
      // Under sanitizers a coarser fixed grid: random allocation's root search visits σ = 0.05,
      // whose log-grid sums at Δ = 0.01 take half a minute there.
      const QString grid = dpx::test::kSanitizedBuild ? QStringLiteral("0.05") : QStringLiteral("0.01");
      const QString extra = a->isAnalytic()
                                ? QStringLiteral("--epochs 1")
                                : QStringLiteral("--epochs 1 --discretisation ") + grid + dpx::test::quickRun();
      QTest::addRow("%s: target 2, epsilon <= target", tag(a).constData()) << id(a) << extra << 2.0;
      QTest::addRow("%s: target 0.5, epsilon <= target", tag(a).constData()) << id(a) << extra << 0.5;
    }
  }
  void calibrateJson() {
    QFETCH(QString, accountant);
    QFETCH(QString, extra);
    QFETCH(double, target);
    DPX_RUN_JSON(
        r, doc,
        QStringLiteral("calibrate --accountant %1 %2 --target-epsilon %3 --json").arg(accountant, extra).arg(target),
        dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("accountant")).toString(), accountant);
    const QJsonValue sigma = o.value(QStringLiteral("sigma"));
    QVERIFY2(isNumber(sigma) && sigma.toDouble() >= 0.05 && sigma.toDouble() <= 100.0, "sigma is not in [0.05, 100]");
    const QJsonValue eps = o.value(QStringLiteral("epsilon"));
    QVERIFY2(isNumber(eps) && eps.toDouble() > 0.0, "epsilon is not a number > 0");
    QVERIFY2(eps.toDouble() <= target, qPrintable(QStringLiteral("ε = %1 > target").arg(eps.toDouble(), 0, 'g', 12)));
    if (o.contains(QStringLiteral("bound"))) QVERIFY(isBoundName(o.value(QStringLiteral("bound"))));
    // The printed σ, fed back: ε(σ) ≤ target up to the 10 printed digits.
    const Run back = dpxRun(QStringLiteral("epsilon --accountant %1 %2 --sigma %3 --json")
                                .arg(accountant, extra, QString::number(sigma.toDouble(), 'g', 17)));
    QVERIFY2(back.code == dpx::cli::kExitOk, qPrintable(describeRun(back)));
    const double again =
        QJsonDocument::fromJson(back.out.toUtf8()).object().value(QStringLiteral("epsilon")).toDouble();
    QVERIFY2(again <= target * (1.0 + 1e-8), qPrintable(QStringLiteral("ε(σ) = %1 > target").arg(again, 0, 'g', 12)));
  }

  // `stepsize --json`: the seven step sizes and constants, and the smoothness limits.
  void stepsizeJson_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<double>("n");
    QTest::addColumn<double>("K");
    QTest::addColumn<double>("L");
    QTest::addColumn<double>("target");
    QTest::addColumn<double>("delta");
    QTest::newRow("default run, target 1")
        << "stepsize --epochs 1 --target-epsilon 1 --json" << 60000.0 << 235.0 << 1.0 << 1.0 << 1e-5;
    QTest::newRow("Li et al. worked example: Wang's bound is its formula")
        << "stepsize --n 50000 --m 500 --K 10000 --L 1 --target-epsilon 0.1 --json" << 50000.0 << 10000.0 << 1.0 << 0.1
        << 1e-5;
    QTest::newRow("decreasing schedule, classic conversion, delta 1e-6")
        << "stepsize --epochs 2 --schedule decreasing --conversion classic --delta 1e-6 --L 2 --target-epsilon 3 --json"
        << 60000.0 << 469.0 << 2.0 << 3.0 << 1e-6;
  }
  void stepsizeJson() {
    QFETCH(QString, args);
    QFETCH(double, n);
    QFETCH(double, K);
    QFETCH(double, L);
    QFETCH(double, target);
    QFETCH(double, delta);
    DPX_RUN_JSON(r, doc, args, dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    for (const char* key :
         {"exact_fixed", "exact_decreasing_eta1", "li_fixed", "li_decreasing_t1", "c", "c2", "wang"}) {
      QVERIFY2(isNumber(o.value(QLatin1String(key))) && o.value(QLatin1String(key)).toDouble() > 0.0,
               qPrintable(QStringLiteral("%1 is not a number > 0").arg(QLatin1String(key))));
    }
    // Wang et al. 2015: η < ε²N / (128 L² T log(2.5T/δ) log(2/δ)).
    const double wang = target * target * n / (128.0 * L * L * K * std::log(2.5 * K / delta) * std::log(2.0 / delta));
    DPX_COMPARE_REL(o.value(QStringLiteral("wang")).toDouble(), wang, 1e-8);
    // The smoothness limits are an object keyed by limit id: {eta, relation, label}.
    const QJsonValue limitsValue = o.value(QStringLiteral("smoothness_limits"));
    const QJsonObject limits = limitsValue.toObject();
    QVERIFY2(limitsValue.isObject() && !limits.isEmpty(), "smoothness_limits is not a non-empty object");
    for (auto it = limits.begin(); it != limits.end(); ++it) {
      const QJsonObject limit = it.value().toObject();
      QVERIFY2(isNumber(limit.value(QStringLiteral("eta"))) && limit.value(QStringLiteral("eta")).toDouble() > 0.0,
               qPrintable(it.key() + QStringLiteral(": eta is not a number > 0")));
      const QString relation = limit.value(QStringLiteral("relation")).toString();
      QVERIFY2(QStringList({"<", "<=", "=", ">", ">="}).contains(relation),
               qPrintable(it.key() + QStringLiteral(": relation is not one of <, <=, =, >, >=")));
      QVERIFY2(!limit.value(QStringLiteral("label")).toString().isEmpty(),
               qPrintable(it.key() + QStringLiteral(": no label")));
    }
  }

  // `train --json` for every mechanism of the registry.
  void trainJson_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<int>("mechanism");
    QTest::addColumn<int>("epochs");
    for (const dpx::core::training::Mechanism m : dpx::core::training::allMechanisms()) {
      const std::string mid(dpx::core::training::mechanismId(m));
      QTest::addRow("%s: one epoch on digits", mid.c_str())
          << QStringLiteral("train --data builtin:digits --mechanism %1 --epochs 1 --json --quiet")
                 .arg(QString::fromStdString(mid))
          << static_cast<int>(m) << 1;
    }
    QTest::newRow("dp-sgd: three epochs, epsilon_spent grows to epsilon")
        << "train --data builtin:digits --mechanism dp-sgd --epochs 3 --json --quiet"
        << static_cast<int>(dpx::core::training::Mechanism::kDpSgd) << 3;
  }
  void trainJson() {
    QFETCH(QString, args);
    QFETCH(int, mechanism);
    QFETCH(int, epochs);
    DPX_RUN_JSON(r, doc, args, dpx::cli::kExitOk);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QString problem =
        trainObjectProblem(doc.object(), static_cast<dpx::core::training::Mechanism>(mechanism), epochs);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  // `audit --json`: the train object plus roc, auc, tpr_at_fpr, epsilon_lower_bound, confidence.
  void auditJson_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<int>("mechanism");
    QTest::addColumn<double>("confidence");
    const QString base = QStringLiteral(
        "audit --data builtin:breast-cancer --epochs 1 --m 32 --shadow-models 2 --json "
        "--quiet --mechanism ");
    QTest::newRow("dp-sgd, default confidence 0.95")
        << base + QStringLiteral("dp-sgd") << static_cast<int>(dpx::core::training::Mechanism::kDpSgd) << 0.95;
    QTest::newRow("sgd, confidence 0.9") << base + QStringLiteral("sgd --confidence 0.9")
                                         << static_cast<int>(dpx::core::training::Mechanism::kSgd) << 0.9;
  }
  void auditJson() {
    QFETCH(QString, args);
    QFETCH(int, mechanism);
    QFETCH(double, confidence);
    DPX_RUN_JSON(r, doc, args, dpx::cli::kExitOk);
    const QJsonObject o = doc.object();
    const QString problem = trainObjectProblem(o, static_cast<dpx::core::training::Mechanism>(mechanism), 1);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QJsonArray roc = o.value(QStringLiteral("roc")).toArray();
    QVERIFY2(roc.size() >= 2, "roc has fewer than two points");
    double lastFpr = 0.0;
    double lastTpr = 0.0;
    for (const QJsonValue& point : roc) {
      const QJsonArray pair = point.toArray();
      QVERIFY2(point.isArray() && pair.size() == 2, "a roc point is not an [fpr, tpr] pair");
      const double fpr = pair.at(0).toDouble(-1.0);
      const double tpr = pair.at(1).toDouble(-1.0);
      QVERIFY2(isNumber(pair.at(0)) && fpr >= 0.0 && fpr <= 1.0, "fpr is not in [0, 1]");
      QVERIFY2(isNumber(pair.at(1)) && tpr >= 0.0 && tpr <= 1.0, "tpr is not in [0, 1]");
      QVERIFY2(fpr >= lastFpr && tpr >= lastTpr, "the roc is not monotone");
      lastFpr = fpr;
      lastTpr = tpr;
    }
    QCOMPARE(roc.first().toArray().at(0).toDouble(), 0.0);
    QCOMPARE(roc.first().toArray().at(1).toDouble(), 0.0);
    QCOMPARE(lastFpr, 1.0);
    QCOMPARE(lastTpr, 1.0);
    const QJsonValue auc = o.value(QStringLiteral("auc"));
    QVERIFY2(isNumber(auc) && auc.toDouble() >= 0.0 && auc.toDouble() <= 1.0, "auc is not in [0, 1]");
    const QJsonObject tpr = o.value(QStringLiteral("tpr_at_fpr")).toObject();
    for (const char* key : {"0.001", "0.01"}) {
      const QJsonValue v = tpr.value(QLatin1String(key));
      QVERIFY2(isNumber(v) && v.toDouble() >= 0.0 && v.toDouble() <= 1.0,
               qPrintable(QStringLiteral("tpr_at_fpr[%1] is not in [0, 1]").arg(QLatin1String(key))));
    }
    QVERIFY(tpr.value(QStringLiteral("0.01")).toDouble() >= tpr.value(QStringLiteral("0.001")).toDouble());
    const QJsonValue lower = o.value(QStringLiteral("epsilon_lower_bound"));
    QVERIFY2(isNumber(lower) && lower.toDouble() >= 0.0, "epsilon_lower_bound is not a number ≥ 0");
    QVERIFY(isNumber(o.value(QStringLiteral("confidence"))));
    QCOMPARE(o.value(QStringLiteral("confidence")).toDouble(), confidence);
    const QString band = rocBandProblem(o, mechanism != static_cast<int>(dpx::core::training::Mechanism::kSgd));
    QVERIFY2(band.isEmpty(), qPrintable(band));
  }

  // The exit status through the process boundary: the real dpx binary.
  void realBinary_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<bool>("epsilonIsNull");  // for exit 0 and 1: the JSON's ε
    QTest::newRow("epsilon rdp --json exits 0 with a number")
        << QStringList{"epsilon", "--accountant", "rdp", "--epochs", "1", "--json"} << 0 << false;
    QTest::newRow("epsilon outpert failure exits 1 with epsilon null")
        << QStringList{"epsilon", "--accountant", "outpert", "--eta", "10",    "--beta",
                       "1",       "--averaged",   "--K",     "400",   "--json"}
        << 1 << true;
    QTest::newRow("out-of-range knob exits 2 with nothing on stdout")
        << QStringList{"epsilon", "--accountant", "rdp", "--sigma", "200", "--json"} << 2 << false;
  }
  void realBinary() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(bool, epsilonIsNull);
    const QString binary = QStringLiteral(DPX_DPX_BINARY);
    QVERIFY2(QFileInfo::exists(binary), qPrintable(binary + QStringLiteral(" is missing: build the dpx target")));
    QProcess p;
    p.start(binary, args);
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == code, qPrintable(QStringLiteral("exit %1: %2").arg(p.exitCode()).arg(err)));
    if (code == dpx::cli::kExitUsage) {
      QVERIFY(out.isEmpty());
      QCOMPARE(err.count(QLatin1Char('\n')), 1);
      QVERIFY(err.contains(QStringLiteral("--sigma")));
      return;
    }
    QJsonDocument doc;
    const QString parseProblem = parseJsonLine(out, doc);
    QVERIFY2(parseProblem.isEmpty(), qPrintable(parseProblem));
    const QJsonValue eps = doc.object().value(QStringLiteral("epsilon"));
    QVERIFY(epsilonIsNull ? eps.isNull() : isNumber(eps));
    if (epsilonIsNull) QVERIFY(!doc.object().value(QStringLiteral("error")).toString().isEmpty());
  }

 private:
  static void curveRows() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QStringList>("ids");
    QTest::addColumn<QString>("vary");
    QTest::addColumn<double>("from");
    QTest::addColumn<double>("to");
    QTest::addColumn<int>("points");
    QTest::addColumn<bool>("gaps");  // some ε cannot be computed: empty cells / null with an error
    QStringList all;
    for (const Accountant* a : allAccountants()) all << id(a);
    QTest::newRow("all accountants over epochs: every id in registry order")
        << QStringLiteral("curve --accountant all --vary epochs --from 1 --to 5 --points 4") + dpx::test::quickRun()
        << all << "epochs" << 1.0 << 5.0 << 4 << false;
    QTest::newRow("rdp over sigma") << "curve --accountant rdp --vary sigma --from 0.5 --to 2 --points 7"
                                    << QStringList{"rdp"} << "sigma" << 0.5 << 2.0 << 7 << false;
    QTest::newRow("gdp over K, log spacing")
        << "curve --accountant gdp --vary K --from 10 --to 10000 --points 5 --spacing log" << QStringList{"gdp"} << "K"
        << 10.0 << 10000.0 << 5 << false;
    QTest::newRow("sgld over eta") << "curve --accountant sgld --vary eta --from 0.01 --to 0.5 --points 6"
                                   << QStringList{"sgld"} << "eta" << 0.01 << 0.5 << 6 << false;
    QTest::newRow("cyclic over m") << "curve --accountant cyclic --vary m --from 64 --to 1024 --points 5"
                                   << QStringList{"cyclic"} << "m" << 64.0 << 1024.0 << 5 << false;
    QTest::newRow("sgmcmc over n") << "curve --accountant sgmcmc --vary n --from 10000 --to 100000 --points 3"
                                   << QStringList{"sgmcmc"} << "n" << 10000.0 << 100000.0 << 3 << false;
    QTest::newRow("outpert over K with a failing range: empty cells, error")
        << "curve --accountant outpert --averaged --eta 10 --beta 1 --vary K --from 10 --to 1000 --points 3"
        << QStringList{"outpert"} << "K" << 10.0 << 1000.0 << 3 << true;
  }
};

QTEST_GUILESS_MAIN(TestDpxJsonContract)
#include "tst_dpx_json_contract.moc"
