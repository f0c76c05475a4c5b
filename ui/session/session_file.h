// A saved session (.dpxsession): versioned JSON holding the knobs and the trainer's settings (the
// dataset by reference — a built-in id or a path, never the data), the view, the pinned
// configuration (A) and the training results with the knobs and data that produced them.
//
// Read strictly, like presets: malformed JSON is refused with the byte (line, column) where it
// broke, a wrong field with its JSON path ("runs[1].history[3].test_accuracy: expected a number
// in [0, 1]"), an unknown key by name — a session that quietly loaded something else would show
// results beside knobs they do not belong to.
//
// Format (version 1):
//   { "format": "dpexplorer-session", "version": 1, "app_version": "0.2.3",
//     "state": <a preset object (presets.h): params and trainer>, "n_from_data": true,
//     "calibrate": true, "target_epsilon": 1.0 | null,
//     "view": { "tab": 0, "epochs_axis": false, "fixed_alpha": false, "log_epsilon": true,
//               "roc_view": false, "exact_pld": true, "conversion": "improved" },
//     "pinned": <a preset object> | null,
//     "runs": [ { "mechanism": "dp-sgd", "data": "builtin:digits", "knobs": <params object>,
//                 "epsilon": 1.2 | null, "delta": 1e-5, "test_accuracy": 0.91, "train_accuracy": 0.93,
//                 "used": { "sigma": 1.1, "eta": 0.45, "clip_norm": 1, "steps": 675 },
//                 "history": [ { "epoch": 1, "steps": 22, "train_accuracy": …, "test_accuracy": …,
//                                "loss": …, "epsilon": … | null, "seconds": … } ] } ] }
#pragma once

#include <QByteArray>
#include <QString>
#include <optional>
#include <vector>

#include "accounting/accountant.h"
#include "common/params.h"
#include "common/status.h"
#include "session/parameter_model.h"
#include "training/trainer.h"

namespace dpx::ui {

inline constexpr const char* kSessionFormatTag = "dpexplorer-session";
inline constexpr int kSessionFormatVersion = 1;
inline constexpr qint64 kMaxSessionFileBytes = 64 * 1024 * 1024;

struct SessionView {
  int tab = 0;
  bool epochsAxis = false;
  bool fixedAlpha = false;
  bool logEpsilon = true;
  bool rocView = false;
  bool exactPld = true;
  core::accounting::Conversion conversion = core::accounting::Conversion::kImproved;
  bool operator==(const SessionView&) const = default;
};

// One mechanism's finished run as the session keeps it: enough to draw its curves and its table
// row again, tagged with the knobs and the data it ran on.
struct SavedRun {
  QString mechanism;  // core::training::mechanismId
  QString data;       // the dataset source it trained on
  core::Params knobs;
  std::optional<double> epsilon;
  double delta = 0.0;
  double testAccuracy = 0.0;
  double trainAccuracy = 0.0;
  // What the run used where it differs from a knob (σ after calibration, L from the data…).
  double sigmaUsed = 0.0;
  double etaUsed = 0.0;
  double clipNormUsed = 0.0;
  std::int64_t stepsUsed = 0;
  std::vector<core::training::EpochRecord> history;
};

struct SessionFile {
  ModelState state;
  SessionView view;
  std::optional<core::Params> pinned;
  std::vector<SavedRun> runs;
};

// Indented JSON that parseSession reads back to the same session (doubles bit for bit).
QByteArray serializeSession(const SessionFile& session);
// `what` (the file name) starts every error; `current` fills what a session leaves to the
// present state (the trainer's settings it does not name).
core::Result<SessionFile> parseSession(const QByteArray& json, const QString& what, const ModelState& current);
// Atomic (QSaveFile): the complete new session or the old file untouched.
core::Status saveSessionFile(const SessionFile& session, const QString& path);
core::Result<SessionFile> loadSessionFile(const QString& path, const ModelState& current);

}  // namespace dpx::ui
