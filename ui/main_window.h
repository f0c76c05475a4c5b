// The DP Explorer main window: the knobs on the left, the privacy charts and the accountant
// table in the middle, calibration on the right, the trainer in its own tab. Every change of a
// knob is one undoable command on the ParameterModel; the analytic charts recompute in the
// background (coalesced, within a frame), the exact PLD and the step-size bounds follow with
// progress and cancellation. Window state lives in QSettings, which tests inject.
#pragma once

#include <QMainWindow>
#include <QSettings>
#include <memory>

#include "compute/analytics.h"
#include "compute/background_job.h"
#include "compute/slow_analytics.h"
#include "io/dpx_command.h"
#include "session/lessons.h"
#include "session/parameter_model.h"
#include "session/privacy_views.h"
#include "session/session.h"
#include "session/session_file.h"

class QCheckBox;
class QDockWidget;
class QHBoxLayout;
class QTabWidget;
class QLabel;
class QMenu;

namespace dpx::ui {

class AccountantTable;
class CalibratePanel;
class PhaseTablePanel;
class ChartPanel;
class ExplorerCharts;
class ParameterPanel;
class TrainerPanel;
class AuditPanel;
class AuditorTab;
class PinComparison;
class FrontierPanel;
class LessonsPanel;
struct Preset;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // `settings` may be null (the default per-user QSettings); tests pass their own.
  explicit MainWindow(QSettings* settings = nullptr, QWidget* parent = nullptr);
  ~MainWindow() override;

  ParameterModel* model() { return &m_model; }
  ParameterPanel* parameterPanel() const { return m_parameters; }
  ExplorerCharts* charts() const { return m_charts; }
  AccountantTable* accountantTable() const { return m_table; }
  CalibratePanel* calibratePanel() const { return m_calibrate; }
  PhaseTablePanel* phaseTablePanel() const { return m_phases; }
  // File → Open DP events…: the file into the phase table, or a message with the reason.
  bool openDpEvents(const QString& path);
  TrainerPanel* trainerPanel() const { return m_trainer; }
  Session* session() const { return m_session.get(); }
  AuditPanel* auditPanel() const { return m_audit; }
  FrontierPanel* frontierPanel() const { return m_frontier; }
  AuditorTab* auditorTab() const { return m_auditor; }
  QTabWidget* tabs() const { return m_tabs; }
  LessonsPanel* lessonsPanel() const { return m_lessons; }
  QDockWidget* lessonsDock() const { return m_lessonsDock; }
  ChartPanel* lessonChart(LessonChart chart) const;
  QLabel* headline() const { return m_headline; }
  // A/B: pins `params` as configuration A (ghost curves and the comparison table); unpin() drops it.
  void pinConfiguration(const core::Params& params);
  void unpin();
  std::shared_ptr<const AnalyticsSnapshot> pinned() const { return m_pinned; }
  PinComparison* pinComparison() const { return m_pinComparison; }
  QList<ChartPanel*> allCharts() const;

  PrivacyViews* privacyViews() const { return m_privacyViews.get(); }
  std::shared_ptr<const AnalyticsSnapshot> lastAnalytics() const { return m_privacyViews->lastAnalytics(); }
  std::shared_ptr<const PldSnapshot> lastPld() const { return m_privacyViews->lastPld(); }
  std::shared_ptr<const StepsizeSnapshot> lastStepsize() const { return m_privacyViews->lastStepsize(); }
  BackgroundJob* analyticsJob() { return m_privacyViews->analytics()->job(); }
  BackgroundJob* pldJob() { return m_privacyViews->exact()->job(); }
  BackgroundJob* stepsizeJob() { return m_privacyViews->stepsize()->job(); }
  BackgroundJob* scoreAuditJob() const { return m_scoreAuditJob; }

  // Files; each returns false and shows why in the status bar when it fails.
  bool loadPreset(const Preset& preset);
  bool loadPresetFile(const QString& path);
  bool savePresetFile(const QString& path, const QString& name);
  bool exportChart(ChartPanel* chart, const QString& path);  // .png, .svg, .csv or .json by extension
  bool exportCurves(const QString& path);                    // .csv or .json of every chart
  bool exportReport(const QString& path);                    // .html or .pdf
  // File → Import audit scores…: membership scores computed elsewhere (CSV or JSON, see
  // core/audit/score_import.h), audited off the GUI thread against the current knobs' exact
  // curve and ε; the result is drawn on the Auditor tab with its verdict, a refusal (the file's
  // line and field) shown in a message box.
  void importAuditScores(const QString& path);
  // Sessions (.dpxsession): the knobs, the trainer's settings, the view, the pin and the last
  // training's runs with their knobs. Open is one undo step for the knobs.
  bool saveSession(const QString& path);
  bool openSession(const QString& path);
  SessionFile currentSession() const;
  QString reportHtml() const;
  // The dpx command line(s) that recompute the current tab's view (Edit → Copy as dpx command):
  // the accountant table on the Privacy tab, the trainer's runs, the frontier, the audit.
  QString currentTabCommand() const;
  // Tab indices.
  static constexpr int kPrivacyTab = 0;
  static constexpr int kTrainingTab = 1;
  static constexpr int kFrontierTab = 2;
  static constexpr int kAuditorTab = 3;
  // Renders the main views to PNG files in `directory` (README screenshots).
  bool saveScreenshots(const QString& directory);
  bool saveAuditorScreenshots(const QString& directory);
  bool savePinnedScreenshot(const QString& directory);
  // One picture per lesson, lesson-<id>.png, each once its curves are computed; the knobs are
  // restored afterwards.
  bool saveLessonScreenshots(const QString& directory);
  // Processes events until the views the current lesson shows (or the Privacy tab's analytics
  // without a lesson) are computed for the current knobs; false after `timeoutMs`.
  bool waitForLessonViews(int timeoutMs = 60000);
  QStringList recentFiles() const;

 Q_SIGNALS:
  // Charts and table replaced from a new snapshot: a draft while values stream in (a drag; the
  // table exact, the curves on coarser axes), then the full curves once they rest.
  void analyticsApplied();
  void pldApplied();      // the Poisson bracket, its trade-off and ε-vs-K bracket on screen
  void shuffleApplied();  // then the shuffle lower bound beside them
  void stepsizeApplied();

 protected:
  void closeEvent(class QCloseEvent* event) override;

 private:
  QDockWidget* buildParameterDock();
  QWidget* buildPrivacyTab();
  QHBoxLayout* buildViewToggles(QWidget* parent);
  void buildTrainingTabs();
  void buildCalibrateDock(QDockWidget* knobsDock);
  void buildPhasesDock(QDockWidget* knobsDock);
  void buildLessonsDock();
  void focusLesson(const Lesson* lesson);
  void connectViews();
  void buildMenus();
  void buildFileMenu();
  void addExportActions(QMenu* file);
  void buildEditMenu();
  // Each chart's caption, CSV header and command come from the knobs (and data) it shows.
  void installExportContexts();
  void installTrainingContexts();
  void askExport(ChartPanel* chart);
  core::AccountingView shownAccounting() const;
  void buildPresetsMenu();
  void buildHelpMenu();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void showStatus(const QString& text, bool error = false);
  void refreshHeadline();
  void refreshPinComparison();
  static QString pinLabel(const core::Params& params);
  std::unique_ptr<QSettings> m_ownSettings;
  QSettings* m_settings;
  ParameterModel m_model;
  std::unique_ptr<Session> m_session;  // after m_model: it holds a pointer to it
  std::unique_ptr<PrivacyViews> m_privacyViews;
  ParameterPanel* m_parameters = nullptr;
  ExplorerCharts* m_charts = nullptr;
  AccountantTable* m_table = nullptr;
  CalibratePanel* m_calibrate = nullptr;
  PhaseTablePanel* m_phases = nullptr;
  QDockWidget* m_phasesDock = nullptr;
  TrainerPanel* m_trainer = nullptr;
  AuditPanel* m_audit = nullptr;
  FrontierPanel* m_frontier = nullptr;
  AuditorTab* m_auditor = nullptr;
  QTabWidget* m_tabs = nullptr;
  QLabel* m_timing = nullptr;
  QLabel* m_headline = nullptr;
  QCheckBox* m_pinToggle = nullptr;
  PinComparison* m_pinComparison = nullptr;
  std::shared_ptr<const AnalyticsSnapshot> m_pinned;
  std::optional<double> m_pinnedExact;
  QMenu* m_recentMenu = nullptr;
  LessonsPanel* m_lessons = nullptr;
  QDockWidget* m_lessonsDock = nullptr;
  QList<ChartPanel*> m_lessonFocus;  // the charts a lesson has focused
  BackgroundJob* m_scoreAuditJob = nullptr;
  // The knobs whose claim the Auditor tab's imported scores were checked against; unset when it
  // shows the trainer's audit (or nothing).
  std::optional<core::Params> m_importedAuditParams;
  QString m_importedAuditPath;
};

}  // namespace dpx::ui
