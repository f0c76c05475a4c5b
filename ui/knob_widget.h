// One knob of the run (core::Params): a log-scale slider paired with a typed entry that accepts "1e-5", an
// arrow saying which way is more private, and a tooltip that is a short lesson. Every edit goes
// through the ParameterModel (undoable; one slider drag = one undo step).
#pragma once

#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QToolButton>
#include <QWidget>

#include "common/params.h"
#include "session/parameter_model.h"

class QGridLayout;

namespace dpx::ui {

// Maps slider ticks to knob values: logarithmic (with 0 at the leftmost tick for knobs whose
// range starts at 0) or linear.
class SliderScale {
 public:
  SliderScale() = default;
  SliderScale(double lo, double hi, bool logarithmic, bool zeroAtLeft, int ticks = 1000);
  int toTick(double value) const;
  double fromTick(int tick) const;
  int ticks() const { return m_ticks; }
  double lo() const { return m_lo; }
  double hi() const { return m_hi; }

 private:
  double m_lo = 0.0;
  double m_hi = 1.0;
  bool m_log = false;
  bool m_zeroAtLeft = false;
  int m_ticks = 1000;
};

// The slider scale the GUI uses for a knob (the ranges of core::knobInfo(); β, w, M, D get practical
// ranges, the typed entry still accepts the full range). `n` bounds the batch size.
SliderScale sliderScaleFor(core::Knob knob, double n);

// A one-line label that elides its text to the width it gets (the full text in its tooltip).
class ElidedLabel : public QLabel {
 public:
  explicit ElidedLabel(QWidget* parent = nullptr);
  void setFullText(const QString& text);
  QString fullText() const { return m_full; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void elide();
  QString m_full;
};

class KnobWidget : public QWidget {
  Q_OBJECT
 public:
  KnobWidget(core::Knob knob, ParameterModel* model, QWidget* parent = nullptr);
  core::Knob knob() const { return m_knob; }
  QSlider* slider() const { return m_slider; }
  QLineEdit* entry() const { return m_entry; }
  // The text shown beside the value (e.g. epochs for K).
  void setNote(const QString& note);
  // Why the typed or current value is refused, shown beside the name; empty when it is fine.
  QString reason() const { return m_reason->isVisible() ? m_reason->fullText() : QString(); }
  // n only: the "from data" toggle that binds n to the loaded training set (null otherwise).
  QToolButton* bindButton() const { return m_bind; }

 private:
  QLabel* buildArrow(const core::KnobInfo& info);
  void buildInputs(const core::KnobInfo& info);
  void buildBinding(QGridLayout* grid, QLabel* arrow);
  void connectInputs();
  void refresh();
  void refreshBinding();
  void commitTyped();
  void showReason();
  core::Knob m_knob;
  ParameterModel* m_model;
  QSlider* m_slider;
  QLineEdit* m_entry;
  QLabel* m_note;
  QLabel* m_arrow = nullptr;
  ElidedLabel* m_reason = nullptr;
  QString m_typedProblem;  // a typed text the knob refused, while it stays in the field
  QToolButton* m_bind = nullptr;
  SliderScale m_scale;
  int m_dragToken = 0;
  bool m_updating = false;
};

// Parses a typed number strictly ("1e-5", "0.3", "60000"); nullopt for anything else.
std::optional<double> parseTypedNumber(const QString& text);
// Why parseTypedNumber refuses `text`, in words ("'abc' is not a number"); empty when it accepts it.
QString typedNumberProblem(const QString& text);

}  // namespace dpx::ui
