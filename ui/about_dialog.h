// Help → About: DP Explorer's version, the versions of the libraries it runs on (Qt, and those
// of the core: Eigen, oneTBB, Boost, FFTW, zlib) and the papers it implements, read from the
// built-in docs/REFERENCES.md so the list cannot drift from it.
#pragma once

#include <QDialog>

class QLabel;
class QTextBrowser;

namespace dpx::ui {

class AboutDialog : public QDialog {
  Q_OBJECT
 public:
  explicit AboutDialog(QWidget* parent = nullptr);

  // "0.2.3": project()'s VERSION in CMakeLists.txt.
  static QString version();

  QLabel* titleLabel() const { return m_title; }
  QTextBrowser* details() const { return m_details; }

 private:
  QLabel* m_title = nullptr;
  QTextBrowser* m_details = nullptr;
};

}  // namespace dpx::ui
