// File → "Export privacy statement…" and the "Copy Opacus / JAX-Privacy configuration" actions:
// the privacy statement of the knobs as they are (core::accounting::makePrivacyStatement,
// including the exact accountant, ≈0.1–1 s) is computed on a BackgroundJob, never on the GUI
// thread; the JSON is written atomically with QSaveFile, a snippet goes to the clipboard. Failures
// show in the status bar and in a (non-blocking) message box.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "accounting/accountant.h"
#include "accounting/handoff_snippets.h"
#include "common/params.h"
#include "compute/background_job.h"

class QMainWindow;
class QMenu;

namespace dpx::ui {

class StatementExport : public QObject {
  Q_OBJECT
 public:
  using ParamsSource = std::function<core::Params()>;
  using ConversionSource = std::function<core::accounting::Conversion()>;

  // `params` and `conversion` are read on the GUI thread when an action starts.
  StatementExport(QMainWindow* window, ParamsSource params, ConversionSource conversion);

  // The three actions, appended to `menu` (objectNames exportPrivacyStatementAction,
  // copyOpacusConfigurationAction, copyJaxPrivacyConfigurationAction).
  void addActions(QMenu* menu);

  // Computes the statement off the GUI thread, then writes it to `path`; finished() tells how it went.
  void exportTo(const QString& path);
  // Computes the statement off the GUI thread, then puts the snippet on the clipboard.
  void copySnippet(core::accounting::HandoffTarget target);

  BackgroundJob* exportJob() { return &m_exportJob; }
  BackgroundJob* copyJob() { return &m_copyJob; }

 Q_SIGNALS:
  void finished(bool ok, const QString& message);

 private:
  using Deliver = std::function<void(const std::string& json, const core::accounting::PrivacyStatement& statement)>;
  void compute(BackgroundJob& job, const QString& what, Deliver deliver);
  void report(bool ok, const QString& message);

  QMainWindow* m_window;
  ParamsSource m_params;
  ConversionSource m_conversion;
  BackgroundJob m_exportJob{false};
  BackgroundJob m_copyJob{false};
};

}  // namespace dpx::ui
