#include "user_guide_dialog.h"

#include <QDialogButtonBox>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "help_resources.h"

namespace dpx::ui {

UserGuideDialog::UserGuideDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(QStringLiteral("DP Explorer user guide"));
  m_browser = new QTextBrowser;
  m_browser->setObjectName(QStringLiteral("userGuide"));
  m_browser->setOpenLinks(false);  // the guide has no links to follow: the explorer stays offline
  m_browser->setMarkdown(userGuideMarkdown());
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_browser, 1);
  layout->addWidget(buttons);
  resize(780, 720);
}

}  // namespace dpx::ui
