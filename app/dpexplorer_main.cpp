// dpexplorer: the DP Explorer desktop application.
//   dpexplorer                       the explorer on its defaults (Bu et al. 2020, Table 1, row 2)
//   dpexplorer --screenshot DIR      computes everything, trains on builtin:digits, audits, computes
//                                    the frontier, saves PNGs of the main views (explorer, trade-off,
//                                    training, frontier) to DIR and exits (scripts/screenshot.sh)
//   dpexplorer --opengl              draws line series through OpenGL (opt-in; raster by default)
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "audit_panel.h"
#include "charts/chart_panel.h"
#include "frontier_panel.h"
#include "main_window.h"
#include "trainer_panel.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DP Explorer"));
  QApplication::setOrganizationName(QStringLiteral("DP Explorer"));
  QApplication::setApplicationVersion(QStringLiteral(DPX_VERSION));
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("See the privacy-utility trade-off of differentially private training."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Save screenshots of the main views to DIR and exit."),
                                      QStringLiteral("DIR"));
  parser.addOption(screenshot);
  const QCommandLineOption opengl(
      QStringLiteral("opengl"),
      QStringLiteral("Draw line series through OpenGL (needs a GL context; raster by default)."));
  parser.addOption(opengl);
  parser.process(app);
  dpx::ui::ChartPanel::setOpenGLSeries(parser.isSet(opengl) && !parser.isSet(screenshot));

  dpx::ui::MainWindow window;
  window.show();
  if (parser.isSet(screenshot)) {
    // Load the trainer's data (n follows it), let every view compute, train, audit, compute the
    // frontier, then save the pictures.
    const QString directory = parser.value(screenshot);
    window.resize(1600, 1000);
    dpx::ui::TrainerPanel* trainer = window.trainerPanel();
    dpx::ui::FrontierPanel* frontier = window.frontierPanel();
    frontier->followBox()->setChecked(false);
    auto finish = [&window, directory] {
      const bool ok = window.saveScreenshots(directory);
      QApplication::exit(ok ? 0 : 1);
    };
    QObject::connect(
        frontier, &dpx::ui::FrontierPanel::frontierFinished, &window, [finish] { QTimer::singleShot(300, finish); },
        Qt::SingleShotConnection);
    QObject::connect(
        window.auditPanel(), &dpx::ui::AuditPanel::auditFinished, &window, [frontier] { frontier->compute(); },
        Qt::SingleShotConnection);
    QObject::connect(
        trainer, &dpx::ui::TrainerPanel::trainingFinished, &window, [&window] { window.auditPanel()->runAudit(); },
        Qt::SingleShotConnection);
    auto* pending = new int(2);  // PLD and step sizes of the knobs bound to the data
    auto arrived = [pending, trainer] {
      if (--*pending == 0) trainer->start();
    };
    QObject::connect(
        trainer->controller(), &dpx::ui::TrainingController::dataReady, &window,
        [&window, arrived] {
          QObject::connect(&window, &dpx::ui::MainWindow::pldApplied, &window, arrived, Qt::SingleShotConnection);
          QObject::connect(&window, &dpx::ui::MainWindow::stepsizeApplied, &window, arrived, Qt::SingleShotConnection);
        },
        Qt::SingleShotConnection);
    // The digits setting of the README: batch 64, 30 epochs, η = 0.45, λ = 1e−3, every mechanism
    // calibrated to ε = 1.
    dpx::ui::ParameterModel* model = window.model();
    model->setKnob(dpx::core::Knob::kM, 64);
    model->setKnob(dpx::core::Knob::kK, 28125);   // 30 epochs of the default n; n then follows the data
    model->setKnob(dpx::core::Knob::kEta, 0.45);  // within 1/(2β) ≈ 0.5: the utility lemmas apply
    model->setKnob(dpx::core::Knob::kLambda, 1e-3);
    dpx::ui::TrainerSettings settings = model->trainer();
    settings.targetEpsilon = 1.0;
    model->setTrainer(settings, QStringLiteral("target ε = 1"));
    trainer->ensureDataLoaded();
    QTimer::singleShot(180000, &app, [] { QApplication::exit(2); });  // never hang a script
  }
  return QApplication::exec();
}
