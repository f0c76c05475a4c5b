// render_icon: renders the app's SVG icon to a square PNG of one size, at build time, for the
// hicolor icon theme (resources/linux/packaging.cmake). Usage: render_icon SVG SIZE PNG
#include <QByteArray>
#include <QImage>
#include <QPainter>
#include <QString>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char** argv) {
  // No QGuiApplication: the icon has no text, and painting paths on a QImage and writing a PNG
  // need no platform plugin, so the build needs no display.
  if (argc != 4) {
    std::fprintf(stderr, "usage: render_icon SVG SIZE PNG\n");
    return 2;
  }
  bool ok = false;
  const int size = QByteArray(argv[2]).toInt(&ok);
  if (!ok || size < 1 || size > 1024) {
    std::fprintf(stderr, "render_icon: SIZE %s: must be a whole number in [1, 1024]\n", argv[2]);
    return 2;
  }
  QSvgRenderer renderer(QString::fromLocal8Bit(argv[1]));
  if (!renderer.isValid()) {
    std::fprintf(stderr, "render_icon: %s: not a valid SVG file\n", argv[1]);
    return 1;
  }
  QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  renderer.render(&painter);
  painter.end();
  if (!image.save(QString::fromLocal8Bit(argv[3]), "PNG")) {
    std::fprintf(stderr, "render_icon: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
