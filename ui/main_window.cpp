#include "main_window.h"

#include <QLabel>

namespace dpx::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("DP Explorer"));
  auto* label = new QLabel(QStringLiteral("DP Explorer: privacy accountants, charts and the trainer are coming."), this);
  label->setAlignment(Qt::AlignCenter);
  setCentralWidget(label);
  resize(1200, 800);
}

}  // namespace dpx::ui
