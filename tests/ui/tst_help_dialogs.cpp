// Help → Contents and Help → About: the user guide is the built-in docs/USER_GUIDE.md with its
// headings; About names the version, every library with its version and the papers of
// docs/REFERENCES.md by authors, year and title; both open from the main window's Help menu and
// show their text unclipped.
#include <QAction>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <memory>

#include "about_dialog.h"
#include "main_window.h"
#include "user_guide_dialog.h"

using namespace dpx::ui;

namespace {

QString sourceFile(const QString& relative) {
  QFile file(QStringLiteral(DPX_SOURCE_DIR "/") + relative);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QAction* helpAction(MainWindow& window, const QString& text) {
  for (QAction* menu : window.menuBar()->actions()) {
    if (menu->text() != QStringLiteral("&Help")) continue;
    for (QAction* action : menu->menu()->actions()) {
      if (action->text() == text) return action;
    }
  }
  return nullptr;
}

// The text fits: no horizontal scroll bar, so no line of the document is cut at the right edge.
bool fitsHorizontally(QTextBrowser* browser) {
  return !browser->horizontalScrollBar()->isVisible() || browser->horizontalScrollBar()->maximum() == 0;
}

}  // namespace

class TestHelpDialogs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aboutNamesTheVersionAndTheLibraries() {
    AboutDialog about;
    about.show();
    QVERIFY(QTest::qWaitForWindowExposed(&about));
    QCOMPARE(AboutDialog::version(), QStringLiteral(DPX_EXPECTED_VERSION));
    QVERIFY(about.titleLabel()->text().contains(QStringLiteral("DP Explorer " DPX_EXPECTED_VERSION)));
    const QString text = about.details()->toPlainText();
    // Each library with a version number after its name.
    for (const char* library : {"Qt", "Eigen", "oneTBB", "Boost", "FFTW", "zlib"}) {
      const QRegularExpression named(QStringLiteral("(^|\\n)%1\\s+\\d+\\.\\d+").arg(QLatin1String(library)));
      QVERIFY2(named.match(text).hasMatch(), library);
    }
    QVERIFY(text.contains(QStringLiteral("built with " QT_VERSION_STR)));
    QVERIFY(fitsHorizontally(about.details()));
  }

  // Every paper of docs/REFERENCES.md's tables, by how it is cited and its title; the five source
  // papers among them. Never a seed number or a SPEC section.
  void aboutListsThePapersOfTheReferences() {
    AboutDialog about;
    const QString text = about.details()->toPlainText();
    const QString references = sourceFile(QStringLiteral("docs/REFERENCES.md"));
    QVERIFY(!references.isEmpty());
    static const QRegularExpression row(QStringLiteral("^\\| ([^|]+) \\| [^|*]*\\*([^*|]+)\\*"),
                                        QRegularExpression::MultilineOption);
    int papers = 0;
    for (auto it = row.globalMatch(references); it.hasNext(); ++papers) {
      const QRegularExpressionMatch m = it.next();
      QVERIFY2(text.contains(m.captured(1).trimmed()), qPrintable(m.captured(1)));
      QVERIFY2(text.contains(m.captured(2).trimmed()), qPrintable(m.captured(2)));
    }
    QVERIFY2(papers >= 30, qPrintable(QString::number(papers)));
    for (const char* source :
         {"Ryffel, Bach & Pointcheval 2022",
          "Differential Privacy Guarantees for Stochastic Gradient Langevin Dynamics", "Kong & Ribero 2024",
          "Chen, Lee & Kifer 2019", "Bu, Dong, Long & Su 2020", "Li, Chen, Liu & Carin 2019",
          "On Connecting Stochastic Gradient MCMC and Differential Privacy"}) {
      QVERIFY2(text.contains(QString::fromUtf8(source)), source);
    }
    QVERIFY(!text.contains(QStringLiteral("seed"), Qt::CaseInsensitive));
    QVERIFY(!text.contains(QStringLiteral("SPEC")));
  }

  // The guide is docs/USER_GUIDE.md as formatted Markdown: each of its headings is a heading of
  // the shown document, not a line starting with '#'.
  void userGuideShowsTheGuideWithItsHeadings() {
    UserGuideDialog guide;
    guide.show();
    QVERIFY(QTest::qWaitForWindowExposed(&guide));
    const QString markdown = sourceFile(QStringLiteral("docs/USER_GUIDE.md"));
    static const QRegularExpression heading(QStringLiteral("^#+ (.+)$"), QRegularExpression::MultilineOption);
    QStringList expected;
    for (auto it = heading.globalMatch(markdown); it.hasNext();) expected << it.next().captured(1);
    QVERIFY(expected.contains(QStringLiteral("Privacy tab")));
    QVERIFY(expected.contains(QStringLiteral("The command line")));
    QStringList shown;
    for (QTextBlock block = guide.browser()->document()->begin(); block.isValid(); block = block.next()) {
      if (block.blockFormat().headingLevel() > 0) shown << block.text();
    }
    QCOMPARE(shown, expected);
    QVERIFY(!guide.browser()->toPlainText().contains(QStringLiteral("## ")));
    QVERIFY(fitsHorizontally(guide.browser()));
  }

  // Help → Contents (F1) and Help → About open the dialogs beside the window; a second trigger
  // raises the same dialog instead of opening another.
  void helpMenuOpensBothDialogsOnce() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("test.ini")), QSettings::IniFormat);
    MainWindow window(&settings);
    QAction* contents = helpAction(window, QStringLiteral("&Contents"));
    QAction* about = helpAction(window, QStringLiteral("&About DP Explorer"));
    QVERIFY(contents);
    QVERIFY(about);
    QCOMPARE(contents->shortcut(), QKeySequence(QKeySequence::HelpContents));
    contents->trigger();
    contents->trigger();
    about->trigger();
    QCOMPARE(window.findChildren<UserGuideDialog*>().size(), 1);
    QCOMPARE(window.findChildren<AboutDialog*>().size(), 1);
    QVERIFY(window.findChild<UserGuideDialog*>()->isVisible());
    QVERIFY(window.findChild<AboutDialog*>()->isVisible());
    QVERIFY(!window.findChild<AboutDialog*>()->isModal());
  }
};

QTEST_MAIN(TestHelpDialogs)
#include "tst_help_dialogs.moc"
