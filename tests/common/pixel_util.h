// Looking at what a chart really drew: find the pixels of a curve's colour in a rendered image,
// and check that an exported picture, drawing or document is what it claims to be (not just a
// file of some size).
#pragma once

#include <QColor>
#include <QFile>
#include <QImage>
#include <QRect>
#include <QSet>
#include <QString>
#include <QXmlStreamReader>
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace dpx::test {

// Pixels within `tolerance` (per RGB channel) of `color` inside `area`: their count and mean
// row. Antialiasing blends a line's edges with the background; its core keeps the pen colour.
struct ColorPixels {
  int count = 0;
  double meanRow = 0.0;
  double meanColumn = 0.0;
};

inline ColorPixels findColor(const QImage& image, const QRect& area, const QColor& color, int tolerance = 24) {
  ColorPixels found;
  const QRect box = area.intersected(image.rect());
  double rows = 0.0;
  double columns = 0.0;
  for (int y = box.top(); y <= box.bottom(); ++y) {
    for (int x = box.left(); x <= box.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - color.red()) <= tolerance && std::abs(c.green() - color.green()) <= tolerance &&
          std::abs(c.blue() - color.blue()) <= tolerance) {
        ++found.count;
        rows += y;
        columns += x;
      }
    }
  }
  if (found.count > 0) {
    found.meanRow = rows / found.count;
    found.meanColumn = columns / found.count;
  }
  return found;
}

// How far a curve of one colour moved vertically between two renderings: for every column where
// it is drawn in both, the change of its mean row there; the median over those columns (rows
// grow downwards, so a curve that moves up gives a negative value). Columns where the curve
// leaves the plot in one image only are ignored, so clipping at an axis end does not count.
inline std::optional<double> medianColumnShift(const QImage& before, const QImage& after, const QRect& area,
                                               const QColor& color, int tolerance = 10, int minColumns = 20) {
  auto profile = [&](const QImage& image) {
    std::vector<double> rows(static_cast<std::size_t>(image.width()), -1.0);
    const QRect box = area.intersected(image.rect());
    for (int x = box.left(); x <= box.right(); ++x) {
      double sum = 0.0;
      int count = 0;
      for (int y = box.top(); y <= box.bottom(); ++y) {
        const QColor c = image.pixelColor(x, y);
        if (std::abs(c.red() - color.red()) <= tolerance && std::abs(c.green() - color.green()) <= tolerance &&
            std::abs(c.blue() - color.blue()) <= tolerance) {
          sum += y;
          ++count;
        }
      }
      if (count > 0) rows[static_cast<std::size_t>(x)] = sum / count;
    }
    return rows;
  };
  const std::vector<double> a = profile(before);
  const std::vector<double> b = profile(after);
  std::vector<double> shifts;
  for (std::size_t x = 0; x < std::min(a.size(), b.size()); ++x) {
    if (a[x] >= 0.0 && b[x] >= 0.0) shifts.push_back(b[x] - a[x]);
  }
  if (static_cast<int>(shifts.size()) < minColumns) return std::nullopt;
  std::nth_element(shifts.begin(), shifts.begin() + static_cast<std::ptrdiff_t>(shifts.size() / 2), shifts.end());
  return shifts[shifts.size() / 2];
}

// Distinct colours in an image (capped): a blank or single-colour export has one or two.
inline int distinctColors(const QImage& image, int cap = 64) {
  QSet<QRgb> seen;
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2) {
      seen.insert(image.pixel(x, y));
      if (seen.size() >= cap) return cap;
    }
  }
  return static_cast<int>(seen.size());
}

// Share of pixels that are not (near) white.
inline double inkShare(const QImage& image) {
  qint64 ink = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (c.red() < 235 || c.green() < 235 || c.blue() < 235) ++ink;
    }
  }
  return static_cast<double>(ink) / std::max<qint64>(1, qint64(image.width()) * image.height());
}

// An SVG that parses as XML, has an <svg> root and at least `minShapes` drawn shapes
// (path/polyline/line/rect/text elements).
inline bool svgHasShapes(const QString& path, int minShapes, QString* why = nullptr) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (why) *why = QStringLiteral("cannot open");
    return false;
  }
  QXmlStreamReader xml(&file);
  bool root = false;
  int shapes = 0;
  while (!xml.atEnd()) {
    if (xml.readNext() != QXmlStreamReader::StartElement) continue;
    const auto name = xml.name();
    if (name == QLatin1String("svg")) root = true;
    if (name == QLatin1String("path") || name == QLatin1String("polyline") || name == QLatin1String("line") ||
        name == QLatin1String("rect") || name == QLatin1String("text")) {
      ++shapes;
    }
  }
  if (xml.hasError()) {
    if (why) *why = xml.errorString();
    return false;
  }
  if (why) *why = QStringLiteral("root %1, %2 shapes").arg(root).arg(shapes);
  return root && shapes >= minShapes;
}

// A PDF file: the header, an end-of-file marker and at least `minPages` page objects.
inline bool pdfHasPages(const QString& path, int minPages) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return false;
  const QByteArray bytes = file.readAll();
  if (!bytes.startsWith("%PDF-") || !bytes.trimmed().endsWith("%%EOF")) return false;
  int pages = 0;
  for (qsizetype at = bytes.indexOf("/Type /Page"); at >= 0; at = bytes.indexOf("/Type /Page", at + 1)) {
    // "/Type /Pages" is the page tree, not a page.
    if (bytes.mid(at, 12) != "/Type /Pages") ++pages;
  }
  return pages >= minPages;
}

}  // namespace dpx::test
