// dpexplorer: the DP Explorer desktop application.
//   dpexplorer                       the explorer on its defaults (seed 003 Table 1, row 2)
//   dpexplorer --screenshot DIR      computes everything, trains on builtin:digits, audits, saves
//                                    PNGs of the main views to DIR and exits (scripts/screenshot.sh)
//   dpexplorer --opengl              draws line series through OpenGL (opt-in; raster by default)
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "audit_panel.h"
#include "charts/chart_panel.h"
#include "main_window.h"
#include "trainer_panel.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DP Explorer"));
  QApplication::setOrganizationName(QStringLiteral("DP Explorer"));
  QApplication::setApplicationVersion(QStringLiteral(DPX_VERSION));
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("See the privacy-utility trade-off of differentially private training."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Save screenshots of the main views to DIR and exit."),
                                      QStringLiteral("DIR"));
  parser.addOption(screenshot);
  const QCommandLineOption opengl(QStringLiteral("opengl"),
                                  QStringLiteral("Draw line series through OpenGL (needs a GL context; raster by default)."));
  parser.addOption(opengl);
  parser.process(app);
  dpx::ui::ChartPanel::setOpenGLSeries(parser.isSet(opengl) && !parser.isSet(screenshot));

  dpx::ui::MainWindow window;
  window.show();
  if (parser.isSet(screenshot)) {
    const QString directory = parser.value(screenshot);
    window.resize(1600, 1000);
    auto* pending = new int(2);  // PLD and step sizes
    auto finish = [&window, directory] {
      const bool ok = window.saveScreenshots(directory);
      QApplication::exit(ok ? 0 : 1);
    };
    auto trainThenShoot = [&window, finish] {
      dpx::ui::TrainerPanel* trainer = window.trainerPanel();
      QObject::connect(trainer, &dpx::ui::TrainerPanel::trainingFinished, &window, [&window, finish] {
        QObject::connect(window.auditPanel(), &dpx::ui::AuditPanel::auditFinished, &window,
                         [finish] { QTimer::singleShot(300, finish); });
        window.auditPanel()->runAudit();
      });
      trainer->start();
    };
    auto arrived = [pending, trainThenShoot] {
      if (--*pending == 0) trainThenShoot();
    };
    QObject::connect(&window, &dpx::ui::MainWindow::pldApplied, &window, arrived, Qt::SingleShotConnection);
    QObject::connect(&window, &dpx::ui::MainWindow::stepsizeApplied, &window, arrived, Qt::SingleShotConnection);
    QTimer::singleShot(180000, &app, [] { QApplication::exit(2); });  // never hang a script
  }
  return QApplication::exec();
}
