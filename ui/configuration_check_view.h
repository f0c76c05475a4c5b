// The configuration check of the Privacy tab: the mismatches between the run the model describes
// and the ε it would report (core/accounting/configuration_check.h), as a list with an error or
// warning icon per finding, or "No mismatches". The run is reported by the accountants of the
// trainer's ticked private mechanisms (rdp and pld when none is ticked), each on its own sampler
// unless Advanced sets one; with calibration on, the target ε (typed, or the table's) is checked
// instead of the ε at the knobs' σ. Recomputed on a worker whenever the knobs, the trainer's
// settings, the conversion or the batch averaging change (after the charts: once a drag rests,
// its findings would flicker past unread), so the GUI thread only fills the list.
#pragma once

#include <QGroupBox>
#include <QIcon>
#include <QStringList>
#include <cstdint>
#include <string>
#include <vector>

#include "accounting/configuration_check.h"
#include "session/parameter_model.h"
#include "session/view_controller.h"

class QListWidget;

namespace dpx::ui {

// One finding of the model's run, with the mechanisms it was found for (empty: the default
// accountants, no mechanism ticked).
struct ModelFinding {
  core::accounting::Finding finding;
  QStringList mechanisms;
};

struct ModelCheck {
  std::vector<ModelFinding> findings;  // errors first, each once
  QString error;                       // why a mechanism could not be checked, if one could not
};

// The check of everything the model's state would run and report (plain computation, any thread).
ModelCheck checkModelState(const ModelState& state, core::accounting::BatchAverage average,
                           core::accounting::Conversion conversion);

class ConfigurationCheckView : public QGroupBox {
  Q_OBJECT
 public:
  // The list waits for a drag to rest, and after any other change lets the charts above it
  // paint first (its findings are read after the curves, not in the same frame).
  static constexpr int kDragDebounceMs = 150;
  static constexpr int kEditDebounceMs = 40;
  explicit ConfigurationCheckView(ParameterModel* model, QWidget* parent = nullptr);
  QListWidget* list() const { return m_list; }
  // "error: sampling: …" per row, or the single "No mismatches" row (tests, reports).
  QStringList rowsText() const;
  const ModelCheck& lastCheck() const { return m_last; }
  ViewController* controller() { return &m_view; }
  // Time the GUI thread spent filling the list for the last result.
  double lastFillMilliseconds() const { return m_fillMs; }

 Q_SIGNALS:
  void checkShown();

 private:
  void request();
  void start();
  void show(ModelCheck check);
  void fitRows();
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;
  ParameterModel* m_model;
  QListWidget* m_list;
  ViewController m_view;
  ModelCheck m_last;
  double m_fillMs = 0.0;
  QIcon m_errorIcon;
  QIcon m_warningIcon;
  QIcon m_okIcon;
};

}  // namespace dpx::ui
