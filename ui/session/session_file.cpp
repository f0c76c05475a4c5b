#include "session/session_file.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSaveFile>
#include <QSet>
#include <cmath>

#include "presets.h"
#include "training/mechanism.h"

namespace dpx::ui {

using core::Result;
using core::Status;

namespace {

QJsonObject presetObject(const Preset& preset) { return QJsonDocument::fromJson(serializePreset(preset)).object(); }

QJsonValue optionalNumber(const std::optional<double>& v) { return v ? QJsonValue(*v) : QJsonValue(); }

QJsonObject runToJson(const SavedRun& run) {
  QJsonObject o;
  o.insert(QStringLiteral("mechanism"), run.mechanism);
  o.insert(QStringLiteral("data"), run.data);
  o.insert(QStringLiteral("knobs"), presetObject(presetFromParams(run.knobs, QStringLiteral("run"))));
  o.insert(QStringLiteral("epsilon"), optionalNumber(run.epsilon));
  o.insert(QStringLiteral("delta"), run.delta);
  o.insert(QStringLiteral("test_accuracy"), run.testAccuracy);
  o.insert(QStringLiteral("train_accuracy"), run.trainAccuracy);
  QJsonObject used;
  used.insert(QStringLiteral("sigma"), run.sigmaUsed);
  used.insert(QStringLiteral("eta"), run.etaUsed);
  used.insert(QStringLiteral("clip_norm"), run.clipNormUsed);
  used.insert(QStringLiteral("steps"), static_cast<qint64>(run.stepsUsed));
  o.insert(QStringLiteral("used"), used);
  QJsonArray history;
  for (const core::training::EpochRecord& r : run.history) {
    QJsonObject e;
    e.insert(QStringLiteral("epoch"), r.epoch);
    e.insert(QStringLiteral("steps"), static_cast<qint64>(r.steps));
    e.insert(QStringLiteral("train_accuracy"), r.trainAccuracy);
    e.insert(QStringLiteral("test_accuracy"), r.testAccuracy);
    e.insert(QStringLiteral("loss"), r.loss);
    e.insert(QStringLiteral("epsilon"), optionalNumber(r.epsilonSpent));
    e.insert(QStringLiteral("seconds"), r.seconds);
    history.append(e);
  }
  o.insert(QStringLiteral("history"), history);
  return o;
}

// Every error names the file, the JSON path and the reason.
class Reader {
 public:
  explicit Reader(QString what) : m_what(std::move(what)) {}
  Status fail(const QString& path, const QString& reason) const {
    return Status::invalidArgument(
        (path.isEmpty() ? m_what : QStringLiteral("%1: %2").arg(m_what, path)).toStdString() + ": " +
        reason.toStdString());
  }
  Status onlyKeys(const QJsonObject& o, const QString& path, const QStringList& known) const {
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (!known.contains(it.key())) {
        return fail(path.isEmpty() ? it.key() : path + QLatin1Char('.') + it.key(),
                    QStringLiteral("unknown key (known: %1)").arg(known.join(QStringLiteral(", "))));
      }
    }
    return Status::ok();
  }
  Result<QJsonObject> object(const QJsonValue& v, const QString& path) const {
    if (!v.isObject()) return fail(path, QStringLiteral("expected an object"));
    return v.toObject();
  }
  Result<double> number(const QJsonObject& o, const QString& key, const QString& path, double lo, double hi) const {
    const QJsonValue v = o.value(key);
    const QString at = path.isEmpty() ? key : path + QLatin1Char('.') + key;
    if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < lo || v.toDouble() > hi) {
      return fail(at, QStringLiteral("expected a number in [%1, %2]").arg(lo).arg(hi));
    }
    return v.toDouble();
  }
  Result<std::optional<double>> optionalNumber(const QJsonObject& o, const QString& key, const QString& path) const {
    if (o.value(key).isNull() || o.value(key).isUndefined()) return std::optional<double>();
    DPX_ASSIGN_OR_RETURN(const double v, number(o, key, path, 0.0, 1e300));
    return std::optional<double>(v);
  }
  Result<bool> flag(const QJsonObject& o, const QString& key, const QString& path, bool fallback) const {
    const QJsonValue v = o.value(key);
    if (v.isUndefined()) return fallback;
    if (!v.isBool()) {
      return fail(path.isEmpty() ? key : path + QLatin1Char('.') + key, QStringLiteral("expected true or false"));
    }
    return v.toBool();
  }
  Result<QString> string(const QJsonObject& o, const QString& key, const QString& path) const {
    const QJsonValue v = o.value(key);
    if (!v.isString()) {
      return fail(path.isEmpty() ? key : path + QLatin1Char('.') + key, QStringLiteral("expected a string"));
    }
    return v.toString();
  }
  Result<Preset> preset(const QJsonValue& v, const QString& path) const {
    DPX_ASSIGN_OR_RETURN(const QJsonObject o, object(v, path));
    return parsePreset(QJsonDocument(o).toJson(QJsonDocument::Compact), QStringLiteral("%1: %2").arg(m_what, path));
  }

 private:
  QString m_what;
};

Result<SessionView> readView(const Reader& r, const QJsonValue& value) {
  SessionView view;
  if (value.isUndefined()) return view;
  DPX_ASSIGN_OR_RETURN(const QJsonObject o, r.object(value, QStringLiteral("view")));
  const QString at = QStringLiteral("view");
  DPX_RETURN_IF_ERROR(r.onlyKeys(o, at,
                                 {QStringLiteral("tab"), QStringLiteral("epochs_axis"), QStringLiteral("fixed_alpha"),
                                  QStringLiteral("log_epsilon"), QStringLiteral("roc_view"),
                                  QStringLiteral("exact_pld"), QStringLiteral("conversion")}));
  if (o.contains(QStringLiteral("tab"))) {
    DPX_ASSIGN_OR_RETURN(const double tab, r.number(o, QStringLiteral("tab"), at, 0, 3));
    if (tab != std::floor(tab)) return r.fail(at + QStringLiteral(".tab"), QStringLiteral("expected a whole number"));
    view.tab = static_cast<int>(tab);
  }
  DPX_ASSIGN_OR_RETURN(view.epochsAxis, r.flag(o, QStringLiteral("epochs_axis"), at, view.epochsAxis));
  DPX_ASSIGN_OR_RETURN(view.fixedAlpha, r.flag(o, QStringLiteral("fixed_alpha"), at, view.fixedAlpha));
  DPX_ASSIGN_OR_RETURN(view.logEpsilon, r.flag(o, QStringLiteral("log_epsilon"), at, view.logEpsilon));
  DPX_ASSIGN_OR_RETURN(view.rocView, r.flag(o, QStringLiteral("roc_view"), at, view.rocView));
  DPX_ASSIGN_OR_RETURN(view.exactPld, r.flag(o, QStringLiteral("exact_pld"), at, view.exactPld));
  if (o.contains(QStringLiteral("conversion"))) {
    DPX_ASSIGN_OR_RETURN(const QString c, r.string(o, QStringLiteral("conversion"), at));
    const std::optional<core::accounting::Conversion> conversion = core::accounting::parseConversion(c.toStdString());
    if (!conversion) {
      return r.fail(at + QStringLiteral(".conversion"), QStringLiteral("\"%1\": expected improved or classic").arg(c));
    }
    view.conversion = *conversion;
  }
  return view;
}

Result<core::training::EpochRecord> readEpoch(const Reader& r, const QJsonValue& value, const QString& at) {
  DPX_ASSIGN_OR_RETURN(const QJsonObject o, r.object(value, at));
  DPX_RETURN_IF_ERROR(r.onlyKeys(
      o, at,
      {QStringLiteral("epoch"), QStringLiteral("steps"), QStringLiteral("train_accuracy"),
       QStringLiteral("test_accuracy"), QStringLiteral("loss"), QStringLiteral("epsilon"), QStringLiteral("seconds")}));
  core::training::EpochRecord e;
  DPX_ASSIGN_OR_RETURN(const double epoch, r.number(o, QStringLiteral("epoch"), at, 0, 1e9));
  DPX_ASSIGN_OR_RETURN(const double steps, r.number(o, QStringLiteral("steps"), at, 0, 1e15));
  e.epoch = static_cast<int>(epoch);
  e.steps = static_cast<std::int64_t>(steps);
  DPX_ASSIGN_OR_RETURN(e.trainAccuracy, r.number(o, QStringLiteral("train_accuracy"), at, 0, 1));
  DPX_ASSIGN_OR_RETURN(e.testAccuracy, r.number(o, QStringLiteral("test_accuracy"), at, 0, 1));
  DPX_ASSIGN_OR_RETURN(e.loss, r.number(o, QStringLiteral("loss"), at, 0, 1e300));
  DPX_ASSIGN_OR_RETURN(e.epsilonSpent, r.optionalNumber(o, QStringLiteral("epsilon"), at));
  DPX_ASSIGN_OR_RETURN(e.seconds, r.number(o, QStringLiteral("seconds"), at, 0, 1e300));
  return e;
}

Result<SavedRun> readRun(const Reader& r, const QJsonValue& value, const QString& at) {
  DPX_ASSIGN_OR_RETURN(const QJsonObject o, r.object(value, at));
  DPX_RETURN_IF_ERROR(
      r.onlyKeys(o, at,
                 {QStringLiteral("mechanism"), QStringLiteral("data"), QStringLiteral("knobs"),
                  QStringLiteral("epsilon"), QStringLiteral("delta"), QStringLiteral("test_accuracy"),
                  QStringLiteral("train_accuracy"), QStringLiteral("used"), QStringLiteral("history")}));
  SavedRun run;
  DPX_ASSIGN_OR_RETURN(run.mechanism, r.string(o, QStringLiteral("mechanism"), at));
  if (!core::training::parseMechanism(run.mechanism.toStdString())) {
    return r.fail(at + QStringLiteral(".mechanism"),
                  QStringLiteral("\"%1\" is not a mechanism (known: %2)")
                      .arg(run.mechanism, QString::fromStdString(core::training::mechanismIdList())));
  }
  DPX_ASSIGN_OR_RETURN(run.data, r.string(o, QStringLiteral("data"), at));
  DPX_ASSIGN_OR_RETURN(const Preset knobs, r.preset(o.value(QStringLiteral("knobs")), at + QStringLiteral(".knobs")));
  run.knobs = knobs.params;
  DPX_ASSIGN_OR_RETURN(run.epsilon, r.optionalNumber(o, QStringLiteral("epsilon"), at));
  DPX_ASSIGN_OR_RETURN(run.delta, r.number(o, QStringLiteral("delta"), at, 0, 1));
  DPX_ASSIGN_OR_RETURN(run.testAccuracy, r.number(o, QStringLiteral("test_accuracy"), at, 0, 1));
  DPX_ASSIGN_OR_RETURN(run.trainAccuracy, r.number(o, QStringLiteral("train_accuracy"), at, 0, 1));
  const QString usedAt = at + QStringLiteral(".used");
  DPX_ASSIGN_OR_RETURN(const QJsonObject used, r.object(o.value(QStringLiteral("used")), usedAt));
  DPX_RETURN_IF_ERROR(r.onlyKeys(
      used, usedAt,
      {QStringLiteral("sigma"), QStringLiteral("eta"), QStringLiteral("clip_norm"), QStringLiteral("steps")}));
  DPX_ASSIGN_OR_RETURN(run.sigmaUsed, r.number(used, QStringLiteral("sigma"), usedAt, 0, 1e300));
  DPX_ASSIGN_OR_RETURN(run.etaUsed, r.number(used, QStringLiteral("eta"), usedAt, 0, 1e300));
  DPX_ASSIGN_OR_RETURN(run.clipNormUsed, r.number(used, QStringLiteral("clip_norm"), usedAt, 0, 1e300));
  DPX_ASSIGN_OR_RETURN(const double steps, r.number(used, QStringLiteral("steps"), usedAt, 0, 1e15));
  run.stepsUsed = static_cast<std::int64_t>(steps);
  const QJsonValue history = o.value(QStringLiteral("history"));
  if (!history.isArray()) return r.fail(at + QStringLiteral(".history"), QStringLiteral("expected an array"));
  const QJsonArray epochs = history.toArray();
  for (qsizetype i = 0; i < epochs.size(); ++i) {
    DPX_ASSIGN_OR_RETURN(core::training::EpochRecord e,
                         readEpoch(r, epochs.at(i), QStringLiteral("%1.history[%2]").arg(at).arg(i)));
    run.history.push_back(e);
  }
  return run;
}

// "byte 57 (line 3, column 12)", the line and column counted from 1.
QString position(const QByteArray& json, qsizetype offset) {
  qsizetype line = 1;
  qsizetype column = 1;
  for (qsizetype i = 0; i < std::min(offset, json.size()); ++i) {
    if (json[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(json[i]) & 0xC0) != 0x80) {
      ++column;  // a UTF-8 continuation byte is part of the character before it
    }
  }
  return QStringLiteral("byte %1 (line %2, column %3)").arg(offset).arg(line).arg(column);
}

}  // namespace

QByteArray serializeSession(const SessionFile& session) {
  QJsonObject o;
  o.insert(QStringLiteral("format"), QLatin1String(kSessionFormatTag));
  o.insert(QStringLiteral("version"), kSessionFormatVersion);
  o.insert(QStringLiteral("app_version"), QStringLiteral(DPX_VERSION));
  o.insert(QStringLiteral("state"), presetObject(presetFromState(session.state, QStringLiteral("session"))));
  o.insert(QStringLiteral("n_from_data"), session.state.trainer.nFromData);
  // A preset calibrates exactly when it names a target; a session also keeps "calibrate to the
  // table's ε" (on, no target) and a typed target with calibration off.
  o.insert(QStringLiteral("calibrate"), session.state.trainer.calibrate);
  o.insert(QStringLiteral("target_epsilon"), optionalNumber(session.state.trainer.targetEpsilon));
  QJsonObject view;
  view.insert(QStringLiteral("tab"), session.view.tab);
  view.insert(QStringLiteral("epochs_axis"), session.view.epochsAxis);
  view.insert(QStringLiteral("fixed_alpha"), session.view.fixedAlpha);
  view.insert(QStringLiteral("log_epsilon"), session.view.logEpsilon);
  view.insert(QStringLiteral("roc_view"), session.view.rocView);
  view.insert(QStringLiteral("exact_pld"), session.view.exactPld);
  view.insert(QStringLiteral("conversion"),
              QString::fromLatin1(core::accounting::conversionName(session.view.conversion).data()));
  o.insert(QStringLiteral("view"), view);
  o.insert(
      QStringLiteral("pinned"),
      session.pinned ? QJsonValue(presetObject(presetFromParams(*session.pinned, QStringLiteral("A")))) : QJsonValue());
  QJsonArray runs;
  for (const SavedRun& run : session.runs) runs.append(runToJson(run));
  o.insert(QStringLiteral("runs"), runs);
  return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

Result<SessionFile> parseSession(const QByteArray& json, const QString& what, const ModelState& current) {
  const Reader r(what);
  if (json.trimmed().isEmpty()) return r.fail({}, QStringLiteral("the file is empty (expected a JSON object)"));
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
  if (error.error != QJsonParseError::NoError) {
    return r.fail({}, QStringLiteral("not JSON: %1 at %2").arg(error.errorString(), position(json, error.offset)));
  }
  if (!doc.isObject()) return r.fail({}, QStringLiteral("the top level must be a JSON object"));
  const QJsonObject o = doc.object();
  const QJsonValue format = o.value(QStringLiteral("format"));
  if (format.toString() != QLatin1String(kSessionFormatTag)) {
    return r.fail(
        QStringLiteral("format"),
        QStringLiteral("expected \"%1\": this is not a DP Explorer session").arg(QLatin1String(kSessionFormatTag)));
  }
  const QJsonValue version = o.value(QStringLiteral("version"));
  if (!version.isDouble() || version.toDouble() != std::floor(version.toDouble()) || version.toDouble() < 1) {
    return r.fail(QStringLiteral("version"), QStringLiteral("expected a whole number ≥ 1"));
  }
  if (version.toInt() > kSessionFormatVersion) {
    return r.fail(QStringLiteral("version"), QStringLiteral("%1 is newer than this DP Explorer reads (%2): update it")
                                                 .arg(version.toInt())
                                                 .arg(kSessionFormatVersion));
  }
  DPX_RETURN_IF_ERROR(r.onlyKeys(
      o, {},
      {QStringLiteral("format"), QStringLiteral("version"), QStringLiteral("app_version"), QStringLiteral("state"),
       QStringLiteral("n_from_data"), QStringLiteral("calibrate"), QStringLiteral("target_epsilon"),
       QStringLiteral("view"), QStringLiteral("pinned"), QStringLiteral("runs")}));
  SessionFile session;
  DPX_ASSIGN_OR_RETURN(const Preset state, r.preset(o.value(QStringLiteral("state")), QStringLiteral("state")));
  session.state = stateFromPreset(state, current);
  DPX_ASSIGN_OR_RETURN(session.state.trainer.nFromData, r.flag(o, QStringLiteral("n_from_data"), {}, false));
  DPX_ASSIGN_OR_RETURN(session.state.trainer.calibrate,
                       r.flag(o, QStringLiteral("calibrate"), {}, session.state.trainer.calibrate));
  if (o.contains(QStringLiteral("target_epsilon"))) {
    DPX_ASSIGN_OR_RETURN(session.state.trainer.targetEpsilon,
                         r.optionalNumber(o, QStringLiteral("target_epsilon"), {}));
  }
  DPX_ASSIGN_OR_RETURN(session.view, readView(r, o.value(QStringLiteral("view"))));
  const QJsonValue pinned = o.value(QStringLiteral("pinned"));
  if (!pinned.isNull() && !pinned.isUndefined()) {
    DPX_ASSIGN_OR_RETURN(const Preset a, r.preset(pinned, QStringLiteral("pinned")));
    session.pinned = a.params;
  }
  const QJsonValue runs = o.value(QStringLiteral("runs"));
  if (!runs.isUndefined()) {
    if (!runs.isArray()) return r.fail(QStringLiteral("runs"), QStringLiteral("expected an array"));
    const QJsonArray list = runs.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
      DPX_ASSIGN_OR_RETURN(SavedRun run, readRun(r, list.at(i), QStringLiteral("runs[%1]").arg(i)));
      session.runs.push_back(std::move(run));
    }
  }
  return session;
}

Status saveSessionFile(const SessionFile& session, const QString& path) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    return Status::invalidArgument(QStringLiteral("%1: %2").arg(path, file.errorString()).toStdString());
  }
  file.write(serializeSession(session));
  if (!file.commit()) {
    return Status::invalidArgument(QStringLiteral("%1: %2").arg(path, file.errorString()).toStdString());
  }
  return Status::ok();
}

Result<SessionFile> loadSessionFile(const QString& path, const ModelState& current) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status::invalidArgument(QStringLiteral("%1: %2").arg(path, file.errorString()).toStdString());
  }
  if (file.size() > kMaxSessionFileBytes) {
    return Status::invalidArgument(QStringLiteral("%1: %2 bytes is larger than a session can be (%3)")
                                       .arg(path)
                                       .arg(file.size())
                                       .arg(kMaxSessionFileBytes)
                                       .toStdString());
  }
  return parseSession(file.readAll(), path, current);
}

}  // namespace dpx::ui
