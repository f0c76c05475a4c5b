// A run in phases, edited as a table: one row per phase, of Poisson-subsampled Gaussian steps
// (sampling probability q, noise multiplier σ, steps) or of random-allocation epochs (σ, each
// record in k of t steps, epochs), its kind chosen per row; rows added and removed, filled from the
// knobs (one phase q = m/n, σ, K) or from a Google dp_accounting DpEvents file (File → Open DP
// events…). Shows the composition at the knobs' δ: the exact (PLD) bracket [ε_lower, ε_upper]
// and the moments accountant's ε with its order, computed off the GUI thread (a newer table
// cancels the running composition). The numbers are those of `dpx epsilon --events`.
#pragma once

#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QWidget>
#include <optional>
#include <vector>

#include "accounting/phased_run.h"
#include "compute/background_job.h"
#include "session/parameter_model.h"

namespace dpx::ui {

// What the panel shows for one table: the inputs that made it and the answers (or why not).
struct PhasedRunResult {
  std::vector<core::accounting::Phase> phases;
  double delta = 0.0;
  core::accounting::Conversion conversion = core::accounting::Conversion::kImproved;
  std::optional<double> pldUpper, pldLower, rdpEpsilon, rdpAlpha;
  QString pldMessage, rdpMessage;  // why a number is missing
};

class PhaseTablePanel : public QWidget {
  Q_OBJECT
 public:
  explicit PhaseTablePanel(ParameterModel* model, QWidget* parent = nullptr);

  // Replaces the table (and recomputes).
  void setPhases(const std::vector<core::accounting::Phase>& phases);
  // The table's phases, or why a cell cannot be read ("row 2, σ: …").
  core::Result<std::vector<core::accounting::Phase>> phases() const;
  // Reads a DpEvents file into the table; false with the reason (the file, the byte or the place
  // in the document) in `error`, the table unchanged.
  bool loadEventsFile(const QString& path, QString* error);
  void fromKnobs();  // one phase: q = m/n, σ, K
  void addRow();     // a copy of the last row (or of the knobs)
  void removeSelectedRows();
  void recompute();

  QTableWidget* table() const { return m_table; }
  QLabel* pldLabel() const { return m_pld; }
  QLabel* rdpLabel() const { return m_rdp; }
  QLabel* statusLabel() const { return m_status; }
  const std::optional<PhasedRunResult>& result() const { return m_result; }
  BackgroundJob* job() { return &m_job; }

 Q_SIGNALS:
  void computed();  // the labels show a new result

 private:
  void showResult(const PhasedRunResult& r);
  void setRow(int row, const core::accounting::Phase& phase);
  void convertRow(int row, int kind);

  ParameterModel* m_model;
  QTableWidget* m_table;
  QLabel* m_pld;
  QLabel* m_rdp;
  QLabel* m_status;
  QPushButton* m_remove;
  BackgroundJob m_job{true};
  std::optional<PhasedRunResult> m_result;
  bool m_filling = false;  // the table is being written: its edits are not the user's
};

}  // namespace dpx::ui
