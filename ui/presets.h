// Presets: named parameter sets stored as versioned JSON — the source papers' experiments built in
// (resources/presets/*.json, compiled into the :/presets resource) and the user's own files.
//
// A preset file is read strictly: a typo in a key or a value outside a knob's range is refused
// with the JSON path and the reason instead of being silently dropped, because a preset that
// quietly loads a different run than the paper's would teach the wrong number.
//
// File format (version 1):
//   { "format": "dpexplorer-preset", "version": 1, "id": "…", "name": "…", "description": "…",
//     "source": "Bu, Dong, Long & Su 2020, Table 1, row 1", "notes": ["…"], "target_epsilon": 1.0,
//     "params": { "n": 60000, "m": 256, "sigma": 1.3, "epochs": 15, …,
//                 "schedule": "constant", "sampling": "poisson", "neighbouring": "add-remove",
//                 "averaged": false },
//     "trainer": { "data": "builtin:digits", "mechanisms": ["dp-sgd", "sgd"], "epochs": 15,
//                  "features": "raw", "scaling": "unit-norm" } }
// params may also say "optimizer": "sgd" | "momentum" | "adam" (unset: each mechanism's own).
// Required: format, version, name, params. Knobs a file leaves out keep core::Params' defaults;
// "epochs" stands for K = ⌈epochs·n/m⌉ and may not be combined with "K".
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include "common/params.h"
#include "common/status.h"
#include "session/parameter_model.h"

namespace dpx::ui {

inline constexpr int kPresetFormatVersion = 1;
inline constexpr const char* kPresetFormatTag = "dpexplorer-preset";
// A preset is a few kB; anything larger is not one, and reading it whole would stall the GUI.
inline constexpr qint64 kMaxPresetFileBytes = 1024 * 1024;

struct Preset {
  int version = kPresetFormatVersion;
  QString id;           // stable key, e.g. "seed003-mnist-row1"; built-ins are sorted by it
  QString name;         // menu text
  QString description;  // what the run is and what was assumed where the paper is silent
  QString source;       // paper, table, row
  core::Params params;
  std::optional<double> targetEpsilon;  // the budget the paper calibrated to, if any
  QStringList notes;
  // Optional trainer settings: the dataset ("builtin:digits" or a path), the mechanisms to compare
  // (core::training::mechanismId values) and the epochs to train for. The trainer trains the
  // epochs of K, so "epochs" sets K when the params give no steps and must agree otherwise.
  QString trainerData;
  QStringList trainerMechanisms;
  std::optional<double> trainerEpochs;
  // What the model sees of the data ("features": raw | scatternet) and the per-record
  // "scaling" (unit-norm | clip-norm | none); unset: raw values, unit norm.
  std::optional<core::training::FeatureKind> trainerFeatures;
  std::optional<core::training::FeatureScaling> trainerScaling;
  // The model trained ("model": linear | mlp | cnn | scatter-cnn, with "hidden" units for the mlp
  // and "activation": tanh | relu); unset: softmax regression.
  std::optional<core::training::ModelSpec> trainerModel;

  bool hasTrainer() const {
    return !trainerData.isEmpty() || !trainerMechanisms.isEmpty() || trainerEpochs || trainerFeatures ||
           trainerScaling || trainerModel;
  }
};

// Every knob, enum and flag of the two runs equal (doubles compared exactly: a round trip
// through JSON must reproduce them bit for bit).
bool sameParams(const core::Params& a, const core::Params& b);
bool operator==(const Preset& a, const Preset& b);

// Strict parse; `what` (a file name or "clipboard") starts every error message:
// "<what>: <json path>: <reason>", e.g. "my.json: params.sigma: sigma = -1 is out of range: …".
core::Result<Preset> parsePreset(const QByteArray& json, const QString& what);

// Indented JSON that parsePreset reads back to an equal Preset. K is written, never epochs.
QByteArray serializePreset(const Preset& preset);

// Atomic (QSaveFile): the file is either the complete new preset or untouched. A preset that
// would not load back is refused before anything is written.
core::Status savePresetFile(const Preset& preset, const QString& path);

// Reads at most kMaxPresetFileBytes; io and parse errors name the path.
core::Result<Preset> loadPresetFile(const QString& path);

// Every :/presets/*.json, sorted by id. A broken built-in is a programming error: it asserts in
// debug builds and is skipped (with a warning) in release builds.
std::vector<Preset> builtinPresets();

// The user's "save as preset": the current knobs under a name, id derived from the name.
Preset presetFromParams(const core::Params& params, const QString& name);
// The same with the trainer's settings (dataset, mechanisms, calibration target).
Preset presetFromState(const ModelState& state, const QString& name);
// What applying a preset sets: its knobs, dataset, mechanisms, epochs (through K) and target ε
// (calibration on exactly when it has one); n is released from the data so the paper's n stays.
ModelState stateFromPreset(const Preset& preset, const ModelState& current);

}  // namespace dpx::ui
