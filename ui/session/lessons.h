// Guided lessons for teachers (the Lessons panel): each sets the knobs, names the two or three
// curves it is about on the charts it uses, explains them in a few sentences, sweeps one knob and
// ends with a predict-then-reveal question whose answer the curves on screen show. Widget-free
// data: curve ids are built from the accountants' ids (the registry), never typed out, so a test
// can check every lesson against what the charts draw.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/params.h"

namespace dpx::ui {

// The charts a lesson can focus: the Privacy tab's ε-vs-K, RDP and trade-off charts, and the
// Auditor tab's trade-off plane and threat-model ladder.
enum class LessonChart { kEpsilon, kRdp, kTradeoff, kAuditorPlane, kLadder };

struct LessonFocus {
  LessonChart chart;
  std::vector<std::string> curves;  // drawn for the lesson's knobs, each finite and non-empty
  // Shown as well when present: an audit's curves (after one has run), a bracket's band.
  std::vector<std::string> optional;
};

// One knob moved from `from` to `to` in `steps` values, log-spaced when the knob's slider is.
struct LessonSweep {
  core::Knob knob = core::Knob::kSigma;
  double from = 1.0;
  double to = 1.0;
  int steps = 30;
};

struct LessonQuestion {
  std::string prompt;
  std::vector<std::string> choices;
  int correct = 0;
  std::string reveal;
};

struct Lesson {
  std::string id;  // "lesson-composition": also the screenshot's file name
  std::string title;
  core::Params params;  // every knob (the defaults, then the lesson's)
  // The softmax trainer (a convex loss): the lesson's curves need the convex analyses.
  bool convexModel = false;
  bool exact = false;              // its curves include the exact PLD or shuffle views
  std::vector<LessonFocus> focus;  // the first chart is the one the lesson is about
  std::string text;                // a few sentences, rich text
  LessonSweep sweep;
  LessonQuestion question;
};

// The lessons in teaching order.
const std::vector<Lesson>& lessons();
const Lesson* findLesson(std::string_view id);
bool onAuditorTab(LessonChart chart);

}  // namespace dpx::ui
