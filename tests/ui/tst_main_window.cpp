// The main window opens offscreen.
#include <QTest>

#include "main_window.h"

class TestMainWindow : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void opens() {
    dpx::ui::MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!w.windowTitle().isEmpty());
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
