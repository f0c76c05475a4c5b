#include "knob_widget.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/format.h"

namespace dpx::ui {

using core::Knob;
using core::KnobInfo;

SliderScale::SliderScale(double lo, double hi, bool logarithmic, bool zeroAtLeft, int ticks)
    : m_lo(lo), m_hi(hi), m_log(logarithmic), m_zeroAtLeft(zeroAtLeft), m_ticks(std::max(ticks, 2)) {}

int SliderScale::toTick(double value) const {
  if (!std::isfinite(value)) return 0;
  if (m_zeroAtLeft && value <= 0.0) return 0;
  const int first = m_zeroAtLeft ? 1 : 0;
  double t;
  if (m_log) {
    const double v = std::clamp(value, m_lo, m_hi);
    t = (std::log(v) - std::log(m_lo)) / (std::log(m_hi) - std::log(m_lo));
  } else {
    t = (std::clamp(value, m_lo, m_hi) - m_lo) / (m_hi - m_lo);
  }
  return first + static_cast<int>(std::lround(t * (m_ticks - first)));
}

double SliderScale::fromTick(int tick) const {
  if (m_zeroAtLeft && tick <= 0) return 0.0;
  const int first = m_zeroAtLeft ? 1 : 0;
  const double t = std::clamp(static_cast<double>(tick - first) / (m_ticks - first), 0.0, 1.0);
  if (m_log) return std::exp(std::log(m_lo) + t * (std::log(m_hi) - std::log(m_lo)));
  return m_lo + t * (m_hi - m_lo);
}

SliderScale sliderScaleFor(Knob knob, double n) {
  switch (knob) {
    case Knob::kN:
      return {10, 1e8, true, false};
    case Knob::kM:
      return {1, std::max(2.0, n), true, false};
    case Knob::kSigma:
      return {0.05, 100, true, false};
    case Knob::kEta:
      return {1e-6, 100, true, false};
    case Knob::kK:
      return {1, 1e7, true, false};
    case Knob::kAlpha:
      return {1.01, 1024, true, false};
    case Knob::kDelta:
      return {1e-15, 0.1, true, false};
    case Knob::kL:
      return {1e-3, 1e3, true, false};
    case Knob::kLambda:
      return {1e-6, 10, true, true};
    case Knob::kBeta:
      return {1e-4, 1e4, true, false};
    case Knob::kW:
      return {1e-4, 1e3, true, true};
    case Knob::kCurvatureM:
      return {1e-4, 1e6, true, true};
    case Knob::kD:
      return {1e-3, 1e6, true, false};
  }
  return {};
}

std::optional<double> parseTypedNumber(const QString& text) {
  const std::string s = text.trimmed().toStdString();
  if (s.empty()) return std::nullopt;
  double value = 0.0;
  const char* first = s.data() + (s[0] == '+' ? 1 : 0);
  const char* last = s.data() + s.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

QString typedNumberProblem(const QString& text) {
  const QString shown = text.trimmed();
  if (shown.isEmpty()) return QStringLiteral("type a number");
  const std::string s = shown.toStdString();
  double value = 0.0;
  const char* first = s.data() + (s[0] == '+' ? 1 : 0);
  const char* last = s.data() + s.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range && end == last) {
    return QStringLiteral("'%1' is beyond the largest number (about 1.8e308)").arg(shown);
  }
  if (ec != std::errc() || end != last) return QStringLiteral("'%1' is not a number").arg(shown);
  if (!std::isfinite(value)) return QStringLiteral("'%1' is not a finite number").arg(shown);
  return {};
}

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
  // Never widens the panel: the full text is in the tooltip.
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
  m_full = text;
  setToolTip(text);
  elide();
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  elide();
}

void ElidedLabel::elide() { setText(fontMetrics().elidedText(m_full, Qt::ElideRight, std::max(0, width()))); }

namespace {

QString tooltipFor(const KnobInfo& info) {
  QString direction;
  if (info.privateDirection > 0) direction = QStringLiteral("Larger is more private.");
  if (info.privateDirection < 0) direction = QStringLiteral("Smaller is more private.");
  return QStringLiteral(
             "<b>%1 — %2</b><br>%3<br><i>Range %4. %5 Type a value (e.g. 1e-5) or drag; "
             "arrows and Page Up/Down step the slider.</i>")
      .arg(QString::fromUtf8(info.symbol), QString::fromUtf8(info.title), QString::fromUtf8(info.lesson),
           QString::fromStdString(core::knobRangeText(info)), direction);
}

}  // namespace

KnobWidget::KnobWidget(Knob knob, ParameterModel* model, QWidget* parent)
    : QWidget(parent), m_knob(knob), m_model(model) {
  const KnobInfo& info = core::knobInfo(knob);
  setObjectName(QStringLiteral("knob_%1").arg(QString::fromLatin1(info.key)));
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 2, 0, 2);
  grid->setHorizontalSpacing(6);
  grid->setVerticalSpacing(0);
  auto* name = new QLabel(
      QStringLiteral("<b>%1</b> %2").arg(QString::fromUtf8(info.symbol), QString::fromUtf8(info.title)), this);
  m_note = new QLabel(this);
  m_note->setStyleSheet(QStringLiteral("color: palette(mid);"));
  QLabel* arrow = buildArrow(info);
  m_arrow = arrow;
  buildInputs(info);
  grid->addWidget(name, 0, 0);
  if (knob == Knob::kN) {
    buildBinding(grid, arrow);
  } else {
    grid->addWidget(m_note, 0, 1, Qt::AlignRight);
    grid->addWidget(arrow, 0, 2, Qt::AlignRight);
  }
  m_reason = new ElidedLabel(this);
  m_reason->setObjectName(QStringLiteral("knobReason"));
  m_reason->setStyleSheet(QStringLiteral("color: #b71c1c;"));
  m_reason->hide();
  // In the row of the name, over the note and the arrow: a reason that appears or goes never
  // moves the knobs below it.
  grid->addWidget(m_reason, 0, 1, 1, 2);
  grid->addWidget(m_slider, 1, 0, 1, 2);
  grid->addWidget(m_entry, 1, 2);
  grid->setColumnStretch(0, 1);
  const QString tip = tooltipFor(info);
  for (QWidget* w : {static_cast<QWidget*>(name), static_cast<QWidget*>(m_slider), static_cast<QWidget*>(m_entry)}) {
    w->setToolTip(tip);
  }
  m_scale = sliderScaleFor(knob, static_cast<double>(model->params().n));
  m_slider->setRange(0, m_scale.ticks());
  m_slider->setSingleStep(1);
  m_slider->setPageStep(50);
  connectInputs();
  refresh();
}

// Which way is more private, in green; empty for knobs that do not move ε one way.
QLabel* KnobWidget::buildArrow(const KnobInfo& info) {
  auto* arrow = new QLabel(this);
  if (info.privateDirection != 0) {
    arrow->setText(info.privateDirection > 0 ? QStringLiteral("more private →") : QStringLiteral("← more private"));
    arrow->setStyleSheet(QStringLiteral("color: #2e7d32; font-size: 9pt;"));
  }
  return arrow;
}

void KnobWidget::buildInputs(const KnobInfo& info) {
  m_slider = new QSlider(Qt::Horizontal, this);
  m_slider->setFocusPolicy(Qt::StrongFocus);
  m_entry = new QLineEdit(this);
  // Wide enough for the longest value formatNumber(·, 6) prints ("0.000123457", "1.23457e-05").
  m_entry->setMinimumWidth(m_entry->fontMetrics().horizontalAdvance(QStringLiteral("0.000123457")) + 14);
  m_entry->setMaximumWidth(m_entry->minimumWidth() + 24);
  m_entry->setAlignment(Qt::AlignRight);
  m_entry->setAccessibleName(QString::fromUtf8(info.title));
  m_slider->setAccessibleName(QString::fromUtf8(info.title));
}

// n follows the training set the trainer loads; released, it is a what-if for the accountants
// while every run still uses the data's n. n's row: name, which way is private, the toggle; the
// binding's state is in its tooltip (the note stays hidden).
void KnobWidget::buildBinding(QGridLayout* grid, QLabel* arrow) {
  m_bind = new QToolButton(this);
  m_bind->setObjectName(QStringLiteral("bindN"));
  m_bind->setText(QStringLiteral("from data"));
  m_bind->setCheckable(true);
  m_bind->setAutoRaise(true);
  m_bind->setStyleSheet(
      QStringLiteral("QToolButton { font-size: 8pt; padding: 0 3px; } "
                     "QToolButton:checked { background: #e3f2fd; border: 1px solid #90caf9; }"));
  m_note->hide();
  grid->addWidget(arrow, 0, 1, Qt::AlignRight);
  grid->addWidget(m_bind, 0, 2, Qt::AlignRight);
  connect(m_bind, &QToolButton::clicked, this, [this](bool on) { m_model->setNFromData(on); });
  connect(m_model, &ParameterModel::trainerChanged, this, &KnobWidget::refresh);
  connect(m_model, &ParameterModel::dataSizeChanged, this, &KnobWidget::refresh);
}

void KnobWidget::connectInputs() {
  connect(m_slider, &QSlider::sliderPressed, this, [this] { m_dragToken = m_model->beginDrag(); });
  connect(m_slider, &QSlider::sliderReleased, this, [this] { m_dragToken = 0; });
  connect(m_slider, &QSlider::valueChanged, this, [this](int tick) {
    if (m_updating) return;
    // Keyboard steps are undo steps of their own; a drag merges into one.
    m_model->setKnob(m_knob, m_scale.fromTick(tick), m_slider->isSliderDown() ? m_dragToken : 0);
  });
  connect(m_entry, &QLineEdit::editingFinished, this, &KnobWidget::commitTyped);
  connect(m_model, &ParameterModel::paramsChanged, this, &KnobWidget::refresh);
}

void KnobWidget::setNote(const QString& note) { m_note->setText(note); }

void KnobWidget::refreshBinding() {
  const bool bound = m_model->trainer().nFromData;
  const auto size = m_model->currentDataSize();
  {
    const QSignalBlocker block(m_bind);
    m_bind->setChecked(bound);
  }
  const bool locked = bound && size && *size == m_model->params().n;
  m_slider->setEnabled(!locked);
  m_entry->setReadOnly(locked);
  const QString source = m_model->trainer().source;
  if (locked) {
    m_bind->setToolTip(QStringLiteral("n is the training size of %1. Click to release it and explore what-ifs "
                                      "(runs always use the data's n).")
                           .arg(source));
    m_bind->setText(QStringLiteral("from data ✓"));
  } else if (bound) {
    m_bind->setToolTip(
        QStringLiteral("n will follow the training size of %1 when it is loaded (Training tab).").arg(source));
    m_bind->setText(QStringLiteral("from data"));
  } else {
    m_bind->setToolTip(QStringLiteral("n is a what-if: the trainer's runs use the data's n. Click to set n to the "
                                      "training size of %1 (K follows, so the epochs stay).")
                           .arg(source));
    m_bind->setText(size ? QStringLiteral("what-if (data: %1)").arg(*size) : QStringLiteral("what-if"));
  }
}

// A value the knob cannot take stays in the field, marked, with the reason beside it, and the
// model keeps its value: only combinations of valid knobs (m > n) reach the model invalid.
void KnobWidget::commitTyped() {
  const std::optional<double> value = parseTypedNumber(m_entry->text());
  QString problem = value ? QString() : typedNumberProblem(m_entry->text());
  if (value) {
    const core::Status range = core::validateKnob(m_knob, *value);
    if (!range.isOk()) problem = QString::fromStdString(range.message());
  }
  if (!problem.isEmpty()) {
    m_typedProblem = problem;
    showReason();
    return;
  }
  m_typedProblem.clear();
  m_model->setKnob(m_knob, *value, 0);
  refresh();
}

void KnobWidget::showReason() {
  QString reason = m_typedProblem;
  if (reason.isEmpty()) {
    const core::Status range = core::validateKnob(m_knob, core::knobValue(m_model->params(), m_knob));
    if (!range.isOk()) reason = QString::fromStdString(range.message());
  }
  const bool ok = reason.isEmpty();
  m_entry->setStyleSheet(ok ? QString() : QStringLiteral("background: #ffebee;"));
  m_entry->setToolTip(ok ? m_slider->toolTip() : reason);
  m_reason->setFullText(reason);
  m_reason->setVisible(!ok);
  m_note->setVisible(ok && m_knob != Knob::kN);
  m_arrow->setVisible(ok);
  if (m_bind) m_bind->setVisible(ok);
}

void KnobWidget::refresh() {
  m_updating = true;
  if (m_knob == Knob::kM) {
    const SliderScale scale = sliderScaleFor(m_knob, static_cast<double>(m_model->params().n));
    m_scale = scale;
  }
  const double value = core::knobValue(m_model->params(), m_knob);
  {
    const QSignalBlocker block(m_slider);
    if (!m_slider->isSliderDown()) m_slider->setValue(m_scale.toTick(value));
  }
  if (!m_entry->hasFocus() || m_slider->isSliderDown()) {
    m_entry->setText(QString::fromStdString(core::formatNumber(value, 6)));
    m_typedProblem.clear();  // the field shows the model's value again
  }
  showReason();
  if (m_bind) refreshBinding();
  if (m_knob == Knob::kK) {
    setNote(QStringLiteral("%1 epochs")
                .arg(QString::fromStdString(core::formatNumber(core::nominalEpochs(m_model->params()), 4))));
  } else if (m_knob == Knob::kM) {
    setNote(QStringLiteral("q = %1").arg(QString::fromStdString(core::formatNumber(m_model->params().q(), 3))));
  }
  m_updating = false;
}

}  // namespace dpx::ui
