// "σ for a target ε", per accountant, applied with one click (an undoable edit of σ). The
// search runs in the background (conservative: every σ shown gives ε ≤ target). The target also
// anchors the constants c and c₂ of the step-size chart.
#pragma once

#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QWidget>
#include <vector>

#include "compute/background_job.h"
#include "parameter_model.h"

namespace dpx::ui {

struct CalibrationRow;  // calibrate_panel.cpp

class CalibratePanel : public QWidget {
  Q_OBJECT
 public:
  explicit CalibratePanel(ParameterModel* model, QWidget* parent = nullptr);
  double targetEpsilon() const { return m_target; }
  QTableWidget* table() const { return m_table; }
  void calibrate();  // start the background search
  BackgroundJob* job() { return &m_job; }

 Q_SIGNALS:
  void targetChanged(double epsilon);
  void calibrated();

 private:
  bool acceptTarget();
  void showRows(const std::vector<CalibrationRow>& rows);
  void showRow(int row, const CalibrationRow& r);
  ParameterModel* m_model;
  QLineEdit* m_entry;
  QTableWidget* m_table;
  QLabel* m_status;
  BackgroundJob m_job{true};
  double m_target = 1.0;
};

}  // namespace dpx::ui
