// The Frontier tab's goal-seek group: "accuracy ≥ A %: the smallest ε that gets it" and "ε ≤ E:
// the best σ, epochs and batch", answered in words from the frontier on screen (core's
// goal_seek.h) whenever a frontier finishes or an input changes, with the chosen points ringed on
// the frontier chart and the accuracy goal drawn as a line. An answer from a frontier of other
// knobs or data says so. FrontierPanel owns it and hands it each finished frontier.
#pragma once

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QLabel>
#include <optional>
#include <vector>

#include "charts/chart_panel.h"
#include "session/session.h"
#include "training/goal_seek.h"

namespace dpx::ui {

class GoalSeekBox : public QGroupBox {
  Q_OBJECT
 public:
  // Curves it draws on `chart`: the first point reaching the accuracy, the best point within the
  // budget, and the accuracy goal.
  static const QString kReachCurve;
  static const QString kBestCurve;
  static const QString kGoalLineCurve;

  GoalSeekBox(Session* session, ChartPanel* chart, QWidget* parent = nullptr);
  QDoubleSpinBox* accuracyBox() const { return m_accuracy; }  // in percent
  QDoubleSpinBox* epsilonBox() const { return m_epsilon; }
  QComboBox* statisticBox() const { return m_statistic; }
  QLabel* answerLabel() const { return m_answer; }
  QString answerText() const;  // the answer without markup

  // A finished frontier: its series, whether its x is ε (not epochs), the ε it was centred on
  // (the budget's first value, until the user sets one) and the knobs and data it was made with.
  void setFrontier(std::vector<core::training::GoalSeries> series, bool byEpsilon, double centerEpsilon,
                   const ResultTag& tag);
  // No frontier to answer from (one is computing, or was cancelled): says why, removes the marks.
  void clearFrontier(const QString& why);

 Q_SIGNALS:
  void answered();  // the answer and the marks on the chart were updated

 private:
  void answer();
  void removeMarks();
  Session* m_session;
  ChartPanel* m_chart;
  QDoubleSpinBox* m_accuracy;
  QDoubleSpinBox* m_epsilon;
  QComboBox* m_statistic;
  QLabel* m_answer;
  bool m_epsilonEdited = false;  // the user set the budget: a new frontier keeps it
  std::vector<core::training::GoalSeries> m_series;
  bool m_byEpsilon = true;
  std::optional<ResultTag> m_tag;
};

}  // namespace dpx::ui
