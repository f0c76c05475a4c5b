// The Lessons panel (Help → Lessons): a list of guided lessons for teaching. Starting one sets its
// knobs in one undo step and asks the window to show only the lesson's curves; "Play sweep" moves
// one knob through its range like a slider drag (one undo step, drawn as drafts), and the lesson
// ends with a predict-then-reveal question. A knob edited by hand, or undo, stops the sweep.
#pragma once

#include <QButtonGroup>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QTimer>
#include <QVBoxLayout>
#include <QWidget>

#include "session/lessons.h"
#include "session/session.h"

namespace dpx::ui {

class LessonsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit LessonsPanel(Session* session, QWidget* parent = nullptr);

  // Sets the lesson's knobs (one undo step) and announces it; -1 or out of range does nothing.
  void startLesson(int index);
  // Stops the sweep and gives the charts back their curves (the knobs stay: undo restores them).
  void leaveLesson();
  int currentLesson() const { return m_current; }
  const Lesson* lesson() const;

  void playSweep();
  void stopSweep();
  bool sweeping() const { return m_sweep.isActive(); }
  void setSweepDuration(int milliseconds) { m_sweepMilliseconds = milliseconds; }

  // The question: the choice buttons, in the lesson's order; reveal() marks the chosen one.
  QList<QRadioButton*> choices() const;
  void reveal();
  QLabel* revealText() const { return m_reveal; }
  QLabel* text() const { return m_text; }
  QListWidget* list() const { return m_list; }

 Q_SIGNALS:
  void lessonStarted(const dpx::ui::Lesson& lesson);
  void lessonLeft();
  void sweepFinished();

 private:
  void buildQuestion(QVBoxLayout* layout);
  void showLesson();
  void sweepStep();
  double sweepValue(int step) const;
  Session* m_session;
  QListWidget* m_list;
  QLabel* m_title;
  QLabel* m_text;
  QLabel* m_sweepNote;
  QPushButton* m_play;
  QLabel* m_prompt;
  QWidget* m_choiceBox;
  QButtonGroup* m_choices;
  QPushButton* m_revealButton;
  QLabel* m_reveal;
  QPushButton* m_previous;
  QPushButton* m_next;
  QPushButton* m_leave;
  QTimer m_sweep;
  int m_current = -1;
  int m_step = 0;
  int m_dragToken = 0;
  bool m_sweepEdit = false;  // the model's change is the sweep's own
  int m_sweepMilliseconds = 4000;
};

}  // namespace dpx::ui
