// The documents and the icon compiled into the explorer for its Help menu and its windows
// (ui/help.qrc): the user guide and the list of references (docs/), and the app's SVG icon.
#pragma once

#include <QIcon>
#include <QString>

namespace dpx::ui {

// docs/USER_GUIDE.md and docs/REFERENCES.md as built in (Markdown).
QString userGuideMarkdown();
QString referencesMarkdown();

// The icon of the desktop entry (resources/linux/), rendered at the sizes window managers and
// task bars ask for. Needs a QGuiApplication.
QIcon applicationIcon();

}  // namespace dpx::ui
