// Presets: strict JSON reading and writing, atomic saves, and the built-in set from :/presets.
#include "presets.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QJsonValue>
#include <QRegularExpression>
#include <QSaveFile>
#include <QtGlobal>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "common/format.h"
#include "training/mechanism.h"

// Q_INIT_RESOURCE must be expanded outside any namespace (it declares the rcc-generated
// initialiser), and dpx_ui is a static library, so nothing registers :/presets unless we do.
static void initPresetResources() { Q_INIT_RESOURCE(presets); }

namespace dpx::ui {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;

// Keys of the top level and of "trainer", in the order the messages list them.
const QStringList kTopLevelKeys{QStringLiteral("format"), QStringLiteral("version"),        QStringLiteral("id"),
                                QStringLiteral("name"),   QStringLiteral("description"),    QStringLiteral("source"),
                                QStringLiteral("notes"),  QStringLiteral("target_epsilon"), QStringLiteral("params"),
                                QStringLiteral("trainer")};
const QStringList kTrainerKeys{QStringLiteral("data"),     QStringLiteral("mechanisms"), QStringLiteral("epochs"),
                               QStringLiteral("features"), QStringLiteral("scaling"),    QStringLiteral("model"),
                               QStringLiteral("hidden"),   QStringLiteral("activation")};
const QStringList kParamsExtraKeys{QStringLiteral("epochs"),    QStringLiteral("schedule"),
                                   QStringLiteral("sampling"),  QStringLiteral("neighbouring"),
                                   QStringLiteral("optimizer"), QStringLiteral("averaged")};

QString number(double value) { return QString::fromStdString(core::formatNumber(value)); }

QString typeName(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Null:
      return QStringLiteral("null");
    case QJsonValue::Bool:
      return QStringLiteral("a boolean");
    case QJsonValue::Double:
      return QStringLiteral("a number");
    case QJsonValue::String:
      return QStringLiteral("a string");
    case QJsonValue::Array:
      return QStringLiteral("an array");
    case QJsonValue::Object:
      return QStringLiteral("an object");
    case QJsonValue::Undefined:
      break;
  }
  return QStringLiteral("nothing");
}

// Collects "<what>: <path>: <reason>"; an empty `what` (a check before saving) drops the prefix.
class Reader {
 public:
  explicit Reader(QString what) : m_what(std::move(what)) {}

  Status fail(const QString& path, const QString& reason, StatusCode code = StatusCode::kParseError) const {
    QString text = m_what.isEmpty() ? QString() : m_what + QStringLiteral(": ");
    if (!path.isEmpty()) text += path + QStringLiteral(": ");
    text += reason;
    return Status(code, text.toStdString());
  }

  Status typeError(const QString& path, const QString& expected, const QJsonValue& got) const {
    return fail(path, QStringLiteral("expected %1, got %2").arg(expected, typeName(got)));
  }

  Status unknownKey(const QString& path, const QStringList& allowed) const {
    return fail(path, QStringLiteral("unknown key (expected one of: %1)").arg(allowed.join(QStringLiteral(", "))));
  }

  Result<QString> string(const QJsonObject& o, const QString& key, const QString& path, bool required) const {
    const QJsonValue v = o.value(key);
    if (v.isUndefined()) {
      if (required) return fail(path, QStringLiteral("missing (a string is required)"));
      return QString();
    }
    if (!v.isString()) return typeError(path, QStringLiteral("a string"), v);
    return v.toString();
  }

  Result<double> positiveNumber(const QJsonValue& v, const QString& path) const {
    if (!v.isDouble()) return typeError(path, QStringLiteral("a number"), v);
    const double x = v.toDouble();
    if (!std::isfinite(x) || !(x > 0.0)) {
      return fail(path, QStringLiteral("%1 is out of range: it must be a finite number > 0").arg(number(x)),
                  StatusCode::kInvalidArgument);
    }
    return x;
  }

  Result<QStringList> stringList(const QJsonValue& v, const QString& path) const {
    if (!v.isArray()) return typeError(path, QStringLiteral("an array of strings"), v);
    QStringList out;
    const QJsonArray a = v.toArray();
    for (qsizetype i = 0; i < a.size(); ++i) {
      const QJsonValue item = a.at(i);
      if (!item.isString())
        return typeError(QStringLiteral("%1[%2]").arg(path).arg(i), QStringLiteral("a string"), item);
      out << item.toString();
    }
    return out;
  }

 private:
  QString m_what;
};

QStringList knobKeys() {
  QStringList keys;
  for (const core::KnobInfo& info : core::knobInfos()) keys << QString::fromUtf8(info.key);
  return keys;
}

// What the params say about the run's length: K itself, or epochs standing for it.
struct StepsSpec {
  bool hasK = false;
  std::optional<double> epochs;
};

// A knob's value: a number inside the knob's range.
Status readKnob(const Reader& r, const core::KnobInfo& info, const QJsonValue& v, const QString& path,
                core::Params& params) {
  if (!v.isDouble()) return r.typeError(path, QStringLiteral("a number"), v);
  const double x = v.toDouble();
  if (Status s = core::validateKnob(info.knob, x); !s.isOk()) {
    return r.fail(path, QString::fromStdString(s.message()), s.code());
  }
  core::setKnobValue(params, info.knob, x);
  return Status::ok();
}

// "schedule", "sampling", "neighbouring" or "optimizer": a name core parses.
Status readChoice(const Reader& r, const QString& key, const QJsonValue& v, const QString& path, core::Params& params) {
  if (!v.isString()) return r.typeError(path, QStringLiteral("a string"), v);
  const std::string name = v.toString().toStdString();
  if (key == QLatin1String("schedule")) {
    const auto s = core::parseSchedule(name);
    if (!s)
      return r.fail(path,
                    QStringLiteral("unknown schedule \"%1\" (expected constant or decreasing)").arg(v.toString()));
    params.schedule = *s;
  } else if (key == QLatin1String("optimizer")) {
    const auto o = core::parseOptimizer(name);
    if (!o) {
      return r.fail(path,
                    QStringLiteral("unknown optimizer \"%1\" (expected sgd, momentum or adam)").arg(v.toString()));
    }
    params.optimizer = *o;
  } else if (key == QLatin1String("sampling")) {
    const auto s = core::parseSampling(name);
    if (!s) {
      return r.fail(
          path,
          QStringLiteral("unknown sampling \"%1\" (expected poisson, uniform, cyclic or shuffle)").arg(v.toString()));
    }
    params.sampling = *s;
  } else {
    const auto s = core::parseNeighbouring(name);
    if (!s) {
      return r.fail(path, QStringLiteral("unknown neighbouring relation \"%1\" (expected add-remove or replace-one)")
                              .arg(v.toString()));
    }
    params.neighbouring = *s;
  }
  return Status::ok();
}

// One key of "params": a knob, epochs, a choice, averaged, or an unknown key.
Status readParamsKey(const Reader& r, const QString& key, const QJsonValue& v, core::Params& params, StepsSpec& steps) {
  const QString path = QStringLiteral("params") + QLatin1Char('.') + key;
  if (const core::KnobInfo* info = core::findKnob(key.toStdString())) {
    DPX_RETURN_IF_ERROR(readKnob(r, *info, v, path, params));
    if (info->knob == core::Knob::kK) steps.hasK = true;
  } else if (key == QLatin1String("epochs")) {
    DPX_ASSIGN_OR_RETURN(steps.epochs, r.positiveNumber(v, path));
  } else if (key == QLatin1String("schedule") || key == QLatin1String("sampling") ||
             key == QLatin1String("neighbouring") || key == QLatin1String("optimizer")) {
    DPX_RETURN_IF_ERROR(readChoice(r, key, v, path, params));
  } else if (key == QLatin1String("averaged")) {
    if (!v.isBool()) return r.typeError(path, QStringLiteral("true or false"), v);
    params.averaged = v.toBool();
  } else {
    return r.unknownKey(path, knobKeys() + kParamsExtraKeys);
  }
  return Status::ok();
}

// "epochs" stands for K = ⌈epochs·n/m⌉ (with the n and m the params set) and excludes K.
Status applyEpochs(const Reader& r, const QString& base, const StepsSpec& spec, core::Params& params) {
  if (!spec.epochs) return Status::ok();
  if (spec.hasK) {
    return r.fail(base, QStringLiteral("both K and epochs are given; give one (epochs sets K = ⌈epochs·n/m⌉)"),
                  StatusCode::kInvalidArgument);
  }
  Result<std::int64_t> steps = core::stepsForEpochs(*spec.epochs, params.n, params.m);
  if (!steps)
    return r.fail(base + QStringLiteral(".epochs"), QString::fromStdString(steps.status().message()),
                  steps.status().code());
  params.K = *steps;
  return Status::ok();
}

// trainer.model, .hidden, .activation: the model trained (hidden units and activation only for
// the models that have them).
Status readTrainerModel(const Reader& r, const QJsonObject& o, const QString& base, Preset& preset) {
  const bool any = o.contains(QStringLiteral("model")) || o.contains(QStringLiteral("hidden")) ||
                   o.contains(QStringLiteral("activation"));
  if (!any) return Status::ok();
  core::training::ModelSpec spec;
  const QString modelPath = base + QStringLiteral(".model");
  DPX_ASSIGN_OR_RETURN(const QString name, r.string(o, QStringLiteral("model"), modelPath, true));
  const auto kind = core::training::parseModelKind(name.toStdString());
  if (!kind) {
    return r.fail(modelPath,
                  QStringLiteral("unknown model \"%1\" (expected linear, mlp, cnn or scatter-cnn)").arg(name));
  }
  spec.kind = *kind;
  if (o.contains(QStringLiteral("hidden"))) {
    const QString path = base + QStringLiteral(".hidden");
    if (spec.kind != core::training::ModelKind::kMlp) {
      return r.fail(path, QStringLiteral("only the mlp has hidden units (the model is %1)").arg(name));
    }
    DPX_ASSIGN_OR_RETURN(const double hidden, r.positiveNumber(o.value(QStringLiteral("hidden")), path));
    if (hidden != std::floor(hidden) || hidden > 4096) {
      return r.fail(path, QStringLiteral("hidden = %1 must be a whole number in [1, 4096]").arg(number(hidden)));
    }
    spec.hidden = static_cast<int>(hidden);
  }
  if (o.contains(QStringLiteral("activation"))) {
    const QString path = base + QStringLiteral(".activation");
    DPX_ASSIGN_OR_RETURN(const QString text, r.string(o, QStringLiteral("activation"), path, true));
    if (spec.kind == core::training::ModelKind::kLinear) {
      return r.fail(path, QStringLiteral("softmax regression (model linear) has no activation"));
    }
    const auto activation = core::training::parseActivation(text.toStdString());
    if (!activation) return r.fail(path, QStringLiteral("unknown activation \"%1\" (expected tanh or relu)").arg(text));
    spec.activation = *activation;
  }
  preset.trainerModel = spec;
  preset.params.convexLoss = spec.convex();  // what the accountants read of the model
  return Status::ok();
}

Status readParams(const Reader& r, const QJsonValue& value, core::Params& params, bool& stepsGiven) {
  const QString base = QStringLiteral("params");
  if (!value.isObject()) return r.typeError(base, QStringLiteral("an object"), value);
  const QJsonObject o = value.toObject();
  StepsSpec spec;
  for (auto it = o.begin(); it != o.end(); ++it) {
    DPX_RETURN_IF_ERROR(readParamsKey(r, it.key(), it.value(), params, spec));
  }
  stepsGiven = spec.hasK || spec.epochs.has_value();
  DPX_RETURN_IF_ERROR(applyEpochs(r, base, spec, params));
  if (Status s = params.validate(); !s.isOk()) return r.fail(base, QString::fromStdString(s.message()), s.code());
  return Status::ok();
}

Status readTrainer(const Reader& r, const QJsonValue& value, Preset& preset) {
  const QString base = QStringLiteral("trainer");
  if (!value.isObject()) return r.typeError(base, QStringLiteral("an object"), value);
  const QJsonObject o = value.toObject();
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (!kTrainerKeys.contains(it.key())) return r.unknownKey(base + QLatin1Char('.') + it.key(), kTrainerKeys);
  }
  DPX_ASSIGN_OR_RETURN(const QString data, r.string(o, QStringLiteral("data"), base + QStringLiteral(".data"), false));
  if (o.contains(QStringLiteral("data")) && data.trimmed().isEmpty()) {
    return r.fail(base + QStringLiteral(".data"), QStringLiteral("empty (expected builtin:NAME or a file path)"));
  }
  preset.trainerData = data;
  if (o.contains(QStringLiteral("mechanisms"))) {
    const QString path = base + QStringLiteral(".mechanisms");
    DPX_ASSIGN_OR_RETURN(const QStringList list, r.stringList(o.value(QStringLiteral("mechanisms")), path));
    QStringList known;
    for (core::training::Mechanism m : core::training::allMechanisms()) {
      known << QString::fromStdString(std::string(core::training::mechanismId(m)));
    }
    for (qsizetype i = 0; i < list.size(); ++i) {
      const QString id = list.at(i);
      const QString itemPath = QStringLiteral("%1[%2]").arg(path).arg(i);
      if (!core::training::parseMechanism(id.toStdString())) {
        return r.fail(
            itemPath,
            QStringLiteral("unknown mechanism \"%1\" (expected one of: %2)").arg(id, known.join(QStringLiteral(", "))));
      }
      if (list.indexOf(id) != i) return r.fail(itemPath, QStringLiteral("mechanism \"%1\" is listed twice").arg(id));
    }
    preset.trainerMechanisms = list;
  }
  if (o.contains(QStringLiteral("epochs"))) {
    DPX_ASSIGN_OR_RETURN(preset.trainerEpochs,
                         r.positiveNumber(o.value(QStringLiteral("epochs")), base + QStringLiteral(".epochs")));
  }
  if (o.contains(QStringLiteral("features"))) {
    const QString path = base + QStringLiteral(".features");
    DPX_ASSIGN_OR_RETURN(const QString name, r.string(o, QStringLiteral("features"), path, true));
    const auto kind = core::training::parseFeatureKind(name.toStdString());
    if (!kind) return r.fail(path, QStringLiteral("unknown features \"%1\" (expected raw or scatternet)").arg(name));
    preset.trainerFeatures = *kind;
  }
  if (o.contains(QStringLiteral("scaling"))) {
    const QString path = base + QStringLiteral(".scaling");
    DPX_ASSIGN_OR_RETURN(const QString name, r.string(o, QStringLiteral("scaling"), path, true));
    const auto scaling = core::training::parseFeatureScaling(name.toStdString());
    if (!scaling) {
      return r.fail(path, QStringLiteral("unknown scaling \"%1\" (expected unit-norm, clip-norm or none)").arg(name));
    }
    preset.trainerScaling = *scaling;
  }
  return readTrainerModel(r, o, base, preset);
}

// The trainer trains the epochs of the K knob (one set of knobs): trainer.epochs may stand for
// K when the params give no steps, and must agree with them when they do.
Status reconcileTrainerEpochs(const Reader& r, Preset& preset, bool stepsGiven) {
  if (!preset.trainerEpochs) return Status::ok();
  core::Params& p = preset.params;
  Result<std::int64_t> steps = core::stepsForEpochs(*preset.trainerEpochs, p.n, p.m);
  if (!steps) {
    return r.fail(QStringLiteral("trainer.epochs"), QString::fromStdString(steps.status().message()),
                  steps.status().code());
  }
  if (!stepsGiven) {
    p.K = *steps;
    if (Status s = p.validate(); !s.isOk())
      return r.fail(QStringLiteral("trainer.epochs"), QString::fromStdString(s.message()), s.code());
    return Status::ok();
  }
  if (*steps != p.K) {
    return r.fail(QStringLiteral("trainer.epochs"),
                  QStringLiteral("%1 epochs disagree with the params (K = %2 steps = %3 epochs of n = %4): the trainer "
                                 "trains the epochs of K; give one of them")
                      .arg(number(*preset.trainerEpochs))
                      .arg(p.K)
                      .arg(number(p.epochs()))
                      .arg(p.n),
                  StatusCode::kInvalidArgument);
  }
  return Status::ok();
}

// The document as a JSON object, or why it is not one.
Result<QJsonObject> readTopLevel(const Reader& r, const QByteArray& json) {
  if (json.trimmed().isEmpty()) return r.fail({}, QStringLiteral("the file is empty (expected a JSON object)"));
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
  if (error.error != QJsonParseError::NoError) {
    return r.fail(QStringLiteral("not JSON"),
                  QStringLiteral("%1 at byte %2").arg(error.errorString()).arg(error.offset));
  }
  if (!doc.isObject()) {
    return r.fail({}, QStringLiteral("the top level must be a JSON object, got %1")
                          .arg(doc.isArray() ? QStringLiteral("an array") : QStringLiteral("a scalar")));
  }
  return doc.object();
}

Status checkFormat(const Reader& r, const QJsonObject& o) {
  const QJsonValue format = o.value(QStringLiteral("format"));
  if (format.isUndefined()) {
    return r.fail(
        QStringLiteral("format"),
        QStringLiteral("missing: a preset starts with \"format\": \"%1\"").arg(QLatin1String(kPresetFormatTag)));
  }
  if (!format.isString()) return r.typeError(QStringLiteral("format"), QStringLiteral("a string"), format);
  if (format.toString() != QLatin1String(kPresetFormatTag)) {
    return r.fail(QStringLiteral("format"), QStringLiteral("\"%1\" is not a DP Explorer preset (expected \"%2\")")
                                                .arg(format.toString(), QLatin1String(kPresetFormatTag)));
  }
  return Status::ok();
}

// A whole number from 1 up to the newest version this build reads.
Result<int> readVersion(const Reader& r, const QJsonObject& o) {
  const QJsonValue version = o.value(QStringLiteral("version"));
  if (version.isUndefined())
    return r.fail(QStringLiteral("version"), QStringLiteral("missing (an integer is required)"));
  if (!version.isDouble()) return r.typeError(QStringLiteral("version"), QStringLiteral("an integer"), version);
  const double v = version.toDouble();
  if (!std::isfinite(v) || v != std::floor(v)) {
    return r.fail(QStringLiteral("version"), QStringLiteral("%1 is not an integer").arg(number(v)));
  }
  if (v > kPresetFormatVersion) {
    return r.fail(QStringLiteral("version"),
                  QStringLiteral("format version %1 is newer than this DP Explorer reads (up to version %2); "
                                 "open it with a newer DP Explorer")
                      .arg(number(v))
                      .arg(kPresetFormatVersion));
  }
  if (v < 1)
    return r.fail(QStringLiteral("version"),
                  QStringLiteral("%1 is not a format version (versions start at 1)").arg(number(v)));
  return static_cast<int>(v);
}

// id, name, description and source.
Status readLabels(const Reader& r, const QJsonObject& o, Preset& preset) {
  DPX_ASSIGN_OR_RETURN(const QString id, r.string(o, QStringLiteral("id"), QStringLiteral("id"), false));
  // Anchored as a whole: a plain `$` would also accept a trailing newline ("abc\n").
  static const QRegularExpression kIdPattern(
      QRegularExpression::anchoredPattern(QStringLiteral("[A-Za-z0-9][A-Za-z0-9._-]{0,99}")));
  if (o.contains(QStringLiteral("id")) && !kIdPattern.match(id).hasMatch()) {
    return r.fail(QStringLiteral("id"),
                  QStringLiteral("\"%1\" is not an id (1–100 letters, digits, '.', '_' or '-')").arg(id));
  }
  preset.id = id;
  DPX_ASSIGN_OR_RETURN(const QString name, r.string(o, QStringLiteral("name"), QStringLiteral("name"), true));
  if (name.trimmed().isEmpty()) return r.fail(QStringLiteral("name"), QStringLiteral("empty (a preset needs a name)"));
  preset.name = name;
  DPX_ASSIGN_OR_RETURN(preset.description,
                       r.string(o, QStringLiteral("description"), QStringLiteral("description"), false));
  DPX_ASSIGN_OR_RETURN(preset.source, r.string(o, QStringLiteral("source"), QStringLiteral("source"), false));
  return Status::ok();
}

// The optional notes and target ε.
Status readNotesAndTarget(const Reader& r, const QJsonObject& o, Preset& preset) {
  if (o.contains(QStringLiteral("notes"))) {
    DPX_ASSIGN_OR_RETURN(preset.notes, r.stringList(o.value(QStringLiteral("notes")), QStringLiteral("notes")));
  }
  if (o.contains(QStringLiteral("target_epsilon"))) {
    DPX_ASSIGN_OR_RETURN(preset.targetEpsilon,
                         r.positiveNumber(o.value(QStringLiteral("target_epsilon")), QStringLiteral("target_epsilon")));
  }
  return Status::ok();
}

// The required params, the optional trainer part, and the two's agreement on the epochs.
Status readRun(const Reader& r, const QJsonObject& o, Preset& preset) {
  const QJsonValue params = o.value(QStringLiteral("params"));
  if (params.isUndefined())
    return r.fail(QStringLiteral("params"), QStringLiteral("missing (an object of knobs is required)"));
  bool stepsGiven = false;
  DPX_RETURN_IF_ERROR(readParams(r, params, preset.params, stepsGiven));
  if (o.contains(QStringLiteral("trainer")))
    DPX_RETURN_IF_ERROR(readTrainer(r, o.value(QStringLiteral("trainer")), preset));
  return reconcileTrainerEpochs(r, preset, stepsGiven);
}

Result<Preset> readPreset(const QByteArray& json, const QString& what) {
  const Reader r(what);
  DPX_ASSIGN_OR_RETURN(const QJsonObject o, readTopLevel(r, json));
  // Format and version first: a newer file may legitimately carry keys this version does not know.
  DPX_RETURN_IF_ERROR(checkFormat(r, o));
  Preset preset;
  DPX_ASSIGN_OR_RETURN(preset.version, readVersion(r, o));
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (!kTopLevelKeys.contains(it.key())) return r.unknownKey(it.key(), kTopLevelKeys);
  }
  DPX_RETURN_IF_ERROR(readLabels(r, o, preset));
  DPX_RETURN_IF_ERROR(readNotesAndTarget(r, o, preset));
  DPX_RETURN_IF_ERROR(readRun(r, o, preset));
  return preset;
}

QJsonObject paramsToJson(const core::Params& p) {
  QJsonObject o;
  for (const core::KnobInfo& info : core::knobInfos()) {
    const double value = core::knobValue(p, info.knob);
    // Integers stay integers in the file (60000, not 60000.0), so hand edits look natural.
    o.insert(QString::fromUtf8(info.key),
             info.integer ? QJsonValue(static_cast<qint64>(std::llround(value))) : QJsonValue(value));
  }
  o.insert(QStringLiteral("schedule"), QString::fromStdString(std::string(core::scheduleName(p.schedule))));
  if (p.sampling)
    o.insert(QStringLiteral("sampling"), QString::fromStdString(std::string(core::samplingName(*p.sampling))));
  if (p.neighbouring) {
    o.insert(QStringLiteral("neighbouring"),
             QString::fromStdString(std::string(core::neighbouringName(*p.neighbouring))));
  }
  if (p.optimizer) {
    o.insert(QStringLiteral("optimizer"), QString::fromStdString(std::string(core::optimizerName(*p.optimizer))));
  }
  o.insert(QStringLiteral("averaged"), p.averaged);
  return o;
}

QString slug(const QString& name) {
  QString out;
  bool dash = false;
  for (const QChar c : name.toLower()) {
    if ((c >= QLatin1Char('a') && c <= QLatin1Char('z')) || (c >= QLatin1Char('0') && c <= QLatin1Char('9'))) {
      if (dash && !out.isEmpty()) out += QLatin1Char('-');
      out += c;
      dash = false;
    } else {
      dash = true;
    }
    if (out.size() >= 60) break;
  }
  return out;
}

}  // namespace

bool sameParams(const core::Params& a, const core::Params& b) { return a == b; }

bool operator==(const Preset& a, const Preset& b) {
  return a.version == b.version && a.id == b.id && a.name == b.name && a.description == b.description &&
         a.source == b.source && sameParams(a.params, b.params) && a.targetEpsilon == b.targetEpsilon &&
         a.notes == b.notes && a.trainerData == b.trainerData && a.trainerMechanisms == b.trainerMechanisms &&
         a.trainerEpochs == b.trainerEpochs && a.trainerFeatures == b.trainerFeatures &&
         a.trainerScaling == b.trainerScaling && a.trainerModel == b.trainerModel;
}

core::Result<Preset> parsePreset(const QByteArray& json, const QString& what) { return readPreset(json, what); }

QByteArray serializePreset(const Preset& preset) {
  QJsonObject o;
  o.insert(QStringLiteral("format"), QLatin1String(kPresetFormatTag));
  o.insert(QStringLiteral("version"), kPresetFormatVersion);
  if (!preset.id.isEmpty()) o.insert(QStringLiteral("id"), preset.id);
  o.insert(QStringLiteral("name"), preset.name);
  if (!preset.description.isEmpty()) o.insert(QStringLiteral("description"), preset.description);
  if (!preset.source.isEmpty()) o.insert(QStringLiteral("source"), preset.source);
  if (!preset.notes.isEmpty()) o.insert(QStringLiteral("notes"), QJsonArray::fromStringList(preset.notes));
  if (preset.targetEpsilon) o.insert(QStringLiteral("target_epsilon"), *preset.targetEpsilon);
  o.insert(QStringLiteral("params"), paramsToJson(preset.params));
  if (preset.hasTrainer()) {
    QJsonObject t;
    if (!preset.trainerData.isEmpty()) t.insert(QStringLiteral("data"), preset.trainerData);
    if (!preset.trainerMechanisms.isEmpty()) {
      t.insert(QStringLiteral("mechanisms"), QJsonArray::fromStringList(preset.trainerMechanisms));
    }
    if (preset.trainerEpochs) t.insert(QStringLiteral("epochs"), *preset.trainerEpochs);
    if (preset.trainerFeatures) {
      t.insert(QStringLiteral("features"),
               QString::fromLatin1(core::training::featureKindName(*preset.trainerFeatures).data()));
    }
    if (preset.trainerScaling) {
      t.insert(QStringLiteral("scaling"),
               QString::fromLatin1(core::training::featureScalingName(*preset.trainerScaling).data()));
    }
    if (preset.trainerModel) {
      const core::training::ModelSpec& m = *preset.trainerModel;
      t.insert(QStringLiteral("model"), QString::fromLatin1(core::training::modelKindName(m.kind).data()));
      if (m.kind == core::training::ModelKind::kMlp) t.insert(QStringLiteral("hidden"), m.hidden);
      if (m.activation && m.kind != core::training::ModelKind::kLinear) {
        t.insert(QStringLiteral("activation"),
                 QString::fromLatin1(core::training::activationName(*m.activation).data()));
      }
    }
    o.insert(QStringLiteral("trainer"), t);
  }
  return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

core::Status savePresetFile(const Preset& preset, const QString& path) {
  const QByteArray bytes = serializePreset(preset);
  // Never write a file the loader would refuse: the user would lose the old preset for nothing.
  if (Result<Preset> check = parsePreset(bytes, QString()); !check) {
    return Status(check.status().code(),
                  (path + QStringLiteral(": not saved: ")).toStdString() + check.status().message());
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    return Status::ioError((path + QStringLiteral(": cannot write: ") + file.errorString()).toStdString());
  }
  if (file.write(bytes) != bytes.size()) {
    const QString reason = file.errorString();
    file.cancelWriting();
    return Status::ioError(
        (path + QStringLiteral(": write failed, the previous file is kept: ") + reason).toStdString());
  }
  if (!file.commit()) {
    return Status::ioError(
        (path + QStringLiteral(": cannot replace the file, the previous one is kept: ") + file.errorString())
            .toStdString());
  }
  return Status::ok();
}

core::Result<Preset> loadPresetFile(const QString& path) {
  const QFileInfo info(path);
  if (!info.exists()) return Status::ioError((path + QStringLiteral(": no such file")).toStdString());
  if (info.isDir())
    return Status::ioError((path + QStringLiteral(": is a directory, not a preset file")).toStdString());
  const QString tooLarge = QStringLiteral("%1: larger than the %2 bytes a preset file may have; not a preset")
                               .arg(path)
                               .arg(kMaxPresetFileBytes);
  if (info.size() > kMaxPresetFileBytes) return Status::parseError(tooLarge.toStdString());
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status::ioError((path + QStringLiteral(": cannot read: ") + file.errorString()).toStdString());
  }
  // Devices and pipes report size 0: the read itself is bounded too.
  const QByteArray bytes = file.read(kMaxPresetFileBytes + 1);
  if (file.error() != QFileDevice::NoError) {
    return Status::ioError((path + QStringLiteral(": cannot read: ") + file.errorString()).toStdString());
  }
  if (bytes.size() > kMaxPresetFileBytes) return Status::parseError(tooLarge.toStdString());
  return parsePreset(bytes, path);
}

std::vector<Preset> builtinPresets() {
  static std::once_flag once;
  std::call_once(once, initPresetResources);
  std::vector<Preset> out;
  const QDir dir(QStringLiteral(":/presets"));
  const QFileInfoList files = dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
  for (const QFileInfo& info : files) {
    QFile file(info.absoluteFilePath());
    Result<Preset> preset =
        file.open(QIODevice::ReadOnly)
            ? parsePreset(file.readAll(), info.absoluteFilePath())
            : Result<Preset>(Status::ioError(info.absoluteFilePath().toStdString() + ": cannot read"));
    if (!preset) {
      qWarning("built-in preset skipped: %s", preset.status().message().c_str());
      Q_ASSERT_X(false, "builtinPresets", preset.status().message().c_str());
      continue;
    }
    if (preset->id.isEmpty()) preset->id = info.completeBaseName();
    out.push_back(std::move(*preset));
  }
  std::sort(out.begin(), out.end(), [](const Preset& a, const Preset& b) { return a.id < b.id; });
  return out;
}

Preset presetFromState(const ModelState& state, const QString& name) {
  Preset preset = presetFromParams(state.params, name);
  preset.trainerData = state.trainer.source;
  preset.trainerMechanisms = state.trainer.mechanisms;
  if (state.trainer.features != core::training::FeatureKind::kRaw) preset.trainerFeatures = state.trainer.features;
  preset.trainerScaling = state.trainer.scaling;
  if (!state.trainer.model.convex()) preset.trainerModel = state.trainer.model;
  if (state.trainer.calibrate && state.trainer.targetEpsilon) preset.targetEpsilon = state.trainer.targetEpsilon;
  return preset;
}

ModelState stateFromPreset(const Preset& preset, const ModelState& current) {
  ModelState state = current;
  state.params = preset.params;
  if (!preset.trainerData.isEmpty()) state.trainer.source = preset.trainerData;
  if (!preset.trainerMechanisms.isEmpty()) state.trainer.mechanisms = preset.trainerMechanisms;
  // A preset that names its data also says what the model sees of it (raw values unless it says).
  if (!preset.trainerData.isEmpty()) {
    state.trainer.features = preset.trainerFeatures.value_or(core::training::FeatureKind::kRaw);
    state.trainer.scaling = preset.trainerScaling;
  }
  // And the model (softmax regression unless it says): a preset is one experiment.
  state.trainer.model = preset.trainerModel.value_or(core::training::ModelSpec{});
  state.trainer.calibrate = preset.targetEpsilon.has_value();
  state.trainer.targetEpsilon = preset.targetEpsilon;
  // The paper's n stays on the knob (its accountants reproduce the published numbers); runs use
  // the data's n, as always.
  state.trainer.nFromData = false;
  return state;
}

Preset presetFromParams(const core::Params& params, const QString& name) {
  Preset preset;
  preset.name = name.trimmed().isEmpty() ? QStringLiteral("My preset") : name.trimmed();
  const QString s = slug(preset.name);
  preset.id = QStringLiteral("user-") + (s.isEmpty() ? QStringLiteral("preset") : s);
  preset.source = QStringLiteral("user");
  preset.params = params;
  return preset;
}

}  // namespace dpx::ui
