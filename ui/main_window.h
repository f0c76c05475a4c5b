// The DP Explorer main window.
#pragma once

#include <QMainWindow>

namespace dpx::ui {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
};

}  // namespace dpx::ui
