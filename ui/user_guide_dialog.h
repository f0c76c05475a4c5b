// Help → Contents: the user guide (docs/USER_GUIDE.md, compiled in), shown offline as formatted
// Markdown.
#pragma once

#include <QDialog>

class QTextBrowser;

namespace dpx::ui {

class UserGuideDialog : public QDialog {
  Q_OBJECT
 public:
  explicit UserGuideDialog(QWidget* parent = nullptr);

  QTextBrowser* browser() const { return m_browser; }

 private:
  QTextBrowser* m_browser = nullptr;
};

}  // namespace dpx::ui
