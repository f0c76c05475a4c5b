// The knobs of the run (core::Params) as sliders with typed entry, the advanced settings (w, M, D, schedule,
// sampling, neighbouring relation, averaged release) and an inline message naming the bound an
// invalid combination breaks (the charts keep showing the last valid one meanwhile).
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QWidget>
#include <initializer_list>
#include <map>

#include "common/params.h"
#include "knob_widget.h"
#include "session/parameter_model.h"

class QGroupBox;
class QVBoxLayout;

namespace dpx::ui {

class ParameterPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ParameterPanel(ParameterModel* model, QWidget* parent = nullptr);
  KnobWidget* knobWidget(core::Knob knob) const { return m_knobs.at(knob); }
  QLabel* messageLabel() const { return m_message; }
  QComboBox* scheduleBox() const { return m_schedule; }
  QComboBox* samplingBox() const { return m_sampling; }

 Q_SIGNALS:
  void layoutChanged();  // the knobs' minimum size may have changed (a longer note, a reason)

 protected:
  bool event(QEvent* event) override;

 private:
  void buildMessage();
  QGroupBox* addKnobGroup(QVBoxLayout* layout, const QString& title, std::initializer_list<core::Knob> knobs);
  void buildAdvancedSettings(QGroupBox* advanced);
  void buildSettingBoxes(QGroupBox* advanced);
  void connectSettings();
  void refresh();
  ParameterModel* m_model;
  std::map<core::Knob, KnobWidget*> m_knobs;
  QLabel* m_message;
  QComboBox* m_schedule;
  QComboBox* m_sampling;
  QComboBox* m_neighbouring;
  QComboBox* m_optimizer;
  QComboBox* m_batchAverage;
  QComboBox* m_conversion;
  QCheckBox* m_averaged;
};

}  // namespace dpx::ui
