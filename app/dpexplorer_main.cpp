// dpexplorer: the DP Explorer desktop application.
//   dpexplorer                       the explorer on its defaults (Bu et al. 2020, Table 1, row 2)
//   dpexplorer --screenshot DIR      computes everything, trains on builtin:digits, audits, computes
//                                    the frontier, saves PNGs of the main views (explorer, trade-off,
//                                    training, frontier) to DIR and exits (scripts/screenshot.sh)
//   dpexplorer --preset ID           starts from a built-in preset (Presets menu; e.g.
//                                    tramer-boneh-2021-fmnist-scatter-linear)
//   dpexplorer --screenshot-frontier FILE
//                                    loads the data, computes the privacy–utility frontier of the
//                                    knobs (or of --preset), saves the Frontier tab to FILE and exits
//       [--frontier-mode epsilon|epochs|models] [--frontier-points P] [--frontier-seeds S]
//                                    with that mode (models: Tramèr & Boneh 2021's models side by
//                                    side), points and seeds
//   dpexplorer --events FILE         opens a dp_accounting DpEvent JSON file in the Phases tab
//   dpexplorer --opengl              draws line series through OpenGL (opt-in; raster by default)
#include <QApplication>
#include <QCommandLineParser>
#include <QSpinBox>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "audit_panel.h"
#include "charts/chart_panel.h"
#include "frontier_panel.h"
#include "help_resources.h"
#include "main_window.h"
#include "phase_table_panel.h"
#include "presets.h"
#include "trainer_panel.h"

namespace {

// The README's screenshots: load the trainer's data (n follows it), let every view compute,
// train, audit, compute the frontier, then save the pictures to `directory` and quit (exit 1 if
// a picture could not be saved, 2 if it all takes over three minutes).
class ScreenshotSequence {
 public:
  ScreenshotSequence(dpx::ui::MainWindow& window, QString directory, QSize size)
      : m_window(window), m_directory(std::move(directory)), m_size(size) {}

  void start() {
    m_window.resize(m_size);
    m_window.frontierPanel()->followBox()->setChecked(false);
    saveWhenFrontierDone();
    chainTrainAuditFrontier();
    trainOnceSlowViewsArrive();
    applyDigitsSetting();
    m_window.trainerPanel()->ensureDataLoaded();
    QTimer::singleShot(180000, QCoreApplication::instance(), [] { QApplication::exit(2); });  // never hang a script
  }

 private:
  // Saves once both frontier parts, the chart and the utility table, are done.
  void saveWhenFrontierDone() {
    dpx::ui::FrontierPanel* frontier = m_window.frontierPanel();
    auto finish = [&window = m_window, directory = m_directory] {
      const bool ok = window.saveScreenshots(directory);
      QApplication::exit(ok ? 0 : 1);
    };
    auto frontierParts = std::make_shared<int>(2);  // the frontier and the utility table
    auto frontierPartDone = [frontierParts, finish] {
      if (--*frontierParts == 0) QTimer::singleShot(300, finish);
    };
    QObject::connect(frontier, &dpx::ui::FrontierPanel::frontierFinished, &m_window, frontierPartDone,
                     Qt::SingleShotConnection);
    QObject::connect(frontier, &dpx::ui::FrontierPanel::utilityShown, &m_window, frontierPartDone,
                     Qt::SingleShotConnection);
  }

  // Training finished → audit; audit finished → the frontier.
  void chainTrainAuditFrontier() {
    dpx::ui::FrontierPanel* frontier = m_window.frontierPanel();
    QObject::connect(
        m_window.auditPanel(), &dpx::ui::AuditPanel::auditFinished, &m_window,
        [&window = m_window, frontier] {
          window.tabs()->setCurrentIndex(dpx::ui::MainWindow::kFrontierTab);  // the utility table follows
          frontier->compute();
        },
        Qt::SingleShotConnection);
    QObject::connect(
        m_window.trainerPanel(), &dpx::ui::TrainerPanel::trainingFinished, &m_window,
        [&window = m_window] { window.auditPanel()->runAudit(); }, Qt::SingleShotConnection);
  }

  // Once the data is loaded, training starts when the PLD and step-size views of the knobs
  // bound to the data have both arrived.
  void trainOnceSlowViewsArrive() {
    dpx::ui::TrainerPanel* trainer = m_window.trainerPanel();
    auto pending = std::make_shared<int>(2);
    auto arrived = [pending, trainer] {
      if (--*pending == 0) trainer->start();
    };
    QObject::connect(
        trainer->controller(), &dpx::ui::TrainingController::dataReady, &m_window,
        [&window = m_window, arrived] {
          QObject::connect(&window, &dpx::ui::MainWindow::pldApplied, &window, arrived, Qt::SingleShotConnection);
          QObject::connect(&window, &dpx::ui::MainWindow::stepsizeApplied, &window, arrived, Qt::SingleShotConnection);
        },
        Qt::SingleShotConnection);
  }

  // The digits setting of the README: batch 64, 30 epochs, η = 0.45, λ = 1e−3, every mechanism
  // calibrated to ε = 1.
  void applyDigitsSetting() {
    dpx::ui::ParameterModel* model = m_window.model();
    model->setKnob(dpx::core::Knob::kM, 64);
    model->setKnob(dpx::core::Knob::kK, 28125);   // 30 epochs of the default n; n then follows the data
    model->setKnob(dpx::core::Knob::kEta, 0.45);  // within 1/(2β) ≈ 0.5: the utility lemmas apply
    model->setKnob(dpx::core::Knob::kLambda, 1e-3);
    dpx::ui::TrainerSettings settings = model->trainer();
    settings.targetEpsilon = 1.0;
    model->setTrainer(settings, QStringLiteral("target ε = 1"));
  }

  dpx::ui::MainWindow& m_window;
  QString m_directory;
  QSize m_size;
};

// The Frontier tab once its frontier is computed for the current knobs and trainer settings: the
// data (and its features) loaded, the table's ε known, the frontier computed, the tab saved to
// `file` (exit 1 if it could not be saved, 2 after twenty minutes).
class FrontierScreenshot {
 public:
  FrontierScreenshot(dpx::ui::MainWindow& window, QString file) : m_window(window), m_file(std::move(file)) {}

  void start() {
    m_window.resize(1600, 1000);
    dpx::ui::FrontierPanel* frontier = m_window.frontierPanel();
    frontier->followBox()->setChecked(false);
    QObject::connect(
        frontier, &dpx::ui::FrontierPanel::frontierFinished, &m_window,
        [&window = m_window, file = m_file] {
          QTimer::singleShot(500, [&window, file] {
            window.tabs()->setCurrentIndex(dpx::ui::MainWindow::kFrontierTab);
            QApplication::processEvents();
            QApplication::exit(window.grab().save(file) ? 0 : 1);
          });
        },
        Qt::SingleShotConnection);
    QObject::connect(
        m_window.session()->training(), &dpx::ui::TrainingController::dataReady, &m_window,
        [&window = m_window] {
          // The frontier centres on the trainer's target, or on the table's ε once it is known.
          auto tryCompute = std::make_shared<std::function<void()>>();
          *tryCompute = [&window, tryCompute] {
            if (!window.session()->defaultTarget()) {
              QTimer::singleShot(200, *tryCompute);
              return;
            }
            window.tabs()->setCurrentIndex(dpx::ui::MainWindow::kFrontierTab);
            window.frontierPanel()->compute();
          };
          QTimer::singleShot(0, *tryCompute);
        },
        Qt::SingleShotConnection);
    m_window.trainerPanel()->ensureDataLoaded();
    QTimer::singleShot(20 * 60 * 1000, QCoreApplication::instance(), [] { QApplication::exit(2); });
  }

 private:
  dpx::ui::MainWindow& m_window;
  QString m_file;
};

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DP Explorer"));
  QApplication::setOrganizationName(QStringLiteral("DP Explorer"));
  QApplication::setApplicationVersion(QStringLiteral(DPX_VERSION));
  QApplication::setWindowIcon(dpx::ui::applicationIcon());
  // Wayland compositors match the window to the installed desktop entry (name and icon) by this.
  QGuiApplication::setDesktopFileName(QStringLiteral("io.github.dpexplorer.DPExplorer"));
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("See the privacy-utility trade-off of differentially private training."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Save screenshots of the main views to DIR and exit."),
                                      QStringLiteral("DIR"));
  parser.addOption(screenshot);
  const QCommandLineOption size(QStringLiteral("window-size"),
                                QStringLiteral("The window's size for --screenshot, WIDTHxHEIGHT (default 1600x1000)."),
                                QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  parser.addOption(size);
  const QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("Start from the built-in preset ID."),
                                  QStringLiteral("ID"));
  parser.addOption(preset);
  const QCommandLineOption events(
      QStringLiteral("events"),
      QStringLiteral("Open a dp_accounting DpEvent JSON file in the Phases tab (as File → Open DP events…)."),
      QStringLiteral("FILE"));
  parser.addOption(events);
  const QCommandLineOption frontierShot(
      QStringLiteral("screenshot-frontier"),
      QStringLiteral("Compute the privacy-utility frontier, save the Frontier tab to FILE and exit."),
      QStringLiteral("FILE"));
  parser.addOption(frontierShot);
  const QCommandLineOption frontierMode(QStringLiteral("frontier-mode"),
                                        QStringLiteral("The frontier's mode: epsilon, epochs or models."),
                                        QStringLiteral("MODE"));
  parser.addOption(frontierMode);
  const QCommandLineOption frontierPoints(QStringLiteral("frontier-points"),
                                          QStringLiteral("The frontier's points (3-16)."), QStringLiteral("P"));
  parser.addOption(frontierPoints);
  const QCommandLineOption frontierSeeds(QStringLiteral("frontier-seeds"),
                                         QStringLiteral("The frontier's seeds per point (1-20)."), QStringLiteral("S"));
  parser.addOption(frontierSeeds);
  const QCommandLineOption opengl(
      QStringLiteral("opengl"),
      QStringLiteral("Draw line series through OpenGL (needs a GL context; raster by default)."));
  parser.addOption(opengl);
  parser.process(app);
  std::optional<QSize> windowSize;
  {
    const QStringList parts = parser.value(size).split(QLatin1Char('x'));
    bool okW = false;
    bool okH = false;
    const int w = parts.size() == 2 ? parts[0].toInt(&okW) : 0;
    const int h = parts.size() == 2 ? parts[1].toInt(&okH) : 0;
    if (!okW || !okH || w < 640 || h < 480 || w > 7680 || h > 4320) {
      std::fprintf(stderr, "dpexplorer: --window-size %s: must be WIDTHxHEIGHT within 640x480 and 7680x4320\n",
                   qPrintable(parser.value(size)));
      return 2;
    }
    windowSize = QSize(w, h);
  }
  dpx::ui::ChartPanel::setOpenGLSeries(parser.isSet(opengl) && !parser.isSet(screenshot));

  dpx::ui::MainWindow window;
  window.show();
  if (parser.isSet(preset)) {
    const QString id = parser.value(preset);
    bool found = false;
    for (const dpx::ui::Preset& p : dpx::ui::builtinPresets()) {
      if (p.id != id) continue;
      found = window.loadPreset(p);
      break;
    }
    if (!found) {
      QStringList ids;
      for (const dpx::ui::Preset& p : dpx::ui::builtinPresets()) ids << p.id;
      std::fprintf(stderr, "dpexplorer: --preset %s: no such built-in preset (the presets: %s)\n", qPrintable(id),
                   qPrintable(ids.join(QStringLiteral(", "))));
      return 2;
    }
  }
  if (parser.isSet(events) && !window.openDpEvents(parser.value(events))) {
    std::fprintf(stderr, "dpexplorer: --events %s: %s\n", qPrintable(parser.value(events)),
                 qPrintable(window.phaseTablePanel()->statusLabel()->text()));
    return 2;
  }
  if (parser.isSet(frontierMode)) {
    const QStringList modes{QStringLiteral("epsilon"), QStringLiteral("epochs"), QStringLiteral("models")};
    const qsizetype mode = modes.indexOf(parser.value(frontierMode));
    if (mode < 0) {
      std::fprintf(stderr, "dpexplorer: --frontier-mode %s: must be epsilon, epochs or models\n",
                   qPrintable(parser.value(frontierMode)));
      return 2;
    }
    window.frontierPanel()->modeBox()->setCurrentIndex(static_cast<int>(mode));
  }
  const auto setSpin = [](QSpinBox* box, const QString& name, const QString& text) {
    bool ok = false;
    const int value = text.toInt(&ok);
    if (!ok || value < box->minimum() || value > box->maximum()) {
      std::fprintf(stderr, "dpexplorer: --%s %s: must be a whole number in [%d, %d]\n", qPrintable(name),
                   qPrintable(text), box->minimum(), box->maximum());
      return false;
    }
    box->setValue(value);
    return true;
  };
  if (parser.isSet(frontierPoints) &&
      !setSpin(window.frontierPanel()->pointsBox(), QStringLiteral("frontier-points"), parser.value(frontierPoints))) {
    return 2;
  }
  if (parser.isSet(frontierSeeds) &&
      !setSpin(window.frontierPanel()->seedsBox(), QStringLiteral("frontier-seeds"), parser.value(frontierSeeds))) {
    return 2;
  }
  std::optional<FrontierScreenshot> frontierScreenshot;
  if (parser.isSet(frontierShot)) {
    frontierScreenshot.emplace(window, parser.value(frontierShot));
    frontierScreenshot->start();
  }
  std::optional<ScreenshotSequence> screenshots;
  if (parser.isSet(screenshot)) {
    screenshots.emplace(window, parser.value(screenshot), *windowSize);
    screenshots->start();
  }
  return QApplication::exec();
}
