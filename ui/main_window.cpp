#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QSaveFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>

#include "about_dialog.h"
#include "accountant_table.h"
#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "audit_panel.h"
#include "auditor_tab.h"
#include "calibrate_panel.h"
#include "charts/chart_panel.h"
#include "charts/explorer_charts.h"
#include "common/format.h"
#include "compute/analytics.h"
#include "compute/run_headline.h"
#include "compute/score_audit_job.h"
#include "compute/slow_analytics.h"
#include "configuration_check_view.h"
#include "frontier_panel.h"
#include "lessons_panel.h"
#include "parameter_panel.h"
#include "phase_table_panel.h"
#include "pin_comparison.h"
#include "presets.h"
#include "report.h"
#include "session/session_file.h"
#include "statement_export.h"
#include "trainer_panel.h"
#include "user_guide_dialog.h"

namespace dpx::ui {

namespace {

// The user guide and About are made once and kept (a second click raises them), and are not
// modal: the guide is read beside the explorer it describes.
template <typename Dialog>
void showHelpDialog(QWidget* window) {
  auto* dialog = window->findChild<Dialog*>(QString(), Qt::FindDirectChildrenOnly);
  if (!dialog) dialog = new Dialog(window);
  dialog->show();
  dialog->raise();
  dialog->activateWindow();
}

constexpr int kMaxRecent = 8;

// `--accountant all`: every analysis, as the table lists them.
constexpr std::string_view kAllAccountants = "all";

QString commandLine(const std::vector<std::string>& arguments) {
  return QString::fromStdString(core::shellCommandLine(arguments));
}

QString knobsText(const core::Params& knobs, std::optional<core::accounting::Conversion> conversion = std::nullopt) {
  return QString::fromStdString(core::knobCaption(knobs, conversion));
}

// "builtin:digits · ScatterNet features · split seed 1".
QString dataText(const core::training::DatasetKey& data) {
  QString text = QString::fromStdString(data.source);
  if (data.features != core::training::FeatureKind::kRaw) {
    text += QStringLiteral(" · %1 features")
                .arg(QString::fromLatin1(core::training::featureKindName(data.features).data()));
  }
  return text + QStringLiteral(" · split seed %1").arg(data.splitSeed);
}

// A result of knobs or data since changed says so, in the words the views use.
QString beforeYourChange(const QString& changed) {
  return changed.isEmpty() ? QString() : QStringLiteral("From %1 — before your change.").arg(changed);
}

// A row of view toggles above the charts.
QCheckBox* toggle(QWidget* parent, QLayout* layout, const QString& text, bool on, const QString& tip) {
  auto* box = new QCheckBox(text, parent);
  box->setChecked(on);
  box->setToolTip(tip);
  layout->addWidget(box);
  return box;
}

}  // namespace

MainWindow::MainWindow(QSettings* settings, QWidget* parent)
    : QMainWindow(parent),
      m_session(std::make_unique<Session>(&m_model, std::make_shared<core::training::DatasetCache>())),
      m_privacyViews(std::make_unique<PrivacyViews>(m_session.get())) {
  if (!settings) {
    m_ownSettings = std::make_unique<QSettings>();
    settings = m_ownSettings.get();
  }
  m_settings = settings;
  setWindowTitle(QStringLiteral("DP Explorer"));
  setObjectName(QStringLiteral("mainWindow"));
  QDockWidget* knobsDock = buildParameterDock();
  m_tabs = new QTabWidget(this);
  m_tabs->addTab(buildPrivacyTab(), QStringLiteral("Privacy"));
  buildTrainingTabs();
  setCentralWidget(m_tabs);
  buildCalibrateDock(knobsDock);
  buildPhasesDock(knobsDock);
  buildLessonsDock();
  buildMenus();
  statusBar()->showMessage(QStringLiteral("Move a knob: every accountant's curve follows."));
  connectViews();
  installExportContexts();
  restoreGeometry(m_settings->value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(m_settings->value(QStringLiteral("window/state")).toByteArray());
  if (!m_settings->contains(QStringLiteral("window/geometry"))) resize(1560, 980);
  rebuildRecentMenu();
  m_privacyViews->refreshAll();
}

// The knobs on the left, scrollable.
QDockWidget* MainWindow::buildParameterDock() {
  m_parameters = new ParameterPanel(&m_model, this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(m_parameters);
  scroll->setWidgetResizable(true);
  // The knobs scroll up and down, never sideways: the dock is as wide as the knobs need (a longer
  // note such as "what-if (data: 1438)" widens it) so no field is cut at the right edge.
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  const auto fitWidth = [scroll, panel = m_parameters] {
    const int needed =
        panel->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 2 * scroll->frameWidth();
    scroll->setMinimumWidth(std::max(330, needed));
  };
  fitWidth();
  connect(m_parameters, &ParameterPanel::layoutChanged, scroll, fitWidth);
  // The message about an invalid combination sits under the knobs, outside their scroll area:
  // when it appears or goes, no knob moves under the cursor.
  auto* container = new QWidget(this);
  auto* column = new QVBoxLayout(container);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(2);
  column->addWidget(scroll, 1);
  column->addWidget(m_parameters->messageLabel());
  auto* dock = new QDockWidget(QStringLiteral("Parameters"), this);
  dock->setObjectName(QStringLiteral("parametersDock"));
  dock->setWidget(container);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);
  return dock;
}

// The four privacy charts over the accountant table, and the view toggles above them.
QWidget* MainWindow::buildPrivacyTab() {
  auto* privacy = new QWidget(m_tabs);
  auto* layout = new QVBoxLayout(privacy);
  layout->setContentsMargins(2, 2, 2, 2);
  m_charts = new ExplorerCharts(privacy);
  layout->addLayout(buildViewToggles(privacy));
  m_headline = new QLabel(privacy);
  m_headline->setObjectName(QStringLiteral("runHeadline"));
  m_headline->setTextFormat(Qt::RichText);
  m_headline->setWordWrap(true);
  m_headline->setContentsMargins(4, 2, 4, 2);
  m_headline->setText(QStringLiteral("Computing the run's ε…"));
  layout->addWidget(m_headline);
  auto* split = new QSplitter(Qt::Vertical, privacy);
  auto* grid = new QWidget(split);
  auto* gridLayout = new QGridLayout(grid);
  gridLayout->setContentsMargins(0, 0, 0, 0);
  gridLayout->setSpacing(4);
  gridLayout->addWidget(m_charts->epsilon(), 0, 0);
  gridLayout->addWidget(m_charts->tradeoff(), 0, 1);
  gridLayout->addWidget(m_charts->rdp(), 1, 0);
  gridLayout->addWidget(m_charts->stepsize(), 1, 1);
  split->addWidget(grid);
  m_table = new AccountantTable(split);
  split->addWidget(m_table);
  m_pinComparison = new PinComparison(split);
  m_pinComparison->setMinimumHeight(120);  // the knobs that differ and the headline ε at a glance
  m_pinComparison->hide();
  split->addWidget(m_pinComparison);
  split->addWidget(new ConfigurationCheckView(&m_model, split));
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({740, 170, 50});
  layout->addWidget(split, 1);
  return privacy;
}

QHBoxLayout* MainWindow::buildViewToggles(QWidget* parent) {
  auto* toggles = new QHBoxLayout();
  QCheckBox* epochs = toggle(parent, toggles, QStringLiteral("x in epochs"), false,
                             QStringLiteral("Show the ε chart against epochs E = K·m/n instead of steps K"));
  epochs->setObjectName(QStringLiteral("epochsToggle"));
  QCheckBox* logEps = toggle(parent, toggles, QStringLiteral("log ε"), true, QStringLiteral("Logarithmic ε axis"));
  logEps->setObjectName(QStringLiteral("logEpsilonToggle"));
  QCheckBox* fixedAlpha =
      toggle(parent, toggles, QStringLiteral("fixed α"), false,
             QStringLiteral("Convert the RDP accountants' ε at the α knob alone instead of the best "
                            "order: how much the choice of the Rényi order matters"));
  fixedAlpha->setObjectName(QStringLiteral("fixedAlphaToggle"));
  QCheckBox* roc = toggle(parent, toggles, QStringLiteral("log–log ROC view"), false,
                          QStringLiteral("Trade-off plane as power (1 − type II) vs type I error on log–log axes, "
                                         "where small false-positive rates are visible"));
  roc->setObjectName(QStringLiteral("rocToggle"));
  QCheckBox* exact = toggle(parent, toggles, QStringLiteral("exact PLD"), true,
                            QStringLiteral("Compute the exact privacy loss distribution bracket in the background"));
  exact->setObjectName(QStringLiteral("exactToggle"));
  m_pinToggle = toggle(parent, toggles, QStringLiteral("pin as A"), false,
                       QStringLiteral("Keep this configuration's curves as dashed ghosts (A) while you move the knobs "
                                      "(B), with an A/B table of the knobs that differ and every ε"));
  m_pinToggle->setObjectName(QStringLiteral("pinToggle"));
  toggles->addStretch(1);
  m_timing = new QLabel(parent);
  m_timing->setStyleSheet(QStringLiteral("color: palette(mid);"));
  toggles->addWidget(m_timing);
  connect(epochs, &QCheckBox::toggled, this, [this](bool on) { m_model.setEpochsAxis(on); });
  connect(fixedAlpha, &QCheckBox::toggled, this, [this](bool on) { m_model.setFixedAlphaView(on); });
  connect(logEps, &QCheckBox::toggled, this, [this](bool on) { m_charts->epsilon()->setLogAxis(Qt::Vertical, on); });
  connect(roc, &QCheckBox::toggled, this, [this](bool on) { m_charts->setRocView(on); });
  connect(exact, &QCheckBox::toggled, m_privacyViews.get(), &PrivacyViews::setExactEnabled);
  connect(m_pinToggle, &QCheckBox::toggled, this, [this](bool on) {
    if (on) {
      pinConfiguration(m_model.params());
    } else {
      unpin();
    }
  });
  return toggles;
}

// The trainer with its audit, and the frontier, each a tab; their data loads when one is opened
// (then n follows it).
void MainWindow::buildTrainingTabs() {
  auto* trainingTab = new QWidget();
  auto* layout = new QVBoxLayout(trainingTab);
  layout->setContentsMargins(2, 2, 2, 2);
  m_trainer = new TrainerPanel(m_session.get(), trainingTab);
  m_audit = new AuditPanel(m_session.get(), trainingTab);
  layout->addWidget(m_trainer, 3);
  layout->addWidget(m_audit, 1);
  // The trainer over its audit is taller than a 1366 × 768 screen leaves a tab: it scrolls there
  // instead of making the window taller than the screen.
  auto* trainingScroll = new QScrollArea(m_tabs);
  trainingScroll->setWidget(trainingTab);
  trainingScroll->setWidgetResizable(true);
  trainingScroll->setFrameShape(QFrame::NoFrame);
  m_tabs->addTab(trainingScroll, QStringLiteral("Training and audit"));
  m_frontier = new FrontierPanel(m_session.get(), m_tabs);
  m_tabs->addTab(m_frontier, QStringLiteral("Privacy–utility frontier"));
  m_auditor = new AuditorTab(&m_model, m_tabs);
  m_scoreAuditJob = new BackgroundJob(/*cancelRunningOnRequest=*/true, this);
  m_tabs->addTab(m_auditor, QStringLiteral("Auditor"));
  connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
    m_privacyViews->setShown(index == kPrivacyTab);
    if (index == kTrainingTab || index == kFrontierTab) m_trainer->ensureDataLoaded();
    if (index == kFrontierTab && !m_frontier->lastResult() && !m_frontier->lastComparison() &&
        m_frontier->followBox()->isChecked()) {
      QTimer::singleShot(0, m_frontier, &FrontierPanel::computeIfQuick);
    }
  });
}

// Calibration beside the knobs, tabbed with them so the charts keep the width.
void MainWindow::buildCalibrateDock(QDockWidget* knobsDock) {
  m_calibrate = new CalibratePanel(&m_model, this);
  m_calibrate->setSession(m_session.get());  // the accuracy column trains on the trainer's data and settings
  auto* dock = new QDockWidget(QStringLiteral("Calibrate σ for a target ε or attack risk"), this);
  dock->setObjectName(QStringLiteral("calibrateDock"));
  dock->setWidget(m_calibrate);
  addDockWidget(Qt::LeftDockWidgetArea, dock);
  tabifyDockWidget(knobsDock, dock);
  knobsDock->raise();
}

// A run in phases, tabbed with the knobs: its own composition, apart from the knob run's charts.
void MainWindow::buildPhasesDock(QDockWidget* knobsDock) {
  m_phases = new PhaseTablePanel(&m_model, this);
  m_phasesDock = new QDockWidget(QStringLiteral("Phases"), this);
  m_phasesDock->setObjectName(QStringLiteral("phasesDock"));
  m_phasesDock->setWidget(m_phases);
  addDockWidget(Qt::LeftDockWidgetArea, m_phasesDock);
  tabifyDockWidget(knobsDock, m_phasesDock);
  knobsDock->raise();
}

bool MainWindow::openDpEvents(const QString& path) {
  QString error;
  if (!m_phases->loadEventsFile(path, &error)) {
    // The reason (the file, and the byte or the place in the document) in the status bar and
    // under the table, as a preset that cannot be read is reported.
    showStatus(error, true);
    m_phasesDock->show();
    m_phasesDock->raise();
    return false;
  }
  m_phasesDock->show();
  m_phasesDock->raise();
  return true;
}

// The lessons on the right, hidden until Help → Lessons: a lesson focuses the charts it is about.
void MainWindow::buildLessonsDock() {
  m_lessons = new LessonsPanel(m_session.get(), this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(m_lessons);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(340);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // the text wraps to the dock's width
  m_lessonsDock = new QDockWidget(QStringLiteral("Lessons"), this);
  m_lessonsDock->setObjectName(QStringLiteral("lessonsDock"));
  m_lessonsDock->setWidget(scroll);
  addDockWidget(Qt::RightDockWidgetArea, m_lessonsDock);
  m_lessonsDock->hide();
  connect(m_lessons, &LessonsPanel::lessonStarted, this, [this](const Lesson& lesson) { focusLesson(&lesson); });
  connect(m_lessons, &LessonsPanel::lessonLeft, this, [this] { focusLesson(nullptr); });
}

ChartPanel* MainWindow::lessonChart(LessonChart chart) const {
  switch (chart) {
    case LessonChart::kEpsilon:
      return m_charts->epsilon();
    case LessonChart::kRdp:
      return m_charts->rdp();
    case LessonChart::kTradeoff:
      return m_charts->tradeoff();
    case LessonChart::kAuditorPlane:
      return m_auditor->plane();
    case LessonChart::kLadder:
      return m_auditor->ladder();
  }
  return nullptr;
}

// Only the lesson's curves on its charts (nullptr: every chart as the user left it), its tab on
// top, and the exact views on when its curves need them.
void MainWindow::focusLesson(const Lesson* lesson) {
  for (ChartPanel* chart : std::as_const(m_lessonFocus)) chart->setFocusCurves(std::nullopt);
  m_lessonFocus.clear();
  if (!lesson) return;
  for (const LessonFocus& focus : lesson->focus) {
    QSet<QString> ids;
    for (const std::string& id : focus.curves) ids.insert(QString::fromStdString(id));
    for (const std::string& id : focus.optional) ids.insert(QString::fromStdString(id));
    ChartPanel* chart = lessonChart(focus.chart);
    chart->setFocusCurves(ids);
    m_lessonFocus << chart;
  }
  if (lesson->exact) {
    if (auto* exact = findChild<QCheckBox*>(QStringLiteral("exactToggle"))) exact->setChecked(true);
  }
  m_tabs->setCurrentIndex(onAuditorTab(lesson->focus.front().chart) ? kAuditorTab : kPrivacyTab);
}

// The Privacy tab draws what its controllers deliver; the panels talk through the session.
void MainWindow::connectViews() {
  PrivacyViews* views = m_privacyViews.get();
  connect(&m_model, &ParameterModel::dataBindingAdjusted, this,
          [this](const QString& message) { showStatus(QStringLiteral("n from the data: ") + message, true); });
  connect(views, &PrivacyViews::draftDrawingChanged, m_charts, &ExplorerCharts::setDraftDrawing);
  connect(views, &PrivacyViews::analyticsReady, this, [this](std::shared_ptr<const AnalyticsSnapshot> snapshot) {
    m_charts->showAnalytics(*snapshot);
    m_table->showAnalytics(*snapshot);
    m_timing->setText(QStringLiteral("analytic accountants: %1 ms").arg(snapshot->computeMilliseconds, 0, 'f', 1));
    refreshHeadline();
    refreshPinComparison();
    Q_EMIT analyticsApplied();
  });
  connect(views, &PrivacyViews::pldProgress, m_table, &AccountantTable::showPldProgress);
  connect(views, &PrivacyViews::pldReady, this, [this](std::shared_ptr<const PldSnapshot> snapshot) {
    m_charts->showPld(*snapshot);
    m_table->showPld(*snapshot);
    refreshHeadline();
    refreshPinComparison();
    Q_EMIT pldApplied();
  });
  connect(views, &PrivacyViews::shuffleReady, this, [this](std::shared_ptr<const PldSnapshot> snapshot) {
    m_charts->showPld(*snapshot);
    m_table->showPld(*snapshot);
    refreshHeadline();  // the sampler stage brings random allocation, the bound of balls-in-bins batches
    Q_EMIT shuffleApplied();
  });
  connect(views, &PrivacyViews::pldCleared, this, [this] {
    m_charts->clearPld();
    m_table->clearPld();
    refreshHeadline();
  });
  connect(views, &PrivacyViews::stepsizeReady, this, [this](std::shared_ptr<const StepsizeSnapshot> snapshot) {
    m_charts->showStepsize(*snapshot);
    Q_EMIT stepsizeApplied();
  });
  connect(&m_model, &ParameterModel::validityChanged, this, [this](bool valid, const QString& message) {
    m_charts->setMessage(valid ? QString()
                               : QStringLiteral("Invalid parameters — showing the last valid run.\n") + message);
  });
  views->setReferenceEpsilon(m_calibrate->targetEpsilon());
  connect(m_calibrate, &CalibratePanel::targetChanged, this,
          [this] { m_privacyViews->setReferenceEpsilon(m_calibrate->targetEpsilon()); });
  connect(m_audit, &AuditPanel::auditFinished, m_charts, &ExplorerCharts::showAudit);
  connect(m_audit, &AuditPanel::reportReady, this, [this] { m_importedAuditParams.reset(); });
  connect(m_audit, &AuditPanel::reportReady, m_auditor, &AuditorTab::showAudit);
  // An audit is about the knobs and data it trained with: once they move, it is greyed and says so.
  // Imported scores were checked against the claim of the knobs at import: the same once they move.
  const auto auditCurrency = [this] {
    const std::optional<ResultTag>& tag = m_audit->reportTag();
    const QString changed = tag ? m_session->whatChanged(*tag) : QString();
    m_charts->setAuditStale(changed);
    if (m_importedAuditParams) {
      m_auditor->setAuditStale(m_model.lastValid() == *m_importedAuditParams
                                   ? QString()
                                   : QStringLiteral("the knobs the claim was computed from"));
    } else {
      m_auditor->setAuditStale(changed);
    }
  };
  connect(m_audit, &AuditPanel::reportReady, this, auditCurrency);
  connect(&m_model, &ParameterModel::paramsChanged, this, auditCurrency);
  connect(&m_model, &ParameterModel::trainerChanged, this, auditCurrency);
  connect(m_session.get(), &Session::runSettingsChanged, this, auditCurrency);
  connect(m_trainer, &TrainerPanel::exploreRun, this, [this](const core::Params& p) {
    m_model.setAll(p, QStringLiteral("explore the trained run"));
    m_tabs->setCurrentIndex(kPrivacyTab);
  });
}

MainWindow::~MainWindow() {
  // The widgets outlive m_model (QWidget deletes its children after the members are gone): a
  // focused entry would commit its text to a destroyed model when the window hides. Commit now.
  if (QWidget* focused = QApplication::focusWidget(); focused && isAncestorOf(focused)) focused->clearFocus();
  m_privacyViews->cancelAll();
  m_auditor->job()->cancel();
  m_scoreAuditJob->cancel();
}

QList<ChartPanel*> MainWindow::allCharts() const {
  QList<ChartPanel*> charts = m_charts->all();
  charts << m_trainer->accuracyChart() << m_trainer->epsilonChart() << m_audit->chart() << m_frontier->chart()
         << m_auditor->charts();
  return charts;
}

core::AccountingView MainWindow::shownAccounting() const {
  if (const std::shared_ptr<const AnalyticsSnapshot> s = lastAnalytics()) {
    return {s->params, s->conversion, s->fixedAlpha};
  }
  return {m_model.lastValid(), m_model.conversion(), false};
}

void MainWindow::installExportContexts() {
  using Commands = std::function<QStringList(const core::AccountingView&)>;
  // The Privacy tab's charts show the last snapshot's knobs (the model's may be mid-drag).
  const auto accounting = [this](Commands commands) {
    return [this, commands] {
      const core::AccountingView view = shownAccounting();
      ExportContext c;
      c.knobs = knobsText(view.params, view.conversion);
      if (view.fixedAlpha) c.knobs += QStringLiteral(" · RDP analyses converted at the α knob alone");
      c.command = commands(view).join(QLatin1Char('\n'));
      return c;
    };
  };
  // The table's values at the marked K, then the curves on the chart's own log-spaced steps, a
  // command per density: the closed forms at 300 points, the root searches at 60, the exact
  // compositions at 24 (as the chart draws them; 300 shuffle compositions would take seconds).
  m_charts->epsilon()->setExportContext(accounting([this](const core::AccountingView& v) {
    QStringList lines{commandLine(core::epsilonArguments(v, kAllAccountants))};
    std::string dense, sparse, exact;
    const auto add = [](std::string& list, std::string_view id) {
      list += (list.empty() ? "" : ",") + std::string(id);
    };
    const QStringList drawn = m_charts->epsilon()->curveIds();
    for (const core::accounting::Accountant* a : core::accounting::allAccountants()) {
      if (!drawn.contains(QString::fromStdString(std::string(a->id())))) continue;
      add(!a->info().isAnalytic ? exact : a->cheapPerPoint() ? dense : sparse, a->id());
    }
    const std::int64_t maxSteps = epsilonAxisMaxSteps(v.params);
    if (!dense.empty()) lines << commandLine(core::curveArguments(v, dense, maxSteps, kEpsilonCurvePoints));
    if (!sparse.empty()) lines << commandLine(core::curveArguments(v, sparse, maxSteps, kSparseEpsilonCurvePoints));
    if (!exact.empty()) lines << commandLine(core::curveArguments(v, exact, maxSteps, kPldCurvePoints));
    return lines;
  }));
  m_charts->rdp()->setExportContext(accounting([this](const core::AccountingView& v) {
    QStringList lines;
    if (const std::shared_ptr<const AnalyticsSnapshot> s = lastAnalytics()) {
      for (const PlotCurve& curve : s->rdpCurves) lines << commandLine(core::rdpArguments(v, curve.accountant));
    }
    return lines;
  }));
  // Every f_{ε,δ} on the plane is drawn from an (ε, δ) of the table, G_μ from gdp's μ.
  m_charts->tradeoff()->setExportContext(accounting([](const core::AccountingView& v) {
    return QStringList{commandLine(core::epsilonArguments(v, kAllAccountants))};
  }));
  m_charts->stepsize()->setExportContext(accounting([this](const core::AccountingView& v) {
    return QStringList{commandLine(core::stepsizeArguments(v, m_calibrate->targetEpsilon()))};
  }));
  // The Auditor tab follows the knobs: the exact accountant's bracket, and the audit drawn on it.
  for (ChartPanel* chart : m_auditor->charts()) {
    chart->setExportContext([this] {
      const core::AccountingView view{m_model.lastValid(), m_model.conversion(), false};
      ExportContext c;
      c.knobs = knobsText(view.params);
      QStringList lines{commandLine(
          core::epsilonArguments(view, core::accounting::accountantOf<core::accounting::PldAccountant>().id()))};
      if (m_importedAuditParams) {
        lines << commandLine(core::scoreAuditArguments(m_importedAuditPath.toStdString(), *m_importedAuditParams));
      } else if (const std::optional<AuditRun>& run = m_audit->reportRun()) {
        lines << commandLine(core::auditArguments(run->config, run->data, run->shadowModels, run->canaries));
        c.dataset = dataText(run->data);
        if (const std::optional<ResultTag>& tag = m_audit->reportTag())
          c.note = beforeYourChange(m_session->whatChanged(*tag));
      }
      c.command = lines.join(QLatin1Char('\n'));
      return c;
    });
  }
  installTrainingContexts();
  for (ChartPanel* chart : allCharts()) connect(chart, &ChartPanel::exportRequested, this, &MainWindow::askExport);
}

// The trainer's charts, the audit's ROC and the frontier carry the run that made them: its own
// knobs and data, with a note when the knobs have moved since.
void MainWindow::installTrainingContexts() {
  const auto trained = [this] {
    ExportContext c;
    const std::optional<TrainingRequest>& last = m_session->training()->lastRequest();
    if (!last) {
      c.knobs = knobsText(m_model.lastValid());
      return c;
    }
    TrainingRequest request = *last;
    resolveTableTarget(request);  // the target the worker computed, the same way
    c.knobs = knobsText(request.base.knobs);
    c.dataset = dataText(request.data);
    c.note = beforeYourChange(m_session->whatChanged(tagOf(request)));
    QStringList lines;
    for (core::training::Mechanism m : request.mechanisms) {
      core::training::TrainerConfig config = request.base;
      config.mechanism = m;
      lines << commandLine(core::trainArguments(config, request.data));
    }
    c.command = lines.join(QLatin1Char('\n'));
    return c;
  };
  m_trainer->accuracyChart()->setExportContext(trained);
  m_trainer->epsilonChart()->setExportContext(trained);
  m_audit->chart()->setExportContext([this] {
    ExportContext c;
    const std::optional<AuditRun>& run = m_audit->reportRun();
    const std::optional<ResultTag>& tag = m_audit->reportTag();
    if (!run || !tag) {
      c.knobs = knobsText(m_model.lastValid());
      return c;
    }
    c.knobs = knobsText(tag->knobs);
    c.dataset = dataText(run->data) +
                QStringLiteral(" · attacked: %1")
                    .arg(QString::fromLatin1(core::training::mechanismName(run->config.mechanism).data()));
    c.note = beforeYourChange(m_session->whatChanged(*tag));
    c.command = commandLine(core::auditArguments(run->config, run->data, run->shadowModels, run->canaries));
    return c;
  });
  m_frontier->chart()->setExportContext([this] {
    ExportContext c;
    const std::optional<FrontierJob>& job = m_frontier->frontierJob();
    const std::optional<core::training::ModelComparisonRequest>& models = m_frontier->comparisonJob();
    if (!job && models && m_frontier->resultTag()) {
      const ResultTag& tag = *m_frontier->resultTag();
      c.knobs = knobsText(tag.knobs);
      if (tag.data) c.dataset = dataText(*tag.data);
      c.note = beforeYourChange(m_session->whatChanged(tag));
      c.command = commandLine(core::comparisonArguments(*models));
      return c;
    }
    if (!job) {
      c.knobs = knobsText(m_model.lastValid());
      return c;
    }
    c.knobs = knobsText(job->request.base.knobs);
    c.dataset = dataText(job->data);
    c.note = beforeYourChange(m_session->whatChanged(ResultTag{job->request.base.knobs, job->data}));
    c.command = commandLine(core::frontierArguments(job->request, job->data));
    return c;
  });
}

QString MainWindow::currentTabCommand() const {
  switch (m_tabs->currentIndex()) {
    case kPrivacyTab:
      return commandLine(core::epsilonArguments(shownAccounting(), kAllAccountants));
    case kTrainingTab: {
      QString command = m_trainer->accuracyChart()->exportContext().command;
      if (m_audit->reportRun()) {
        command += (command.isEmpty() ? QString() : QStringLiteral("\n")) + m_audit->chart()->exportContext().command;
      }
      return command;
    }
    case kFrontierTab:
      return m_frontier->chart()->exportContext().command;
    case kAuditorTab:
      return m_auditor->charts().front()->exportContext().command;
    default:
      return {};
  }
}

void MainWindow::buildMenus() {
  buildFileMenu();
  buildEditMenu();
  buildPresetsMenu();
  buildHelpMenu();
}

void MainWindow::buildFileMenu() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("&Open preset…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open preset"), QString(),
                                                      QStringLiteral("Presets (*.json)"));
    if (!path.isEmpty()) loadPresetFile(path);
  });
  file->addAction(QStringLiteral("&Save preset…"), QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, QStringLiteral("Save preset"), QStringLiteral("my-run.json"), QStringLiteral("Presets (*.json)"));
    if (!path.isEmpty()) savePresetFile(path, QFileInfo(path).completeBaseName());
  });
  file->addAction(QStringLiteral("Open &DP events…"), this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, QStringLiteral("Open DP events (dp_accounting DpEvent JSON)"), QString(),
                                     QStringLiteral("JSON (*.json)"));
    if (!path.isEmpty()) openDpEvents(path);
  });
  m_recentMenu = file->addMenu(QStringLiteral("Recent files"));
  file->addSeparator();
  file->addAction(QStringLiteral("Open s&ession…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open session"), QString(),
                                                      QStringLiteral("DP Explorer sessions (*.dpxsession)"));
    if (!path.isEmpty()) openSession(path);
  });
  file->addAction(QStringLiteral("Save sess&ion…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Save session"), QStringLiteral("my-session.dpxsession"),
                                     QStringLiteral("DP Explorer sessions (*.dpxsession)"));
    if (!path.isEmpty()) saveSession(path);
  });
  file->addSeparator();
  file->addAction(QStringLiteral("Import audit &scores…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Import membership scores"), QString(),
        QStringLiteral("Scores (*.csv *.json);;CSV (*.csv);;JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) importAuditScores(path);
  });
  file->addSeparator();
  addExportActions(file);
  file->addSeparator();
  auto* statement = new StatementExport(
      this, [this] { return m_model.lastValid(); }, [this] { return m_model.conversion(); });
  statement->addActions(file);
  file->addSeparator();
  file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

// Each chart as PNG or SVG, every curve as CSV or JSON, the audit report as HTML or PDF.
void MainWindow::addExportActions(QMenu* file) {
  QMenu* exportMenu = file->addMenu(QStringLiteral("&Export chart"));
  for (ChartPanel* chart : allCharts()) {
    exportMenu->addAction(chart->title() + QStringLiteral("…"), this, [this, chart] { askExport(chart); });
  }
  file->addAction(QStringLiteral("Export &curves (CSV or JSON)…"), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Export curves"), QStringLiteral("curves.json"),
                                     QStringLiteral("JSON (*.json);;CSV (*.csv)"));
    if (!path.isEmpty()) exportCurves(path);
  });
  file->addAction(QStringLiteral("Export audit &report (HTML or PDF)…"), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Export report"), QStringLiteral("dp-report.html"),
                                     QStringLiteral("HTML (*.html);;PDF (*.pdf)"));
    if (!path.isEmpty()) exportReport(path);
  });
}

void MainWindow::buildEditMenu() {
  QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
  QAction* undo = m_model.undoStack()->createUndoAction(this, QStringLiteral("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = m_model.undoStack()->createRedoAction(this, QStringLiteral("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  QAction* copy = edit->addAction(QStringLiteral("Copy as &dpx command"), this, [this] {
    const QString command = currentTabCommand();
    if (command.isEmpty()) {
      showStatus(QStringLiteral("This view has no result to recompute yet."), true);
      return;
    }
    QGuiApplication::clipboard()->setText(command);
    showStatus(QStringLiteral("Copied: %1").arg(command.section(QLatin1Char('\n'), 0, 0)));
  });
  copy->setObjectName(QStringLiteral("copyCommandAction"));
  copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  copy->setStatusTip(QStringLiteral("The dpx command line that recomputes the current tab's numbers"));
}

void MainWindow::buildPresetsMenu() {
  QMenu* presets = menuBar()->addMenu(QStringLiteral("&Presets"));
  for (const Preset& p : builtinPresets()) {
    // "Chen, Lee & Kifer 2019 · …": a lone & would underline the next letter as a shortcut.
    QAction* a = presets->addAction(QString(p.name).replace(QLatin1Char('&'), QStringLiteral("&&")), this,
                                    [this, p] { loadPreset(p); });
    a->setToolTip(p.source + QStringLiteral(" — ") + p.description);
    a->setStatusTip(p.source);
  }
  presets->setToolTipsVisible(true);
}

void MainWindow::buildHelpMenu() {
  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  help->addAction(QStringLiteral("&Contents"), QKeySequence::HelpContents, this,
                  [this] { showHelpDialog<UserGuideDialog>(this); });
  QAction* lessons = m_lessonsDock->toggleViewAction();
  lessons->setText(QStringLiteral("&Lessons for teachers"));
  lessons->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  help->addAction(lessons);
  help->addAction(QStringLiteral("&About DP Explorer"), this, [this] { showHelpDialog<AboutDialog>(this); });
}

// One answer above the table: the tightest upper bound that applies, what it allows an attack,
// and the analyses that do not apply, each with the assumption that fails.
void MainWindow::refreshHeadline() {
  const std::shared_ptr<const AnalyticsSnapshot> analytics = m_privacyViews->lastAnalytics();
  if (!analytics) return;
  const std::shared_ptr<const PldSnapshot> pld = m_privacyViews->lastPld();
  const std::optional<RunHeadline> h = runHeadline(*analytics, pld.get());
  const auto num = [](double v, int digits) { return QString::fromStdString(core::formatNumber(v, digits)); };
  QString text;
  if (!h) {
    text = QStringLiteral(
        "<b>No upper bound applies to this run</b>: every analysis's assumptions fail (the "
        "table says which); its ε is not proven.");
  } else {
    text = QStringLiteral(
               "<span style='font-size:115%'><b>This run: ε ≤ %1 at δ = %2</b></span> — %3 (%4), %5 "
               "to DP-SGD on %9 batches. A membership-inference attack's "
               "true-positive rate at %6 % false positives is at most <b>%7 %</b>%8.")
               .arg(num(h->epsilon, 4), num(h->delta, 3), QString::fromStdString(h->accountantId).toHtmlEscaped(),
                    QString::fromStdString(h->exact ? h->accountantName + ", exact bracket's upper end"
                                                    : h->accountantName)
                        .toHtmlEscaped(),
                    h->applicable == 1
                        ? QStringLiteral("the one upper bound that applies")
                        : QStringLiteral("the tightest of the %1 upper bounds that apply").arg(h->applicable),
                    num(100 * kHeadlineFpr, 3), num(100 * h->tprAtFpr, 3),
                    h->tprExact ? QStringLiteral(" (its exact trade-off curve)") : QString(),
                    h->sampler == "poisson" ? QStringLiteral("Poisson") : QString::fromStdString(h->sampler));
    constexpr std::size_t kShown = 3;
    for (std::size_t i = 0; i < h->notApplying.size() && i < kShown; ++i) {
      text += QStringLiteral("<br><span style='color:#8a5a00'>Does not apply: %1</span>")
                  .arg(QString::fromStdString(h->notApplying[i]).toHtmlEscaped());
    }
    if (h->notApplying.size() > kShown) {
      text += QStringLiteral("<br><span style='color:#8a5a00'>… and %1 more, greyed in the table.</span>")
                  .arg(h->notApplying.size() - kShown);
    }
  }
  m_headline->setText(text);
}

void MainWindow::showStatus(const QString& text, bool error) {
  statusBar()->showMessage(text, error ? 0 : 8000);
  statusBar()->setStyleSheet(error ? QStringLiteral("color: #b71c1c;") : QString());
}

bool MainWindow::loadPreset(const Preset& preset) {
  // Knobs, dataset, mechanisms, epochs (through K) and target ε: one undo step.
  m_model.setState(stateFromPreset(preset, m_model.state()), QStringLiteral("preset: ") + preset.name);
  if (preset.hasTrainer()) m_trainer->ensureDataLoaded();
  showStatus(QStringLiteral("Preset “%1” — %2").arg(preset.name, preset.source));
  return true;
}

void MainWindow::importAuditScores(const QString& path) {
  const core::Params params = m_model.lastValid();
  const std::string file = path.toStdString();
  showStatus(QStringLiteral("auditing %1 against the current knobs' claim…").arg(QFileInfo(path).fileName()));
  m_scoreAuditJob->request(
      [file, params](const std::atomic<bool>& cancel, const BackgroundJob::Progress&) -> std::any {
        return computeScoreAudit(file, params, 0.95, cancel);
      },
      [this, path, params](std::any&& result) {
        using Report = core::Result<std::shared_ptr<const core::audit::AuditReport>>;
        auto* report = std::any_cast<Report>(&result);
        if (!report) return;
        if (!report->isOk()) {
          if (report->status().code() == core::StatusCode::kCancelled) return;
          const QString message = QString::fromStdString(report->status().message());
          showStatus(QStringLiteral("cannot audit the scores: ") + message, true);
          // Not modal-blocking: open() returns at once, so no event loop nests inside this callback.
          auto* box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Import audit scores"),
                                      QStringLiteral("The scores could not be audited."), QMessageBox::Ok, this);
          box->setObjectName(QStringLiteral("importScoresError"));
          box->setInformativeText(message);
          box->setAttribute(Qt::WA_DeleteOnClose);
          box->open();
          return;
        }
        m_importedAuditParams = params;
        m_importedAuditPath = path;
        m_auditor->showAudit(**report);
        m_auditor->setAuditStale(QString());
        m_tabs->setCurrentIndex(kAuditorTab);
        showStatus(QFileInfo(path).fileName() + QStringLiteral(": ") + QString::fromStdString((**report)->verdict));
      });
}

bool MainWindow::loadPresetFile(const QString& path) {
  core::Result<Preset> preset = dpx::ui::loadPresetFile(path);
  if (!preset) {
    showStatus(QString::fromStdString(preset.status().message()), true);
    return false;
  }
  addRecentFile(path);
  return loadPreset(*preset);
}

bool MainWindow::savePresetFile(const QString& path, const QString& name) {
  ModelState state = m_model.state();
  state.params = m_model.lastValid();
  const core::Status s = dpx::ui::savePresetFile(presetFromState(state, name), path);
  if (!s.isOk()) {
    showStatus(QString::fromStdString(s.message()), true);
    return false;
  }
  addRecentFile(path);
  showStatus(QStringLiteral("Saved %1").arg(path));
  return true;
}

bool MainWindow::exportChart(ChartPanel* chart, const QString& path) {
  bool ok = false;
  if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
    ok = chart->exportSvg(path);
  } else if (path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) ||
             path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) {
    const QByteArray data = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)
                                ? chart->curvesCsv().toUtf8()
                                : QJsonDocument(chart->curvesJson()).toJson();
    QSaveFile file(path);
    ok = file.open(QIODevice::WriteOnly) && file.write(data) == data.size() && file.commit();
  } else {
    ok = chart->exportPng(path);
  }
  if (ok) {
    showStatus(QStringLiteral("Exported %1").arg(path));
  } else {
    showStatus(QStringLiteral("Could not write %1").arg(path), true);
  }
  return ok;
}

void MainWindow::askExport(ChartPanel* chart) {
  const QString path = QFileDialog::getSaveFileName(
      this, QStringLiteral("Export %1").arg(chart->title()), chart->objectName() + QStringLiteral(".png"),
      QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;CSV of the curves (*.csv);;JSON of the curves (*.json)"));
  if (!path.isEmpty()) exportChart(chart, path);
}

bool MainWindow::exportCurves(const QString& path) {
  QByteArray data;
  if (path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) {
    QString csv;
    // Each chart's block opens with its own `# ` lines: title, knobs, data, command.
    for (ChartPanel* chart : allCharts()) csv += chart->curvesCsv();
    data = csv.toUtf8();
  } else {
    QJsonArray charts;
    for (ChartPanel* chart : allCharts()) charts.append(chart->curvesJson());
    QJsonObject root;
    root.insert(QStringLiteral("format"), QStringLiteral("dpexplorer-curves"));
    root.insert(QStringLiteral("version"), 1);
    root.insert(QStringLiteral("charts"), charts);
    data = QJsonDocument(root).toJson();
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit()) {
    showStatus(QStringLiteral("Could not write %1: %2").arg(path, file.errorString()), true);
    return false;
  }
  showStatus(QStringLiteral("Exported curves to %1").arg(path));
  return true;
}

QString MainWindow::reportHtml() const {
  ReportInputs in;
  in.params = m_model.lastValid();
  in.conversion = m_model.conversion();
  in.analytics = m_privacyViews->lastAnalytics();
  in.pld = m_privacyViews->lastPld();
  for (ChartPanel* chart : m_charts->all()) in.charts.push_back({chart->title(), chart->pngBytes()});
  in.training = m_session->training()->results();
  in.trainingData = m_session->training()->dataDescription();
  in.auditHtml = m_audit ? m_audit->reportSection() : QString();
  if (const std::optional<ResultTag> trained = m_session->trainingTag())
    in.trainingChanged = m_session->whatChanged(*trained);
  if (const std::optional<ResultTag>& audited = m_audit->reportTag())
    in.auditChanged = m_session->whatChanged(*audited);
  return buildReportHtml(in);
}

bool MainWindow::exportReport(const QString& path) {
  const QString html = reportHtml();
  bool ok;
  if (path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) {
    ok = writeReportPdf(html, path) && QFileInfo(path).size() > 0;
  } else {
    QSaveFile file(path);
    const QByteArray bytes = html.toUtf8();
    ok = file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size() && file.commit();
  }
  showStatus(ok ? QStringLiteral("Report written to %1").arg(path) : QStringLiteral("Could not write %1").arg(path),
             !ok);
  return ok;
}

// A/B: the knobs on screen pinned as A, B with twice the noise; the knobs come back by undo.
bool MainWindow::savePinnedScreenshot(const QString& directory) {
  const bool wasPinned = static_cast<bool>(m_pinned);
  const core::Params a = m_model.params();
  pinConfiguration(a);
  m_model.setKnob(core::Knob::kSigma, 2.0 * a.sigma);
  bool ok = waitForLessonViews(60000);  // no lesson open: the analytic views of the knobs
  m_privacyViews->exact()->job()->waitForIdle();
  QApplication::processEvents();
  ok &= grab().save(QDir(directory).filePath(QStringLiteral("pinned.png")));
  m_model.undoStack()->undo();
  if (!wasPinned) unpin();
  QApplication::processEvents();
  return ok;
}

bool MainWindow::saveScreenshots(const QString& directory) {
  QDir().mkpath(directory);
  bool ok = true;
  m_tabs->setCurrentIndex(0);
  QApplication::processEvents();
  ok &= grab().save(QDir(directory).filePath(QStringLiteral("explorer.png")));
  // The Phases tab beside the explorer (the table of `--events FILE`, or the knobs' one phase).
  m_phases->job()->waitForIdle();
  QApplication::processEvents();
  const bool phasesShown = !m_phasesDock->visibleRegion().isEmpty();
  m_phasesDock->show();
  m_phasesDock->raise();
  QApplication::processEvents();
  ok &= grab().save(QDir(directory).filePath(QStringLiteral("phases.png")));
  if (!phasesShown) {
    for (QDockWidget* dock : tabifiedDockWidgets(m_phasesDock)) {
      if (dock->objectName() == QLatin1String("parametersDock")) dock->raise();
    }
  }
  QApplication::processEvents();
  ok &= m_charts->tradeoff()->grab().save(QDir(directory).filePath(QStringLiteral("tradeoff.png")));
  ok &= savePinnedScreenshot(directory);
  m_tabs->setCurrentIndex(kTrainingTab);
  QApplication::processEvents();
  ok &= grab().save(QDir(directory).filePath(QStringLiteral("training.png")));
  const bool follow = m_frontier->followBox()->isChecked();
  m_frontier->followBox()->setChecked(false);  // showing the tab must not start another frontier
  m_tabs->setCurrentIndex(kFrontierTab);
  QApplication::processEvents();
  ok &= grab().save(QDir(directory).filePath(QStringLiteral("frontier.png")));
  m_frontier->followBox()->setChecked(follow);
  ok &= saveAuditorScreenshots(directory);
  ok &= saveLessonScreenshots(directory);
  m_tabs->setCurrentIndex(kPrivacyTab);
  return ok;
}

bool MainWindow::saveLessonScreenshots(const QString& directory) {
  const int undoIndex = m_model.undoStack()->index();
  const bool docked = m_lessonsDock->isVisible();
  m_lessonsDock->show();
  bool ok = true;
  for (std::size_t i = 0; i < lessons().size(); ++i) {
    m_lessons->startLesson(static_cast<int>(i));
    ok &= waitForLessonViews(120000);
    // Axes a view switch replaced go through deleteLater: gone before the grab, not drawn beneath.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    QApplication::processEvents();
    ok &= grab().save(QDir(directory).filePath(QString::fromStdString(lessons()[i].id) + QStringLiteral(".png")));
  }
  m_lessons->leaveLesson();
  m_model.undoStack()->setIndex(undoIndex);
  m_lessonsDock->setVisible(docked);
  return ok;
}

bool MainWindow::waitForLessonViews(int timeoutMs) {
  const Lesson* lesson = m_lessons->lesson();
  const auto current = [this, lesson] {
    const core::Params& knobs = m_model.lastValid();
    if (lesson && onAuditorTab(lesson->focus.front().chart)) {
      const std::shared_ptr<const AuditorSnapshot> s = m_auditor->lastSnapshot();
      return s && s->params == knobs;
    }
    const std::shared_ptr<const AnalyticsSnapshot> analytics = lastAnalytics();
    if (!analytics || analytics->params != knobs || analytics->draft) return false;
    if (!lesson || !lesson->exact) return true;
    const std::shared_ptr<const PldSnapshot> pld = lastPld();
    return pld && pld->params == knobs && (pld->shuffleDone || !pld->error.empty());
  };
  QElapsedTimer clock;
  clock.start();
  while (!current()) {
    if (clock.elapsed() > timeoutMs) return false;
    QApplication::processEvents();
    QThread::msleep(5);  // the workers have the cores
  }
  QApplication::processEvents();  // the last snapshot's redraws
  return true;
}

// The Auditor tab with an audit of the trainer's run drawn on it (the audit runs first when none
// has: screenshots are taken offline, so waiting here blocks nobody).
bool MainWindow::saveAuditorScreenshots(const QString& directory) {
  m_tabs->setCurrentIndex(kTrainingTab);
  m_trainer->ensureDataLoaded();
  if (!m_audit->report()) {
    m_audit->runAudit();
    m_audit->job()->waitForIdle();
  }
  m_tabs->setCurrentIndex(kAuditorTab);
  QApplication::processEvents();
  m_auditor->job()->waitForIdle();
  QApplication::processEvents();
  bool ok = grab().save(QDir(directory).filePath(QStringLiteral("auditor.png")));
  ok &= m_auditor->plane()->grab().save(QDir(directory).filePath(QStringLiteral("auditor_plane.png")));
  m_auditor->setRocView(true);
  // The linear axes' items go through deleteLater: gone before the grab, not drawn under the log ones.
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  QApplication::processEvents();
  ok &= m_auditor->plane()->grab().save(QDir(directory).filePath(QStringLiteral("auditor_roc.png")));
  m_auditor->setRocView(false);
  return ok;
}

void MainWindow::addRecentFile(const QString& path) {
  QStringList files = recentFiles();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecent) files.removeLast();
  m_settings->setValue(QStringLiteral("recentFiles"), files);
  rebuildRecentMenu();
}

QStringList MainWindow::recentFiles() const { return m_settings->value(QStringLiteral("recentFiles")).toStringList(); }

void MainWindow::rebuildRecentMenu() {
  if (!m_recentMenu) return;
  m_recentMenu->clear();
  const QStringList files = recentFiles();
  for (const QString& f : files) {
    m_recentMenu->addAction(f, this, [this, f] {
      if (f.endsWith(QStringLiteral(".dpxsession"))) {
        openSession(f);
      } else {
        loadPresetFile(f);
      }
    });
  }
  m_recentMenu->setEnabled(!files.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  m_settings->setValue(QStringLiteral("window/geometry"), saveGeometry());
  m_settings->setValue(QStringLiteral("window/state"), saveState());
  QMainWindow::closeEvent(event);
}

// A pinned configuration keeps the snapshot it had; pinning the knobs on screen reuses their
// finished (not draft) snapshot, any other knobs (a session's pin) are computed here — a few
// milliseconds, the analytic accountants only.
void MainWindow::pinConfiguration(const core::Params& params) {
  std::shared_ptr<const AnalyticsSnapshot> snapshot = m_privacyViews->lastAnalytics();
  if (!snapshot || snapshot->draft || !(snapshot->params == params) || snapshot->epochsAxis != m_model.epochsAxis() ||
      snapshot->fixedAlpha != m_model.fixedAlphaView()) {
    snapshot = std::make_shared<const AnalyticsSnapshot>(
        computeAnalytics(params, m_model.conversion(), m_model.epochsAxis(), m_model.fixedAlphaView()));
  }
  m_pinnedExact.reset();
  const std::shared_ptr<const PldSnapshot> pld = m_privacyViews->lastPld();
  if (pld && pld->params == params && pld->epsilon) m_pinnedExact = pld->epsilon->epsilon;
  m_pinned = std::move(snapshot);
  m_charts->showPinned(m_pinned, pinLabel(params));
  m_pinComparison->show();
  refreshPinComparison();
  const QSignalBlocker block(m_pinToggle);
  m_pinToggle->setChecked(true);
}

void MainWindow::unpin() {
  m_pinned.reset();
  m_pinnedExact.reset();
  m_charts->showPinned(nullptr, {});
  m_pinComparison->hide();
  const QSignalBlocker block(m_pinToggle);
  m_pinToggle->setChecked(false);
}

QString MainWindow::pinLabel(const core::Params& p) {
  const auto n = [](double v) { return QString::fromStdString(core::formatNumber(v, 4)); };
  return QStringLiteral("σ = %1 · K = %2 · m = %3 · n = %4 · δ = %5")
      .arg(n(p.sigma), n(static_cast<double>(p.K)), n(static_cast<double>(p.m)), n(static_cast<double>(p.n)),
           n(p.delta));
}

void MainWindow::refreshPinComparison() {
  if (!m_pinned) return;
  // The ghosts follow the chart's axis: a pinned run drawn against steps on an epochs axis would lie.
  if (m_pinned->epochsAxis != m_model.epochsAxis() || m_pinned->fixedAlpha != m_model.fixedAlphaView() ||
      m_pinned->conversion != m_model.conversion()) {
    const std::optional<double> exact = m_pinnedExact;
    m_pinned = std::make_shared<const AnalyticsSnapshot>(
        computeAnalytics(m_pinned->params, m_model.conversion(), m_model.epochsAxis(), m_model.fixedAlphaView()));
    m_pinnedExact = exact;
    m_charts->showPinned(m_pinned, pinLabel(m_pinned->params));
  }
  const std::shared_ptr<const AnalyticsSnapshot> current = m_privacyViews->lastAnalytics();
  if (!current) return;
  const std::shared_ptr<const PldSnapshot> pld = m_privacyViews->lastPld();
  const std::optional<double> currentExact = pld && pld->params == current->params && pld->epsilon
                                                 ? std::optional<double>(pld->epsilon->epsilon)
                                                 : std::nullopt;
  m_pinComparison->compare(*m_pinned, m_pinnedExact, *current, currentExact);
}

SessionFile MainWindow::currentSession() const {
  SessionFile session;
  session.state = m_model.state();
  const auto checked = [this](const char* name, bool fallback) {
    const auto* box = findChild<QCheckBox*>(QLatin1String(name));
    return box ? box->isChecked() : fallback;
  };
  session.view.tab = m_tabs->currentIndex();
  session.view.epochsAxis = m_model.epochsAxis();
  session.view.fixedAlpha = m_model.fixedAlphaView();
  session.view.logEpsilon = checked("logEpsilonToggle", true);
  session.view.rocView = checked("rocToggle", false);
  session.view.exactPld = checked("exactToggle", true);
  session.view.conversion = m_model.conversion();
  if (m_pinned) session.pinned = m_pinned->params;
  session.runs = m_trainer->savedRuns();
  return session;
}

bool MainWindow::saveSession(const QString& path) {
  if (!m_model.isValid()) {
    showStatus(QStringLiteral("Session not saved: the knobs are invalid (%1)").arg(m_model.validationMessage()), true);
    return false;
  }
  const core::Status status = saveSessionFile(currentSession(), path);
  if (!status.isOk()) {
    showStatus(QStringLiteral("Session not saved: ") + QString::fromStdString(status.message()), true);
    return false;
  }
  addRecentFile(path);
  showStatus(QStringLiteral("Session saved to %1").arg(path));
  return true;
}

// Knobs and trainer settings as one undo step, then the view, the pin and the saved runs.
bool MainWindow::openSession(const QString& path) {
  const core::Result<SessionFile> session = loadSessionFile(path, m_model.state());
  if (!session) {
    showStatus(QString::fromStdString(session.status().message()), true);
    return false;
  }
  m_model.setState(session->state, QStringLiteral("session: ") + QFileInfo(path).fileName());
  const SessionView& view = session->view;
  const auto set = [this](const char* name, bool on) {
    if (auto* box = findChild<QCheckBox*>(QLatin1String(name))) box->setChecked(on);
  };
  set("epochsToggle", view.epochsAxis);
  set("fixedAlphaToggle", view.fixedAlpha);
  set("logEpsilonToggle", view.logEpsilon);
  set("rocToggle", view.rocView);
  set("exactToggle", view.exactPld);
  m_model.setConversion(view.conversion);
  if (session->pinned) {
    pinConfiguration(*session->pinned);
  } else {
    unpin();
  }
  m_trainer->showSavedRuns(session->runs);
  m_tabs->setCurrentIndex(view.tab);
  addRecentFile(path);
  showStatus(QStringLiteral("Session %1 opened%2")
                 .arg(QFileInfo(path).fileName(),
                      session->runs.empty()
                          ? QString()
                          : QStringLiteral(" with %1 saved runs (Training tab)").arg(session->runs.size())));
  return true;
}

}  // namespace dpx::ui
