#include "lessons_panel.h"

#include <QHBoxLayout>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "common/format.h"

namespace dpx::ui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QLabel* wrappedLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextFormat(Qt::RichText);
  label->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  return label;
}

}  // namespace

LessonsPanel::LessonsPanel(Session* session, QWidget* parent) : QWidget(parent), m_session(session) {
  setObjectName(QStringLiteral("lessonsPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  m_list = new QListWidget(this);
  for (const Lesson& l : lessons()) m_list->addItem(qs(l.title));
  m_list->setMaximumHeight(m_list->sizeHintForRow(0) * static_cast<int>(lessons().size()) + 6);
  layout->addWidget(m_list);
  m_title = wrappedLabel(this);
  m_title->setStyleSheet(QStringLiteral("font-weight: bold; font-size: 110%;"));
  m_title->setText(QStringLiteral("Pick a lesson: it sets the knobs and shows only the curves it is about."));
  layout->addWidget(m_title);
  m_text = wrappedLabel(this);
  layout->addWidget(m_text);
  auto* sweepRow = new QHBoxLayout();
  m_play = new QPushButton(QStringLiteral("Play sweep"), this);
  m_sweepNote = wrappedLabel(this);
  sweepRow->addWidget(m_play);
  sweepRow->addWidget(m_sweepNote, 1);
  layout->addLayout(sweepRow);
  buildQuestion(layout);
  auto* nav = new QHBoxLayout();
  m_previous = new QPushButton(QStringLiteral("◀ Previous"), this);
  m_next = new QPushButton(QStringLiteral("Next ▶"), this);
  m_leave = new QPushButton(QStringLiteral("Leave lesson"), this);
  m_leave->setToolTip(QStringLiteral("Show every curve again (Edit → Undo restores the knobs)"));
  nav->addWidget(m_previous);
  nav->addWidget(m_next);
  nav->addStretch(1);
  nav->addWidget(m_leave);
  layout->addLayout(nav);
  layout->addStretch(1);

  m_sweep.setTimerType(Qt::PreciseTimer);
  connect(&m_sweep, &QTimer::timeout, this, &LessonsPanel::sweepStep);
  connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row != m_current) startLesson(row);
  });
  connect(m_play, &QPushButton::clicked, this, [this] { sweeping() ? stopSweep() : playSweep(); });
  connect(m_previous, &QPushButton::clicked, this, [this] { startLesson(std::max(0, m_current - 1)); });
  connect(m_next, &QPushButton::clicked, this,
          [this] { startLesson(std::min(static_cast<int>(lessons().size()) - 1, m_current + 1)); });
  connect(m_leave, &QPushButton::clicked, this, &LessonsPanel::leaveLesson);
  connect(m_revealButton, &QPushButton::clicked, this, &LessonsPanel::reveal);
  // A knob moved by hand (or undo) wins over the sweep: it stops where it is.
  connect(m_session->model(), &ParameterModel::paramsChanged, this, [this] {
    if (!m_sweepEdit && sweeping()) stopSweep();
  });
  showLesson();
}

void LessonsPanel::buildQuestion(QVBoxLayout* layout) {
  m_prompt = wrappedLabel(this);
  m_prompt->setStyleSheet(QStringLiteral("font-weight: bold;"));
  layout->addWidget(m_prompt);
  m_choiceBox = new QWidget(this);
  auto* choices = new QVBoxLayout(m_choiceBox);
  choices->setContentsMargins(8, 0, 0, 0);
  m_choices = new QButtonGroup(this);
  layout->addWidget(m_choiceBox);
  m_revealButton = new QPushButton(QStringLiteral("Reveal"), this);
  m_revealButton->setToolTip(QStringLiteral("Predict first, then look: the curves on screen show the answer"));
  auto* row = new QHBoxLayout();
  row->addWidget(m_revealButton);
  row->addStretch(1);
  layout->addLayout(row);
  m_reveal = wrappedLabel(this);
  layout->addWidget(m_reveal);
}

const Lesson* LessonsPanel::lesson() const {
  if (m_current < 0 || m_current >= static_cast<int>(lessons().size())) return nullptr;
  return &lessons()[static_cast<std::size_t>(m_current)];
}

void LessonsPanel::startLesson(int index) {
  if (index < 0 || index >= static_cast<int>(lessons().size())) return;
  stopSweep();
  m_current = index;
  const Lesson& l = *lesson();
  {
    const QSignalBlocker block(m_list);
    m_list->setCurrentRow(index);
  }
  ParameterModel* model = m_session->model();
  ModelState state = model->state();
  state.params = l.params;
  // The lesson's n is a what-if: bound to the data it would be replaced by the data's size.
  state.trainer.nFromData = false;
  if (l.convexModel) state.trainer.model = core::training::ModelSpec{};
  model->setState(state, QStringLiteral("lesson: ") + qs(l.title));
  showLesson();
  Q_EMIT lessonStarted(l);
}

void LessonsPanel::leaveLesson() {
  stopSweep();
  if (m_current < 0) return;
  m_current = -1;
  {
    const QSignalBlocker block(m_list);
    m_list->clearSelection();
    m_list->setCurrentRow(-1);
  }
  showLesson();
  Q_EMIT lessonLeft();
}

void LessonsPanel::showLesson() {
  const Lesson* l = lesson();
  for (QAbstractButton* b : m_choices->buttons()) {
    m_choices->removeButton(b);
    delete b;
  }
  m_reveal->clear();
  const bool on = l != nullptr;
  for (QWidget* w :
       {static_cast<QWidget*>(m_play), static_cast<QWidget*>(m_revealButton), static_cast<QWidget*>(m_leave),
        static_cast<QWidget*>(m_previous), static_cast<QWidget*>(m_next)}) {
    w->setEnabled(on);
  }
  if (!l) {
    m_title->setText(QStringLiteral("Pick a lesson: it sets the knobs and shows only the curves it is about."));
    m_text->clear();
    m_sweepNote->clear();
    m_prompt->clear();
    return;
  }
  m_previous->setEnabled(m_current > 0);
  m_next->setEnabled(m_current + 1 < static_cast<int>(lessons().size()));
  m_title->setText(QStringLiteral("%1. %2").arg(m_current + 1).arg(qs(l->title).toHtmlEscaped()));
  m_text->setText(qs(l->text));
  const core::KnobInfo& info = core::knobInfo(l->sweep.knob);
  m_sweepNote->setText(QStringLiteral("%1 from %2 to %3")
                           .arg(QString::fromUtf8(info.symbol), qs(core::formatNumber(l->sweep.from, 4)),
                                qs(core::formatNumber(l->sweep.to, 4))));
  m_play->setToolTip(QString::fromUtf8(info.lesson));
  m_prompt->setText(QStringLiteral("Predict: ") + qs(l->question.prompt));
  auto* choices = static_cast<QVBoxLayout*>(m_choiceBox->layout());
  int id = 0;
  for (const std::string& choice : l->question.choices) {
    auto* button = new QRadioButton(qs(choice), m_choiceBox);
    m_choices->addButton(button, id++);
    choices->addWidget(button);
  }
}

QList<QRadioButton*> LessonsPanel::choices() const {
  QList<QRadioButton*> buttons;
  for (int i = 0;; ++i) {
    auto* b = static_cast<QRadioButton*>(m_choices->button(i));
    if (!b) break;
    buttons << b;
  }
  return buttons;
}

void LessonsPanel::reveal() {
  const Lesson* l = lesson();
  if (!l) return;
  const int chosen = m_choices->checkedId();
  if (chosen < 0) {
    m_reveal->setText(QStringLiteral("<i>Choose an answer first, then reveal.</i>"));
    return;
  }
  const bool right = chosen == l->question.correct;
  const QList<QRadioButton*> buttons = choices();
  for (int i = 0; i < buttons.size(); ++i) {
    QString style;
    if (i == l->question.correct) style = QStringLiteral("color: #1b5e20; font-weight: bold;");
    if (i == chosen && !right) style = QStringLiteral("color: #b71c1c; text-decoration: line-through;");
    buttons[i]->setStyleSheet(style);
  }
  m_reveal->setText((right ? QStringLiteral("<b style='color:#1b5e20'>Right.</b> ")
                           : QStringLiteral("<b style='color:#b71c1c'>Not quite.</b> ")) +
                    qs(l->question.reveal));
}

double LessonsPanel::sweepValue(int step) const {
  const LessonSweep& s = lesson()->sweep;
  const int last = std::max(1, s.steps - 1);
  if (step >= last) return s.to;  // exactly the end, not a rounding of it
  const double t = static_cast<double>(step) / last;
  if (core::knobInfo(s.knob).logScale && s.from > 0.0 && s.to > 0.0) return s.from * std::pow(s.to / s.from, t);
  return s.from + t * (s.to - s.from);
}

void LessonsPanel::playSweep() {
  const Lesson* l = lesson();
  if (!l) return;
  stopSweep();
  m_step = 0;
  // One token for the whole sweep: one undo step, drawn as drafts like a held slider.
  m_dragToken = m_session->model()->beginDrag();
  m_play->setText(QStringLiteral("Stop sweep"));
  sweepStep();
  m_sweep.start(std::max(1, m_sweepMilliseconds / std::max(1, l->sweep.steps)));
}

void LessonsPanel::stopSweep() {
  if (!m_sweep.isActive()) return;
  m_sweep.stop();
  m_play->setText(QStringLiteral("Play sweep"));
}

void LessonsPanel::sweepStep() {
  const Lesson* l = lesson();
  if (!l) {
    stopSweep();
    return;
  }
  m_sweepEdit = true;
  m_session->model()->setKnob(l->sweep.knob, sweepValue(m_step), m_dragToken);
  m_sweepEdit = false;
  if (++m_step >= l->sweep.steps) {
    m_sweep.stop();
    m_play->setText(QStringLiteral("Play sweep"));
    Q_EMIT sweepFinished();
  }
}

}  // namespace dpx::ui
