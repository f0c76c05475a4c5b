// dpexplorer: the DP Explorer desktop application.
#include <QApplication>

#include "main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DP Explorer"));
  QApplication::setOrganizationName(QStringLiteral("DP Explorer"));
  dpx::ui::MainWindow window;
  window.show();
  return QApplication::exec();
}
