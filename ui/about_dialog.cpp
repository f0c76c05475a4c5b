#include "about_dialog.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QStringList>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtGlobal>

#include "common/library_versions.h"
#include "help_resources.h"

namespace dpx::ui {
namespace {

// The "Libraries" table: Qt as it runs and as it was built against (a distribution upgrade
// changes the first), then the core's libraries.
QString librariesHtml() {
  QString rows = QStringLiteral("<tr><td>Qt</td><td>%1 (built with %2)</td></tr>")
                     .arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
  for (const core::LibraryVersion& library : core::libraryVersions()) {
    rows += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>")
                .arg(QString::fromStdString(library.name).toHtmlEscaped(),
                     QString::fromStdString(library.version).toHtmlEscaped());
  }
  return QStringLiteral("<h3>Libraries</h3><table cellspacing='0' cellpadding='2'>%1</table>").arg(rows);
}

// The papers of docs/REFERENCES.md: under each "## " heading, every table row whose reference
// has an italic title (the rows of software and the heading rows have none), as "cited as" in
// bold, then authors, title and venue.
QString papersHtml(const QString& markdown) {
  static const QRegularExpression italic(QStringLiteral("\\*([^*]+)\\*"));
  QString html = QStringLiteral("<h3>Papers</h3>");
  QString section;
  QString items;
  const auto flush = [&] {
    if (!items.isEmpty()) html += QStringLiteral("<h4>%1</h4><ul>%2</ul>").arg(section.toHtmlEscaped(), items);
    items.clear();
  };
  for (const QString& line : markdown.split(QLatin1Char('\n'))) {
    if (line.startsWith(QStringLiteral("## "))) {
      flush();
      section = line.mid(3).trimmed();
      continue;
    }
    if (!line.startsWith(QStringLiteral("| "))) continue;
    const QStringList cells = line.split(QLatin1Char('|'));
    if (cells.size() < 4) continue;  // "", cited as, reference, used for, ""
    const QString citedAs = cells.at(1).trimmed();
    const QString reference = cells.at(2).trimmed();
    if (!italic.match(reference).hasMatch()) continue;
    QString text = reference.toHtmlEscaped();
    text.replace(italic, QStringLiteral("<i>\\1</i>"));
    items += QStringLiteral("<li><b>%1</b> — %2</li>").arg(citedAs.toHtmlEscaped(), text);
  }
  flush();
  return html;
}

}  // namespace

QString AboutDialog::version() { return QStringLiteral(DPX_VERSION); }

AboutDialog::AboutDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(QStringLiteral("About DP Explorer"));
  auto* icon = new QLabel;
  icon->setPixmap(applicationIcon().pixmap(64, 64));
  icon->setAlignment(Qt::AlignTop);
  m_title = new QLabel(QStringLiteral("<span style='font-size:150%'><b>DP Explorer %1</b></span><br>"
                                      "See the privacy–utility trade-off of differentially private training.<br>"
                                      "The user guide: Help → Contents. The command line: <tt>dpx --help</tt>, "
                                      "<tt>man dpx</tt>.")
                           .arg(version()));
  m_title->setObjectName(QStringLiteral("aboutTitle"));
  m_title->setWordWrap(true);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* header = new QHBoxLayout;
  header->addWidget(icon);
  header->addWidget(m_title, 1);

  m_details = new QTextBrowser;
  m_details->setObjectName(QStringLiteral("aboutDetails"));
  m_details->setOpenLinks(false);  // the references are text: the explorer stays offline
  m_details->setHtml(librariesHtml() + papersHtml(referencesMarkdown()));

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(header);
  layout->addWidget(m_details, 1);
  layout->addWidget(buttons);
  resize(720, 620);
}

}  // namespace dpx::ui
