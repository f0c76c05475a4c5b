#include "help_resources.h"

#include <QFile>
#include <QImage>
#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>
#include <mutex>

// Q_INIT_RESOURCE must be expanded outside any namespace (it declares the rcc-generated
// initialiser), and dpx_ui is a static library, so nothing registers :/help unless we do.
static void initHelpResources() { Q_INIT_RESOURCE(help); }

namespace dpx::ui {
namespace {

QString readResource(const QString& path) {
  static std::once_flag once;
  std::call_once(once, initHelpResources);
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};  // cannot happen: the file is compiled in
  return QString::fromUtf8(file.readAll());
}

}  // namespace

QString userGuideMarkdown() { return readResource(QStringLiteral(":/help/USER_GUIDE.md")); }

QString referencesMarkdown() { return readResource(QStringLiteral(":/help/REFERENCES.md")); }

// Rendered here rather than loaded as an SVG icon: QIcon reads SVG files through Qt's icon-engine
// plugin, which an installation may lack; QSvgRenderer is linked in.
QIcon applicationIcon() {
  QSvgRenderer renderer(readResource(QStringLiteral(":/icons/dpexplorer.svg")).toUtf8());
  QIcon icon;
  for (const int size : {16, 24, 32, 48, 64, 128, 256}) {
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    renderer.render(&painter);
    painter.end();
    icon.addPixmap(QPixmap::fromImage(image));
  }
  return icon;
}

}  // namespace dpx::ui
