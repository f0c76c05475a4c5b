// The Lessons panel, offscreen: the lesson data is complete and names curves of the registry's
// accountants; a chart's focus shows only the named curves, survives redraws and gives back the
// user's legend toggles; and every lesson, stepped through in the window, sets its knobs, shows
// exactly its curves (drawn and finite), sweeps its knob to the end in one undo step, and asks a
// question with one right answer.
#include <QDockWidget>
#include <QRadioButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <map>

#include "accounting/registry.h"
#include "auditor_tab.h"
#include "charts/chart_panel.h"
#include "lessons_panel.h"
#include "main_window.h"
#include "session/lessons.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

QSet<QString> idsOf(const std::vector<std::string>& ids) {
  QSet<QString> out;
  for (const std::string& id : ids) out.insert(QString::fromStdString(id));
  return out;
}

// The curves a chart shows now.
QSet<QString> visibleCurves(const ChartPanel* chart) {
  QSet<QString> out;
  for (const QString& id : chart->curveIds()) {
    if (chart->curveVisible(id)) out.insert(id);
  }
  return out;
}

// Every curve the lesson focuses, as drawn now, one after another.
QVector<QPointF> focusedPoints(const MainWindow& w, const Lesson& lesson) {
  QVector<QPointF> all;
  for (const LessonFocus& f : lesson.focus) {
    for (const std::string& id : f.curves) all += w.lessonChart(f.chart)->curvePoints(QString::fromStdString(id));
  }
  return all;
}

std::map<QString, bool> visibility(const ChartPanel* chart) {
  std::map<QString, bool> out;
  for (const QString& id : chart->curveIds()) out[id] = chart->curveVisible(id);
  return out;
}

// The knobs as the lesson sets them (the model keeps convexLoss with the trainer's model).
Params asSet(const Lesson& lesson, const Params& model) {
  Params p = lesson.params;
  p.convexLoss = model.convexLoss;
  return p;
}

}  // namespace

class TestLessons : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void lessonDataIsComplete() {
    QVERIFY(lessons().size() >= 8);
    QSet<QString> ids;
    std::vector<std::string> accountantIds;
    for (const accounting::Accountant* a : accounting::allAccountants()) accountantIds.emplace_back(a->id());
    for (const Lesson& l : lessons()) {
      const QString id = QString::fromStdString(l.id);
      QVERIFY2(id.startsWith(QStringLiteral("lesson-")), l.id.c_str());
      QVERIFY2(!ids.contains(id), l.id.c_str());
      ids.insert(id);
      QVERIFY2(findLesson(l.id) == &l, l.id.c_str());
      QVERIFY2(l.params.validate().isOk(), l.id.c_str());
      QVERIFY(!l.title.empty() && !l.text.empty());
      for (const std::string* prose : {&l.text, &l.question.prompt, &l.question.reveal}) {
        QVERIFY2(prose->find("seed 00") == std::string::npos && prose->find("SPEC") == std::string::npos, l.id.c_str());
      }
      QVERIFY2(!l.focus.empty(), l.id.c_str());
      for (const LessonFocus& f : l.focus) {
        QVERIFY2(f.curves.size() >= 1 && f.curves.size() <= 3, l.id.c_str());
        // Every curve but the identity belongs to an accountant of the registry: one of the
        // id's ':'-separated parts is that accountant's id.
        for (const std::string& curve : f.curves) {
          if (curve == "identity") continue;
          bool found = false;
          for (const QString& part : QString::fromStdString(curve).split(QLatin1Char(':'))) {
            for (const std::string& a : accountantIds) found |= part.toStdString() == a;
          }
          QVERIFY2(found, (l.id + ": " + curve).c_str());
        }
      }
      const KnobInfo& knob = knobInfo(l.sweep.knob);
      QVERIFY2(l.sweep.from != l.sweep.to && l.sweep.steps >= 10, l.id.c_str());
      for (double v : {l.sweep.from, l.sweep.to}) QVERIFY2(v >= knob.min && v <= knob.max, l.id.c_str());
      QVERIFY2(l.question.choices.size() >= 2 && l.question.choices.size() <= 4, l.id.c_str());
      QVERIFY2(l.question.correct >= 0 && l.question.correct < static_cast<int>(l.question.choices.size()),
               l.id.c_str());
      QVERIFY(!l.question.prompt.empty() && !l.question.reveal.empty());
    }
  }

  // Focus hides the rest with their legend entries, holds across re-set curves and new ones,
  // and leaving it gives back the visibility the user chose.
  void focusShowsOnlyTheNamedCurvesAndRestores() {
    ChartPanel chart(QStringLiteral("t"), QStringLiteral("x"), QStringLiteral("y"));
    chart.resize(500, 400);
    chart.show();
    const QVector<QPointF> line{{0, 1}, {1, 2}};
    CurveStyle variant;
    variant.hiddenAtFirst = true;
    for (const char* id : {"a", "b", "c"}) chart.setCurve(QLatin1String(id), QLatin1String(id), line, {});
    chart.setCurve(QStringLiteral("v"), QStringLiteral("v"), line, variant);
    QCOMPARE(visibleCurves(&chart), (QSet<QString>{"a", "b", "c"}));
    const std::map<QString, bool> before = visibility(&chart);
    chart.setFocusCurves(QSet<QString>{"a", "v"});
    QCOMPARE(visibleCurves(&chart), (QSet<QString>{"a", "v"}));
    // A redraw of every curve (a knob change) and a curve that arrives: the focus holds.
    for (const char* id : {"a", "b", "c"}) {
      chart.setCurve(QLatin1String(id), QLatin1String(id), {{0, 1}, {1, 3}}, {});
    }
    chart.removeCurve(QStringLiteral("c"));
    chart.setCurve(QStringLiteral("c"), QStringLiteral("c"), line, {});
    chart.setCurve(QStringLiteral("d"), QStringLiteral("d"), line, {});
    chart.refreshAxes();
    QCOMPARE(visibleCurves(&chart), (QSet<QString>{"a", "v"}));
    chart.setFocusCurves(std::nullopt);
    std::map<QString, bool> after = visibility(&chart);
    QVERIFY(after.at(QStringLiteral("d")));  // new: shown as a new curve is
    after.erase(QStringLiteral("d"));
    QVERIFY(after == before);
  }

  void stepsThroughEveryLesson() {
    QSettings settings(m_dir.filePath(QStringLiteral("lessons.ini")), QSettings::IniFormat);
    settings.clear();
    MainWindow w(&settings);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.waitForLessonViews());
    LessonsPanel* panel = w.lessonsPanel();
    panel->setSweepDuration(200);
    w.lessonsDock()->show();
    std::map<ChartPanel*, std::map<QString, bool>> userVisibility;
    for (LessonChart c : {LessonChart::kEpsilon, LessonChart::kRdp, LessonChart::kTradeoff}) {
      userVisibility[w.lessonChart(c)] = visibility(w.lessonChart(c));
    }
    for (std::size_t i = 0; i < lessons().size(); ++i) {
      const Lesson& lesson = lessons()[i];
      const char* name = lesson.id.c_str();
      const Params before = w.model()->params();
      panel->startLesson(static_cast<int>(i));
      QCOMPARE(panel->currentLesson(), static_cast<int>(i));
      QVERIFY2(w.waitForLessonViews(), name);
      QVERIFY2(w.model()->params() == asSet(lesson, w.model()->params()), name);
      QCOMPARE(w.tabs()->currentIndex(),
               onAuditorTab(lesson.focus.front().chart) ? MainWindow::kAuditorTab : MainWindow::kPrivacyTab);
      for (const LessonFocus& f : lesson.focus) {
        ChartPanel* chart = w.lessonChart(f.chart);
        QSet<QString> expected = idsOf(f.curves);
        for (const QString& id : idsOf(f.optional)) {
          if (chart->curveIds().contains(id)) expected.insert(id);
        }
        QCOMPARE(visibleCurves(chart), expected);
        for (const std::string& id : f.curves) {
          const QVector<QPointF> points = chart->curvePoints(QString::fromStdString(id));
          QVERIFY2(points.size() >= 2, (lesson.id + ": " + id).c_str());
          for (const QPointF& p : points) QVERIFY(std::isfinite(p.x()) && std::isfinite(p.y()));
        }
      }
      // The sweep: to the end, one undo step, and the curves move on the way (it may end where
      // the lesson started).
      QSignalSpy finished(panel, &LessonsPanel::sweepFinished);
      QList<QVector<QPointF>> seen{focusedPoints(w, lesson)};
      const auto record = [&] {
        if (seen.back() != focusedPoints(w, lesson)) seen << focusedPoints(w, lesson);
      };
      const QMetaObject::Connection analytics = connect(&w, &MainWindow::analyticsApplied, this, record);
      const QMetaObject::Connection auditor = connect(w.auditorTab(), &AuditorTab::snapshotApplied, this, record);
      panel->playSweep();
      QVERIFY(panel->sweeping());
      QVERIFY2(finished.wait(10000), name);
      const double end = knobValue(w.model()->params(), lesson.sweep.knob);
      QVERIFY2(std::fabs(end - lesson.sweep.to) <= 1e-12 * std::fabs(lesson.sweep.to), name);
      QVERIFY2(w.waitForLessonViews(), name);
      record();
      disconnect(analytics);
      disconnect(auditor);
      QVERIFY2(seen.size() >= 2, name);
      for (const LessonFocus& f : lesson.focus) {
        QVERIFY2(visibleCurves(w.lessonChart(f.chart)).contains(idsOf(f.curves)), name);
      }
      // The question: one right answer, and reveal says which was chosen.
      const QList<QRadioButton*> choices = panel->choices();
      QCOMPARE(choices.size(), static_cast<int>(lesson.question.choices.size()));
      const int wrong = lesson.question.correct == 0 ? 1 : 0;
      choices[wrong]->setChecked(true);
      panel->reveal();
      QVERIFY(panel->revealText()->text().contains(QStringLiteral("Not quite")));
      choices[lesson.question.correct]->setChecked(true);
      panel->reveal();
      QVERIFY(panel->revealText()->text().contains(QStringLiteral("Right")));
      // Undo: the sweep is one step, the lesson another.
      w.model()->undoStack()->undo();
      QVERIFY2(w.model()->params() == asSet(lesson, w.model()->params()), name);
      w.model()->undoStack()->undo();
      QVERIFY2(w.model()->params() == before, name);
      w.model()->undoStack()->redo();
    }
    panel->leaveLesson();
    QCOMPARE(panel->currentLesson(), -1);
    w.tabs()->setCurrentIndex(MainWindow::kPrivacyTab);
    QVERIFY(w.waitForLessonViews());
    for (const auto& [chart, shown] : userVisibility) {
      for (const auto& [id, visible] : shown) {
        if (chart->curveIds().contains(id)) QVERIFY2(chart->curveVisible(id) == visible, qPrintable(id));
      }
      QVERIFY(!chart->focusCurves());
    }
  }

  // A knob moved by hand during a sweep stops it where it is; nothing else happens.
  void editingAKnobStopsTheSweep() {
    QSettings settings(m_dir.filePath(QStringLiteral("edit.ini")), QSettings::IniFormat);
    settings.clear();
    MainWindow w(&settings);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    LessonsPanel* panel = w.lessonsPanel();
    panel->setSweepDuration(3000);
    panel->startLesson(1);
    panel->playSweep();
    QTest::qWait(250);
    QVERIFY(panel->sweeping());
    w.model()->setKnob(Knob::kSigma, 7.0);
    QVERIFY(!panel->sweeping());
    const Params edited = w.model()->params();
    QTest::qWait(300);
    QVERIFY(w.model()->params() == edited);
    QCOMPARE(w.model()->params().sigma, 7.0);
    QVERIFY(w.waitForLessonViews());
  }
};

QTEST_MAIN(TestLessons)
#include "tst_lessons.moc"
