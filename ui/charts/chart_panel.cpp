#include "charts/chart_panel.h"

#include <QAreaSeries>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QClipboard>
#include <QCursor>
#include <QDateTime>
#include <QFile>
#include <QGraphicsLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QImage>
#include <QJsonArray>
#include <QJsonValue>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QPainter>
#include <QScatterSeries>
#include <QSvgGenerator>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QTextStream>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "charts/chart_legend.h"

namespace dpx::ui {

namespace {

// An export draws Qt's legend inside the image (the on-screen ChartLegend is a widget beside the
// view, not part of the chart's scene) for as long as it renders.
class ExportLegend {
 public:
  ExportLegend(QChart* chart, bool onScreenLegend) : m_chart(chart), m_toggle(onScreenLegend) {
    if (m_toggle) m_chart->legend()->setVisible(true);
  }
  ~ExportLegend() {
    if (m_toggle) m_chart->legend()->setVisible(false);
  }
  ExportLegend(const ExportLegend&) = delete;
  ExportLegend& operator=(const ExportLegend&) = delete;

 private:
  QChart* m_chart;
  bool m_toggle;
};

}  // namespace

QVector<QPointF> sanitizePoints(const QVector<QPointF>& points, bool logX, bool logY, double floor) {
  QVector<QPointF> out;
  out.reserve(points.size());
  for (QPointF p : points) {
    if (!std::isfinite(p.x()) || !std::isfinite(p.y())) continue;
    if (logX && p.x() <= 0.0) continue;  // no place on a log axis
    if (logY && p.y() < floor) p.setY(floor);
    out.push_back(p);
  }
  return out;
}

QVector<QPointF> decimatePoints(const QVector<QPointF>& points, int maxPoints) {
  if (points.size() <= maxPoints || maxPoints < 4) return points;
  const int buckets = maxPoints / 2 - 1;
  QVector<QPointF> out;
  out.reserve(maxPoints);
  out.push_back(points.front());
  const qsizetype inner = points.size() - 2;
  for (int b = 0; b < buckets; ++b) {
    const qsizetype begin = 1 + inner * b / buckets;
    const qsizetype end = 1 + inner * (b + 1) / buckets;
    if (begin >= end) continue;
    qsizetype lo = begin;
    qsizetype hi = begin;
    for (qsizetype i = begin; i < end; ++i) {
      if (points[i].y() < points[lo].y()) lo = i;
      if (points[i].y() > points[hi].y()) hi = i;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  }
  out.push_back(points.back());
  return out;
}

QVector<QPointF> simplifyPolyline(const QVector<QPointF>& points,
                                  const std::function<QPointF(const QPointF&)>& toPixels, double tolerance) {
  if (points.size() <= 2) return points;
  QVector<QPointF> mapped;
  mapped.reserve(points.size());
  for (const QPointF& p : points) mapped.push_back(toPixels(p));
  std::vector<char> keep(static_cast<std::size_t>(points.size()), 0);
  keep.front() = keep.back() = 1;
  std::vector<std::pair<qsizetype, qsizetype>> spans{{0, points.size() - 1}};
  while (!spans.empty()) {
    const auto [first, last] = spans.back();
    spans.pop_back();
    if (last - first < 2) continue;
    const QPointF a = mapped[first];
    const QPointF d = mapped[last] - a;
    const double length = std::hypot(d.x(), d.y());
    double farthest = -1.0;
    qsizetype at = first;
    for (qsizetype i = first + 1; i < last; ++i) {
      const QPointF v = mapped[i] - a;
      // Distance to the chord, or to its start when the chord is a point.
      const double distance =
          length > 0.0 ? std::fabs(d.x() * v.y() - d.y() * v.x()) / length : std::hypot(v.x(), v.y());
      if (distance > farthest) {
        farthest = distance;
        at = i;
      }
    }
    if (farthest > tolerance) {
      keep[static_cast<std::size_t>(at)] = 1;
      spans.push_back({first, at});
      spans.push_back({at, last});
    }
  }
  QVector<QPointF> out;
  for (qsizetype i = 0; i < points.size(); ++i) {
    if (keep[static_cast<std::size_t>(i)]) out.push_back(points[i]);
  }
  return out;
}

ChartPanel::ChartPanel(const QString& title, const QString& xTitle, const QString& yTitle, QWidget* parent)
    : QWidget(parent), m_title(title) {
  buildView(title);
  buildAxes(xTitle, yTitle);
  buildMarker();
  buildContextMenu();
  connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF& plot) {
    fitLogLabels();
    // Lines were simplified for the plot they were laid out in: grown well beyond it, their
    // 0.1 px would show as more. Drawn again once the layout has settled (not from inside it).
    if (m_simplifiedFor.width() > 0.0 &&
        (plot.width() > 1.5 * m_simplifiedFor.width() || plot.height() > 1.5 * m_simplifiedFor.height())) {
      m_simplifiedFor = QSizeF();
      QTimer::singleShot(0, this, [this] {
        for (auto& [id, curve] : m_curves) redraw(curve);
      });
    }
  });
}

void ChartPanel::buildView(const QString& title) {
  m_chart = new QChart();
  m_chart->setTitle(title);
  m_chart->setAnimationOptions(QChart::NoAnimation);
  m_chart->legend()->setAlignment(Qt::AlignBottom);
  m_chart->legend()->setShowToolTips(true);
  m_chart->setMargins(QMargins(4, 4, 4, 4));
  m_view = new QChartView(m_chart, this);
  m_view->setRenderHint(QPainter::Antialiasing);
  m_view->setMinimumSize(240, 170);  // four charts and their legends fit a 1366 × 768 screen
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_viewRow = new QHBoxLayout();
  m_viewRow->setContentsMargins(0, 0, 0, 0);
  m_viewRow->setSpacing(0);
  m_viewRow->addWidget(m_view, 1);
  layout->addLayout(m_viewRow, 1);
  m_message = new QLabel(m_view);
  m_message->setWordWrap(true);
  m_message->setAlignment(Qt::AlignCenter);
  m_message->setStyleSheet(
      QStringLiteral("background: rgba(255, 248, 225, 230); color: #8a4b00; border: 1px solid #e0b060; "
                     "padding: 6px; border-radius: 4px;"));
  m_message->hide();
}

// Both scales of both axes exist from the start; the linear ones are attached until a log axis
// is asked for (setLogAxis swaps them).
void ChartPanel::buildAxes(const QString& xTitle, const QString& yTitle) {
  m_xLinear = new QValueAxis();
  m_xLog = new QLogValueAxis();
  m_yLinear = new QValueAxis();
  m_yLog = new QLogValueAxis();
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_xLinear), static_cast<QAbstractAxis*>(m_xLog)})
    a->setTitleText(xTitle);
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_yLinear), static_cast<QAbstractAxis*>(m_yLog)})
    a->setTitleText(yTitle);
  m_xLog->setLabelFormat(QStringLiteral("%.3g"));  // 1e+04, not an elided "10000"
  m_yLog->setLabelFormat(QStringLiteral("%.3g"));
  m_xLinear->setLabelFormat(QStringLiteral("%g"));
  m_yLinear->setLabelFormat(QStringLiteral("%g"));
  m_xLog->setMinorTickCount(-1);
  m_yLog->setMinorTickCount(-1);
  // Seven decades of "100000" must fit under a 400-pixel plot.
  QFont labels = m_xLinear->labelsFont();
  labels.setPointSizeF(7.5);
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_xLinear), static_cast<QAbstractAxis*>(m_xLog),
                           static_cast<QAbstractAxis*>(m_yLinear), static_cast<QAbstractAxis*>(m_yLog)}) {
    a->setLabelsFont(labels);
  }
  m_chart->addAxis(m_xLinear, Qt::AlignBottom);
  m_chart->addAxis(m_yLinear, Qt::AlignLeft);
}

void ChartPanel::buildMarker() {
  m_marker = new QLineSeries();
  m_marker->setName(QStringLiteral("current"));
  QPen markerPen(QColor(90, 90, 90));
  markerPen.setStyle(Qt::DotLine);
  markerPen.setWidthF(1.5);
  m_marker->setPen(markerPen);
  m_chart->addSeries(m_marker);
  attach(m_marker);
}

ChartPanel::~ChartPanel() {
  // Axes not attached to the chart are not owned by it.
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_xLinear), static_cast<QAbstractAxis*>(m_xLog),
                           static_cast<QAbstractAxis*>(m_yLinear), static_cast<QAbstractAxis*>(m_yLog)}) {
    if (!m_chart->axes().contains(a)) delete a;
  }
}

void ChartPanel::attach(QXYSeries* series) {
  for (QAbstractAxis* a : series->attachedAxes()) series->detachAxis(a);
  series->attachAxis(m_logX ? static_cast<QAbstractAxis*>(m_xLog) : m_xLinear);
  series->attachAxis(m_logY ? static_cast<QAbstractAxis*>(m_yLog) : m_yLinear);
}

void ChartPanel::setAxisTitle(Qt::Orientation orientation, const QString& title) {
  if (orientation == Qt::Horizontal) {
    m_xLinear->setTitleText(title);
    m_xLog->setTitleText(title);
  } else {
    m_yLinear->setTitleText(title);
    m_yLog->setTitleText(title);
  }
}

void ChartPanel::setLogAxis(Qt::Orientation orientation, bool logarithmic) {
  bool& flag = orientation == Qt::Horizontal ? m_logX : m_logY;
  if (flag == logarithmic) return;
  m_shownRanges.reset();  // ranges of the other scale
  QAbstractAxis* oldAxis = orientation == Qt::Horizontal ? (m_logX ? static_cast<QAbstractAxis*>(m_xLog) : m_xLinear)
                                                         : (m_logY ? static_cast<QAbstractAxis*>(m_yLog) : m_yLinear);
  flag = logarithmic;
  QAbstractAxis* newAxis = orientation == Qt::Horizontal ? (m_logX ? static_cast<QAbstractAxis*>(m_xLog) : m_xLinear)
                                                         : (m_logY ? static_cast<QAbstractAxis*>(m_yLog) : m_yLinear);
  // Every series is emptied while its axes change: points meant for a linear axis would reach a
  // log domain on the way (Qt Charts warns on every zero) before they are redrawn for it.
  for (auto& [id, curve] : m_curves) curve.series->clear();
  for (auto& [id, band] : m_bands) {
    band.lower->clear();
    band.upper->clear();
  }
  m_chart->removeAxis(oldAxis);  // detaches it from every series; the chart gives up ownership
  m_chart->addAxis(newAxis, orientation == Qt::Horizontal ? Qt::AlignBottom : Qt::AlignLeft);
  attach(m_marker);
  for (auto& [id, curve] : m_curves) {
    attach(curve.series);
    redraw(curve);
  }
  for (auto& [id, band] : m_bands) {
    for (QAbstractAxis* a : band.area->attachedAxes()) band.area->detachAxis(a);
    band.area->attachAxis(m_logX ? static_cast<QAbstractAxis*>(m_xLog) : m_xLinear);
    band.area->attachAxis(m_logY ? static_cast<QAbstractAxis*>(m_yLog) : m_yLinear);
    redrawBand(band);
  }
  refreshAxes();
}

// On the right, the legend is a ChartLegend beside the view (it scrolls; Qt's own legend clips
// the entries below its height); Qt's legend stays the model of its entries and draws exports.
void ChartPanel::setLegendOnRight(bool right) {
  m_chart->legend()->setAlignment(right ? Qt::AlignRight : Qt::AlignBottom);
  QFont font = m_chart->legend()->font();
  font.setPointSizeF(right ? 8.0 : 9.0);
  m_chart->legend()->setFont(font);
  if (right && !m_legend) {
    m_legend = new ChartLegend(this);
    m_viewRow->addWidget(m_legend);
    connect(m_legend, &ChartLegend::clicked, this, &ChartPanel::toggleCurve);
  }
  if (m_legend) m_legend->setVisible(right);
  m_chart->legend()->setVisible(!right);
  syncLegend();
}

// The entries Qt's legend would show: the curves in the legend (and in focus), in order.
void ChartPanel::syncLegend() {
  if (!m_legend) return;
  std::vector<LegendEntry> entries;
  for (const QString& id : m_order) {
    const Curve& curve = m_curves.at(id);
    if (!curve.style.inLegend || (m_focus && !m_focus->contains(id))) continue;
    LegendEntry e;
    e.id = id;
    e.label = curve.shownLabel.isEmpty() ? curve.label : curve.shownLabel;
    e.tooltip = curve.style.tooltip;
    e.color = drawnColor(curve.style);
    e.pen = curve.style.greyed ? Qt::DashLine : curve.style.pen;
    e.dot = curve.style.scatter;
    e.struck = !curve.series->isVisible();
    entries.push_back(std::move(e));
  }
  m_legend->setEntries(std::move(entries));
}

void ChartPanel::toggleCurve(const QString& id) {
  const auto it = m_curves.find(id);
  if (it == m_curves.end()) return;
  for (QLegendMarker* marker : m_chart->legend()->markers(it->second.series)) {
    toggleFromLegend(id, marker, it->second.series);
    return;
  }
}

bool ChartPanel::isLogAxis(Qt::Orientation orientation) const {
  return orientation == Qt::Horizontal ? m_logX : m_logY;
}

void ChartPanel::setVerticalLimits(std::optional<std::pair<double, double>> limits) {
  m_limitY = limits;
  m_shownRanges.reset();
}

void ChartPanel::setFixedRange(Qt::Orientation orientation, std::optional<std::pair<double, double>> range) {
  (orientation == Qt::Horizontal ? m_fixedX : m_fixedY) = range;
  m_shownRanges.reset();
}

int ChartPanel::maxDrawnPoints() const {
  const int width = static_cast<int>(std::max<qreal>(400.0, m_chart->plotArea().width()));
  return 2 * width;
}

QColor ChartPanel::drawnColor(const CurveStyle& style) {
  const QColor color = style.color.isValid() ? style.color : QColor(30, 100, 200);
  if (!style.greyed) return color;
  QColor grey = QColor::fromHsl(color.hslHue(), std::max(0, color.hslSaturation() / 4), 175);
  grey.setAlpha(color.alpha());
  return grey;
}

void ChartPanel::setFaded(bool faded) {
  if (faded == m_faded) return;
  m_faded = faded;
  for (auto& [id, curve] : m_curves) applyStyle(id, curve);
}

void ChartPanel::applyStyle(const QString& id, Curve& curve) {
  QColor color = drawnColor(curve.style);
  if (m_faded) {
    color = QColor::fromHsl(color.hslHue(), color.hslSaturation() / 3, std::max(color.lightness(), 195), color.alpha());
  }
  const Qt::PenStyle penStyle = curve.style.greyed ? Qt::DashLine : curve.style.pen;
  if (curve.style.scatter) {
    auto* scatter = static_cast<QScatterSeries*>(curve.series);
    scatter->setColor(color);
    scatter->setBorderColor(color.darker(130));
    scatter->setMarkerSize(std::max<qreal>(3.0, curve.style.width));
  } else {
    QPen pen(color);
    pen.setWidthF(curve.style.width);
    pen.setStyle(penStyle);
    curve.series->setPen(pen);
    curve.series->setPointsVisible(curve.style.markers);
  }
  for (QLegendMarker* lm : m_chart->legend()->markers(curve.series)) {
    lm->setVisible(curve.style.inLegend && (!m_focus || m_focus->contains(id)));
  }
}

void ChartPanel::updateLegendEntry(const QString& id, Curve& curve) {
  const bool visible = curve.series->isVisible();
  for (QLegendMarker* lm : m_chart->legend()->markers(curve.series)) {
    // After the series' visibility: QLegend shows a series' marker again when it becomes visible.
    lm->setVisible(curve.style.inLegend && (!m_focus || m_focus->contains(id)));
    QFont font = lm->font();
    font.setStrikeOut(!visible);
    lm->setFont(font);
    lm->setLabelBrush(visible ? QBrush(Qt::black) : QBrush(Qt::gray));
  }
  syncLegend();
}

void ChartPanel::setFocusCurves(std::optional<QSet<QString>> ids) {
  if (ids == m_focus) return;
  if (ids && !m_focus) {
    m_visibleBeforeFocus.clear();
    for (const auto& [id, curve] : m_curves) m_visibleBeforeFocus[id] = curve.series->isVisible();
  }
  m_focus = std::move(ids);
  for (auto& [id, curve] : m_curves) {
    bool visible = !curve.style.hiddenAtFirst;  // a curve that arrived during the focus starts as new ones do
    if (m_focus) {
      visible = m_focus->contains(id);
    } else if (const auto before = m_visibleBeforeFocus.find(id); before != m_visibleBeforeFocus.end()) {
      visible = before->second;
    }
    curve.series->setVisible(visible);
    updateLegendEntry(id, curve);
  }
  for (auto& [id, band] : m_bands) {
    band.area->setVisible(!m_focus || m_focus->contains(id));
    for (QLegendMarker* lm : m_chart->legend()->markers(band.area)) lm->setVisible(false);
  }
  if (!m_focus) m_visibleBeforeFocus.clear();
  refreshAxes();  // fitted to what is shown now
}

// A drawn line deviates from the exact one by at most this many pixels: invisible, and a
// tenth leaves room for the chart to be enlarged (or exported at twice its size).
constexpr double kDrawnLineTolerancePixels = 0.1;

std::function<QPointF(const QPointF&)> ChartPanel::pixelMap() const {
  const QRectF plot = m_chart->plotArea();
  if (!(plot.width() > 0.0 && plot.height() > 0.0)) return {};
  auto axisMap = [](bool logarithmic, double lo, double hi, double pixels) -> std::function<double(double)> {
    if (logarithmic) {
      if (!(lo > 0.0 && hi > lo)) return {};
      const double scale = pixels / std::log(hi / lo);
      return [scale](double v) { return scale * std::log(v); };
    }
    if (!(hi > lo)) return {};
    const double scale = pixels / (hi - lo);
    return [scale](double v) { return scale * v; };
  };
  auto x = m_logX ? axisMap(true, m_xLog->min(), m_xLog->max(), plot.width())
                  : axisMap(false, m_xLinear->min(), m_xLinear->max(), plot.width());
  auto y = m_logY ? axisMap(true, m_yLog->min(), m_yLog->max(), plot.height())
                  : axisMap(false, m_yLinear->min(), m_yLinear->max(), plot.height());
  if (!x || !y) return {};
  return [x, y](const QPointF& p) { return QPointF(x(p.x()), y(p.y())); };
}

void ChartPanel::redraw(Curve& curve) {
  const QVector<QPointF> clean = sanitizePoints(curve.points, m_logX, m_logY, m_logFloor);
  if (curve.style.scatter) {
    curve.series->replace(clean);
    return;
  }
  QVector<QPointF> drawn = decimatePoints(clean, maxDrawnPoints());
  // A line with its points marked shows every point; a plain line only needs its shape, and
  // every segment it loses is one the antialiased stroker need not draw.
  if (const auto toPixels = pixelMap(); toPixels && !curve.style.markers) {
    drawn = simplifyPolyline(drawn, toPixels, kDrawnLineTolerancePixels);
    m_simplifiedFor = m_chart->plotArea().size();
  }
  curve.series->replace(drawn);
}

namespace {

bool g_openGLSeries = false;

// Whether a curve drawn in style a looks as in style b: scatter is not compared (switching it
// makes a new series) nor hiddenAtFirst (it only applies to a new curve).
bool drawnAlike(const CurveStyle& a, const CurveStyle& b) {
  return a.color == b.color && a.pen == b.pen && a.width == b.width && a.greyed == b.greyed && a.tooltip == b.tooltip &&
         a.inLegend == b.inLegend && a.markers == b.markers && a.group == b.group;
}

}  // namespace

void ChartPanel::setOpenGLSeries(bool enabled) { g_openGLSeries = enabled; }
bool ChartPanel::openGLSeries() { return g_openGLSeries; }

void ChartPanel::setCurve(const QString& id, const QString& label, const QVector<QPointF>& points,
                          const CurveStyle& style) {
  auto it = m_curves.find(id);
  if (it != m_curves.end() && it->second.style.scatter != style.scatter) {
    removeCurve(id);
    it = m_curves.end();
  }
  if (it == m_curves.end()) it = addCurve(id, style);
  Curve& curve = it->second;
  QVector<QPointF> clean = sanitizePoints(points, false, false, 0.0);
  if (curve.label == label && drawnAlike(curve.style, style) && curve.points == clean && curve.series->count() > 0) {
    return;  // a knob most curves do not read: no replace(), no repaint
  }
  // A new legend label or style re-lays out the chart (its legend is rich text), a few
  // milliseconds a frame: while values stream in, a label that only carries a number ("ε = 1.2")
  // keeps its old text until they rest, when setDraftDrawing(false) shows the new one.
  const bool fresh = curve.series->name().isEmpty();
  const bool relabelled = curve.shownLabel != label || fresh;
  const bool restyled = !drawnAlike(curve.style, style);
  curve.label = label;
  curve.points = std::move(clean);
  curve.style = style;
  if (relabelled && m_draft && !fresh) {
    m_pendingLabels.insert(id);
  } else if (relabelled) {
    showLabel(curve);
  }
  if (fresh || restyled) applyStyle(id, curve);
  if (fresh && m_focus) updateLegendEntry(id, curve);  // a variant that starts struck out is shown
  if (m_deferRedraws) {
    m_pendingRedraws.insert(id);
  } else {
    redraw(curve);
  }
}

// A new, empty series on the current axes, with its hover tooltip and legend toggle; it starts
// as visible as the rest of its group, or hidden if asked to.
std::map<QString, ChartPanel::Curve>::iterator ChartPanel::addCurve(const QString& id, const CurveStyle& style) {
  Curve curve;
  curve.series = style.scatter ? static_cast<QXYSeries*>(new QScatterSeries()) : new QLineSeries();
  if (g_openGLSeries && !style.scatter) curve.series->setUseOpenGL(true);
  m_chart->addSeries(curve.series);
  attach(curve.series);
  QXYSeries* series = curve.series;
  connect(series, &QXYSeries::hovered, this,
          [this, id](const QPointF& point, bool state) { showHoverTip(id, point, state); });
  for (QLegendMarker* marker : m_chart->legend()->markers(series)) {
    connect(marker, &QLegendMarker::clicked, this,
            [this, id, marker, series] { toggleFromLegend(id, marker, series); });
  }
  const auto groupLeader = std::find_if(m_curves.begin(), m_curves.end(), [&](const auto& entry) {
    return !style.group.isEmpty() && entry.second.style.group == style.group;
  });
  if (groupLeader != m_curves.end()) {
    series->setVisible(groupLeader->second.series->isVisible());  // joins its group as it is
  } else if (style.hiddenAtFirst) {
    series->setVisible(false);
    for (QLegendMarker* marker : m_chart->legend()->markers(series)) {
      QFont font = marker->font();
      font.setStrikeOut(true);
      marker->setFont(font);
      marker->setLabelBrush(QBrush(Qt::gray));
    }
  }
  if (m_focus) series->setVisible(m_focus->contains(id));
  const auto added = m_curves.emplace(id, std::move(curve)).first;
  m_order.push_back(id);
  return added;
}

void ChartPanel::showHoverTip(const QString& id, const QPointF& point, bool state) {
  if (!state) {
    QToolTip::hideText();
    return;
  }
  const auto found = m_curves.find(id);
  if (found == m_curves.end()) return;
  const Curve& hovered = found->second;
  QString text = QStringLiteral("<b>%1</b><br>x = %2, y = %3")
                     .arg(hovered.label.toHtmlEscaped())
                     .arg(point.x(), 0, 'g', 6)
                     .arg(point.y(), 0, 'g', 6);
  if (!hovered.style.tooltip.isEmpty()) text += QStringLiteral("<br>") + hovered.style.tooltip.toHtmlEscaped();
  if (!hovered.pointNotes.isEmpty() && hovered.pointNotes.size() == hovered.points.size()) {
    text += QStringLiteral("<br>") + hovered.pointNotes[nearestPoint(hovered, point.x())].toHtmlEscaped();
  }
  QToolTip::showText(QCursor::pos(), text);
}

// The index of the curve's point nearest to x (log distance on a log axis).
qsizetype ChartPanel::nearestPoint(const Curve& curve, double x) const {
  qsizetype best = 0;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (qsizetype i = 0; i < curve.points.size(); ++i) {
    const double a = curve.points[i].x();
    const double distance = m_logX && a > 0.0 && x > 0.0 ? std::fabs(std::log(a / x)) : std::fabs(a - x);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = i;
    }
  }
  return best;
}

// A click on a legend entry shows or hides the curve and the rest of its group; the entry stays,
// struck out and grey while hidden.
void ChartPanel::toggleFromLegend(const QString& id, QLegendMarker* marker, QXYSeries* series) {
  const bool visible = !series->isVisible();
  series->setVisible(visible);
  marker->setVisible(true);
  QFont font = marker->font();
  font.setStrikeOut(!visible);
  marker->setFont(font);
  marker->setLabelBrush(visible ? QBrush(Qt::black) : QBrush(Qt::gray));
  const auto self = m_curves.find(id);
  if (self == m_curves.end() || self->second.style.group.isEmpty()) return;
  for (auto& [otherId, other] : m_curves) {
    if (otherId == id || other.style.group != self->second.style.group) continue;
    if (!m_focus || m_focus->contains(otherId)) other.series->setVisible(visible);
  }
  syncLegend();
}

void ChartPanel::setPointNotes(const QString& id, const QStringList& notes) {
  const auto it = m_curves.find(id);
  if (it != m_curves.end()) it->second.pointNotes = notes;
}

void ChartPanel::setBand(const QString& id, const QVector<QPointF>& lower, const QVector<QPointF>& upper,
                         const QColor& color, bool sameX) {
  auto it = m_bands.find(id);
  if (it == m_bands.end()) {
    Band band;
    band.lower = new QLineSeries(this);  // the area series does not own its edges
    band.upper = new QLineSeries(this);
    band.area = new QAreaSeries(band.upper, band.lower);
    m_chart->addSeries(band.area);
    band.area->attachAxis(m_logX ? static_cast<QAbstractAxis*>(m_xLog) : m_xLinear);
    band.area->attachAxis(m_logY ? static_cast<QAbstractAxis*>(m_yLog) : m_yLinear);
    band.area->setVisible(!m_focus || m_focus->contains(id));
    for (QLegendMarker* lm : m_chart->legend()->markers(band.area)) lm->setVisible(false);
    it = m_bands.emplace(id, band).first;
  }
  Band& band = it->second;
  band.sameX = sameX;
  band.lowerPoints = sanitizePoints(lower, false, false, 0.0);
  band.upperPoints = sanitizePoints(upper, false, false, 0.0);
  QColor fill = color;
  fill.setAlpha(50);
  band.area->setBrush(fill);
  QPen edge(color.lighter(140));
  edge.setWidthF(0.8);
  band.area->setPen(edge);
  redrawBand(band);
}

void ChartPanel::redrawBand(Band& band) {
  // Both edges need the same points: drop an x where either side has no finite value.
  const QVector<QPointF> lo = sanitizePoints(band.lowerPoints, m_logX, m_logY, m_logFloor);
  const QVector<QPointF> hi = sanitizePoints(band.upperPoints, m_logX, m_logY, m_logFloor);
  if (!band.sameX) {
    band.lower->replace(lo);
    band.upper->replace(hi);
    return;
  }
  QVector<QPointF> keptLo;
  QVector<QPointF> keptHi;
  for (const QPointF& a : lo) {
    for (const QPointF& b : hi) {
      if (a.x() == b.x()) {
        keptLo.push_back(a);
        keptHi.push_back(b);
        break;
      }
    }
  }
  band.lower->replace(keptLo);
  band.upper->replace(keptHi);
}

void ChartPanel::removeBand(const QString& id) {
  auto it = m_bands.find(id);
  if (it == m_bands.end()) return;
  m_chart->removeSeries(it->second.area);
  delete it->second.area;
  delete it->second.lower;
  delete it->second.upper;
  m_bands.erase(it);
}

QStringList ChartPanel::bandIds() const {
  QStringList ids;
  for (const auto& [id, band] : m_bands) ids << id;
  return ids;
}

void ChartPanel::removeCurve(const QString& id) {
  auto it = m_curves.find(id);
  if (it == m_curves.end()) return;
  m_chart->removeSeries(it->second.series);
  delete it->second.series;
  m_curves.erase(it);
  m_order.removeAll(id);
  m_pendingRedraws.remove(id);
  m_pendingLabels.remove(id);
  syncLegend();
}

void ChartPanel::removeCurvesExcept(const QSet<QString>& keep) {
  const QStringList ids = m_order;
  for (const QString& id : ids) {
    if (!keep.contains(id)) removeCurve(id);
  }
}

QStringList ChartPanel::curveIds() const { return m_order; }

QVector<QPointF> ChartPanel::curvePoints(const QString& id) const {
  const auto it = m_curves.find(id);
  return it == m_curves.end() ? QVector<QPointF>() : it->second.points;
}

int ChartPanel::drawnPointCount(const QString& id) const {
  const auto it = m_curves.find(id);
  return it == m_curves.end() ? 0 : static_cast<int>(it->second.series->count());
}

bool ChartPanel::curveGreyed(const QString& id) const {
  const auto it = m_curves.find(id);
  return it != m_curves.end() && it->second.style.greyed;
}

bool ChartPanel::inLegend(const QString& id) const {
  const auto it = m_curves.find(id);
  return it != m_curves.end() && it->second.style.inLegend && (!m_focus || m_focus->contains(id));
}

QString ChartPanel::curveLabel(const QString& id) const {
  const auto it = m_curves.find(id);
  return it == m_curves.end() ? QString() : it->second.label;
}

bool ChartPanel::curveVisible(const QString& id) const {
  const auto it = m_curves.find(id);
  return it != m_curves.end() && it->second.series->isVisible();
}

void ChartPanel::setMarker(std::optional<double> x, const QString& label) {
  m_markerX = x;
  m_marker->setName(label.isEmpty() ? QStringLiteral("current") : label);
}

void ChartPanel::showLabel(Curve& curve) {
  curve.shownLabel = curve.label;
  curve.series->setName(curve.label.toHtmlEscaped());  // rich text: "η < 1/β" must survive
}

void ChartPanel::setDraftDrawing(bool draft) {
  if (draft == m_draft) return;
  m_draft = draft;
  if (!draft) {
    for (const QString& id : std::as_const(m_pendingLabels)) {
      if (const auto it = m_curves.find(id); it != m_curves.end()) showLabel(it->second);
    }
    m_pendingLabels.clear();
  }
  if (!draft && m_shownRanges) refreshAxes();             // the axes held during the drafts fit the data again
  m_view->setRenderHint(QPainter::Antialiasing, !draft);  // repaints the view
}

void ChartPanel::setMessage(const QString& text) {
  m_message->setText(text);
  m_message->setVisible(!text.isEmpty());
  if (!text.isEmpty()) {
    m_message->setFixedWidth(std::max(200, m_view->width() - 80));
    m_message->adjustSize();
    m_message->move((m_view->width() - m_message->width()) / 2, 40);
    m_message->raise();
  }
}

QString ChartPanel::message() const { return m_message->isVisible() ? m_message->text() : QString(); }

void ChartPanel::refreshAxes() {
  AxisRanges r = dataRanges();
  padRanges(r);
  // While values stream in, the axes only grow: a re-ranged axis lays out and shapes every tick
  // label again, a large share of a frame. The settled view fits the data again.
  if (m_draft && m_shownRanges) {
    const AxisRanges& shown = *m_shownRanges;
    r = {std::min(r.xMin, shown.xMin), std::max(r.xMax, shown.xMax), std::min(r.yMin, shown.yMin),
         std::max(r.yMax, shown.yMax)};
  }
  const bool moved = !m_shownRanges || m_shownRanges->xMin != r.xMin || m_shownRanges->xMax != r.xMax ||
                     m_shownRanges->yMin != r.yMin || m_shownRanges->yMax != r.yMax;
  m_shownRanges = r;
  // Moved axes change every line's pixels, so every line is drawn again (its simplification
  // depends on them). Emptied first, the lines cost nothing to lay out on the new axes and are
  // laid out once, below.
  if (moved) {
    for (auto& [id, curve] : m_curves) {
      curve.series->clear();
      m_pendingRedraws.insert(id);
    }
  }
  applyRanges(r);
  fitLogLabels();
  for (const QString& id : std::as_const(m_pendingRedraws)) redraw(m_curves.at(id));
  m_pendingRedraws.clear();
  m_deferRedraws = false;
  // Nice numbers may widen a linear axis beyond the data: the line spans the axis as drawn.
  if (m_logY) {
    placeMarker(r.yMin, r.yMax);
  } else {
    placeMarker(m_yLinear->min(), m_yLinear->max());
  }
  syncLegend();
}

// The extent of the visible curves and of every band (values under the log floor count as the
// floor); a default frame when there is nothing to show.
ChartPanel::AxisRanges ChartPanel::dataRanges() const {
  AxisRanges r;
  r.xMin = std::numeric_limits<double>::infinity();
  r.xMax = -r.xMin;
  r.yMin = r.xMin;
  r.yMax = -r.xMin;
  auto include = [&](const QVector<QPointF>& points) {
    for (const QPointF& p : points) {
      if (m_logX && p.x() <= 0.0) continue;
      const double y = m_logY ? std::max(p.y(), m_logFloor) : p.y();
      r.xMin = std::min(r.xMin, p.x());
      r.xMax = std::max(r.xMax, p.x());
      r.yMin = std::min(r.yMin, y);
      r.yMax = std::max(r.yMax, y);
    }
  };
  for (const auto& [id, curve] : m_curves) {
    if (curve.series->isVisible() && curve.style.fitsAxes) include(curve.points);
  }
  for (const auto& [id, band] : m_bands) {
    if (!band.area->isVisible()) continue;
    include(band.lowerPoints);
    include(band.upperPoints);
  }
  if (!std::isfinite(r.xMin)) {
    r.xMin = m_logX ? 1.0 : 0.0;
    r.xMax = m_logX ? 10.0 : 1.0;
    r.yMin = m_logY ? 0.1 : 0.0;
    r.yMax = m_logY ? 10.0 : 1.0;
  }
  return r;
}

namespace {

// The nearest value of 1, 2, 5 × 10^k at or above (up) or at or below v > 0.
double niceLogStep(double v, bool up) {
  if (!(v > 0.0) || !std::isfinite(v)) return v;
  const double decade = std::pow(10.0, std::floor(std::log10(v)));
  const double mantissa = v / decade;
  constexpr double kSteps[] = {1.0, 2.0, 5.0, 10.0};
  if (up) {
    for (double step : kSteps) {
      if (mantissa <= step * (1.0 + 1e-12)) return step * decade;
    }
    return 10.0 * decade;
  }
  for (int i = 3; i >= 0; --i) {
    if (mantissa >= kSteps[i] * (1.0 - 1e-12)) return kSteps[i] * decade;
  }
  return decade / 2.0;
}

}  // namespace

// Fixed ranges replace the data's; an empty range gets a width; a log x axis widens to whole
// decades; a free y axis gets a margin (on a log axis, out to a 1-2-5 value).
void ChartPanel::padRanges(AxisRanges& r) const {
  if (m_fixedX) std::tie(r.xMin, r.xMax) = *m_fixedX;
  if (m_fixedY) std::tie(r.yMin, r.yMax) = *m_fixedY;
  if (!(r.xMax > r.xMin)) r.xMax = r.xMin + (m_logX ? r.xMin : 1.0);
  if (!(r.yMax > r.yMin)) {
    r.yMax = m_logY ? r.yMin * 10.0 : r.yMin + std::max(1.0, std::fabs(r.yMin));
  }
  if (m_logX && !m_fixedX) {
    // Whole decades: the end labels sit on ticks instead of being cut at the plot's edge.
    r.xMin = std::pow(10.0, std::floor(std::log10(r.xMin) + 1e-9));
    r.xMax = std::pow(10.0, std::ceil(std::log10(r.xMax) - 1e-9));
  }
  if (!m_fixedY) {
    if (m_logY) {
      // Out to the next 1-2-5 value: the range moves only when the data crosses one, so a change
      // that stays within does not re-range the axis (and lay out its labels and every series
      // again).
      r.yMin = niceLogStep(r.yMin / 1.5, false);
      r.yMax = niceLogStep(r.yMax * 1.5, true);
    } else {
      const double pad = 0.05 * (r.yMax - r.yMin);
      r.yMax += pad;
      // Data that is never negative (ε spent, accuracy) gets no negative axis from the padding.
      if (r.yMin != 0.0) r.yMin = r.yMin >= 0.0 ? std::max(0.0, r.yMin - pad) : r.yMin - pad;
    }
    if (m_limitY) {
      r.yMin = std::max(r.yMin, m_limitY->first);
      r.yMax = std::min(r.yMax, m_limitY->second);
    }
  }
}

void ChartPanel::applyRanges(const AxisRanges& r) {
  if (m_logX) {
    m_xLog->setRange(r.xMin, r.xMax);
  } else {
    m_xLinear->setRange(r.xMin, r.xMax);
    if (!m_fixedX) m_xLinear->applyNiceNumbers();  // ticks at 1, 2, 5 × 10^k, not 5.75
  }
  if (m_logY) {
    m_yLog->setRange(r.yMin, r.yMax);
  } else {
    m_yLinear->setRange(r.yMin, r.yMax);
    m_yLinear->applyNiceNumbers();  // a fixed [0, 1] gets ticks at 0.2, not 0.333333
  }
}

// The vertical line at the x knob's value, from the bottom to the top of the y range.
void ChartPanel::placeMarker(double yMin, double yMax) {
  if (m_markerX && (!m_logX || *m_markerX > 0.0)) {
    m_marker->replace(QList<QPointF>{{*m_markerX, yMin}, {*m_markerX, yMax}});
    m_marker->setVisible(true);
  } else {
    m_marker->clear();
    m_marker->setVisible(false);
  }
  // After the series' visibility: QLegend shows a series' marker again when it becomes visible.
  for (QLegendMarker* lm : m_chart->legend()->markers(m_marker)) lm->setVisible(false);
}

// A log axis labels every power of its base. Eight decades under a 250-pixel plot leave ~30
// pixels per "1e+04", which Qt elides to "1e+…": label every second or third decade instead, so
// each label has room. Re-run when the plot is resized.
void ChartPanel::fitLogLabels() {
  auto baseFor = [](double lo, double hi, double pixels, double pixelsPerLabel) {
    if (!(lo > 0.0) || !(hi > lo) || !(pixels > 0.0)) return 10.0;
    const double decades = std::log10(hi / lo);
    const double labels = std::max(1.0, pixels / pixelsPerLabel);
    return std::pow(10.0, std::max(1.0, std::ceil(decades / labels)));
  };
  const QRectF plot = m_chart->plotArea();
  const double xBase = baseFor(m_xLog->min(), m_xLog->max(), plot.width(), 52.0);
  const double yBase = baseFor(m_yLog->min(), m_yLog->max(), plot.height(), 22.0);
  // Minor ticks: 2…9 within a decade for base 10; for a wider base, one per skipped decade
  // (Qt's automatic minor ticks would draw base − 2 of them, a grey wash).
  auto apply = [](QLogValueAxis* axis, double base) {
    if (axis->base() == base) return;
    axis->setBase(base);
    axis->setMinorTickCount(base == 10.0 ? -1 : static_cast<int>(std::lround(std::log10(base))) - 1);
  };
  apply(m_xLog, xBase);
  apply(m_yLog, yBase);
}

namespace {

// Exports lay the chart out at 1/kExportScale of the image and draw it scaled up: its fonts,
// legend and lines keep the proportions they have on screen instead of shrinking to a corner
// of a large plot.
constexpr double kExportScale = 1.5;
constexpr double kCaptionMargin = 10.0;  // logical pixels around the caption

}  // namespace

// The chart is laid out again at the target's logical size (not the view's, whose shape may be
// another: a wide panel drawn into 1200 × 800 kept its aspect ratio and left the image half
// empty), drawn, and given back its on-screen size.
void ChartPanel::paintChart(QPainter* painter, const QRectF& target) const {
  const QSizeF onScreen = m_chart->size();
  const QSizeF logical = target.size() / kExportScale;
  m_chart->resize(logical);
  if (QGraphicsLayout* layout = m_chart->layout()) layout->activate();
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing);
  m_chart->scene()->render(painter, target, QRectF(m_chart->scenePos(), logical), Qt::IgnoreAspectRatio);
  painter->restore();
  m_chart->resize(onScreen);
  if (QGraphicsLayout* layout = m_chart->layout()) layout->activate();
}

QImage ChartPanel::render(const QSize& size) const {
  QImage image(size, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter painter(&image);
  const ExportLegend legend(m_chart, m_legend != nullptr);
  paintChart(&painter, QRectF(QPointF(0, 0), QSizeF(size)));
  painter.end();
  return image;
}

ExportContext ChartPanel::exportContext() const { return m_contextProvider ? m_contextProvider() : ExportContext{}; }

QStringList ChartPanel::contextLines() const {
  const ExportContext context = exportContext();
  QStringList lines;
  lines << QStringLiteral("DP Explorer %1 — %2").arg(QStringLiteral(DPX_VERSION), m_title);
  lines << QStringLiteral("exported %1").arg(QDateTime::currentDateTime().toString(Qt::ISODate));
  if (!context.knobs.isEmpty()) lines << context.knobs.split(QLatin1Char('\n'));
  if (!context.dataset.isEmpty()) lines << QStringLiteral("data: ") + context.dataset;
  if (!context.note.isEmpty()) lines << context.note;
  if (!context.command.isEmpty()) lines << context.command.split(QLatin1Char('\n'));
  return lines;
}

bool ChartPanel::copyCommand() const {
  const QString command = exportContext().command;
  if (command.isEmpty()) return false;
  QGuiApplication::clipboard()->setText(command);
  return true;
}

void ChartPanel::buildContextMenu() {
  m_view->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
    QMenu menu(this);
    menu.addAction(QStringLiteral("Export (PNG, SVG, CSV or JSON)…"), this, [this] { Q_EMIT exportRequested(this); });
    QAction* copy = menu.addAction(QStringLiteral("Copy as dpx command"), this, [this] { copyCommand(); });
    const QString command = exportContext().command;
    copy->setEnabled(!command.isEmpty());
    copy->setToolTip(command);
    menu.exec(m_view->mapToGlobal(at));
  });
}

// Title, knobs, data and note, app and date, then the command in a fixed-width font; the text
// wraps at the image's width (a long command breaks between flags, or anywhere if it must).
void ChartPanel::prepareCaption(QTextDocument& caption, double width) const {
  const ExportContext context = exportContext();
  const auto html = [](const QString& text) {
    return text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
  };
  QString body = QStringLiteral("<p style='margin:0'><b>%1</b></p>").arg(html(m_title));
  if (!context.knobs.isEmpty()) body += QStringLiteral("<p style='margin:0'>%1</p>").arg(html(context.knobs));
  if (!context.dataset.isEmpty()) {
    body += QStringLiteral("<p style='margin:0'>data: %1</p>").arg(html(context.dataset));
  }
  if (!context.note.isEmpty()) {
    body += QStringLiteral("<p style='margin:0; color:#8a4b00'>%1</p>").arg(html(context.note));
  }
  body +=
      QStringLiteral("<p style='margin:0; color:#555555'>DP Explorer %1 · exported %2</p>")
          .arg(QStringLiteral(DPX_VERSION), QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
  if (!context.command.isEmpty()) {
    body += QStringLiteral("<p style='margin-top:4px; font-family:monospace'>%1</p>").arg(html(context.command));
  }
  QFont font = QGuiApplication::font();
  font.setPointSizeF(9.0);
  caption.setDefaultFont(font);
  QTextOption option = caption.defaultTextOption();
  option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  caption.setDefaultTextOption(option);
  caption.setDocumentMargin(kCaptionMargin);
  caption.setHtml(body);
  caption.setTextWidth(width);
}

void ChartPanel::paintExport(QPainter* painter, const QSize& chartSize, QTextDocument& caption) const {
  paintChart(painter, QRectF(QPointF(0, 0), QSizeF(chartSize)));
  painter->save();
  painter->translate(0, chartSize.height());
  painter->scale(kExportScale, kExportScale);
  painter->setPen(QPen(QColor(200, 200, 200), 1.0));
  painter->drawLine(QPointF(kCaptionMargin, 0), QPointF(chartSize.width() / kExportScale - kCaptionMargin, 0));
  caption.drawContents(painter);
  painter->restore();
}

void ChartPanel::fitAxesForExport() const {
  if (!m_draft) return;
  // The draft's axes only grow while values stream in (refreshAxes); an export taken mid-drag
  // shows the data's own ranges. The drag goes on growing from these.
  auto* self = const_cast<ChartPanel*>(this);
  self->m_draft = false;
  self->refreshAxes();
  self->m_draft = true;
}

QImage ChartPanel::exportImage(const QSize& size) const {
  fitAxesForExport();
  QTextDocument caption;
  prepareCaption(caption, size.width() / kExportScale);
  const int captionHeight = static_cast<int>(std::ceil(caption.size().height() * kExportScale));
  QImage image(size.width(), size.height() + captionHeight, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  const ExportLegend legend(m_chart, m_legend != nullptr);
  paintExport(&painter, size, caption);
  painter.end();
  return image;
}

QByteArray ChartPanel::pngBytes(const QSize& size) const {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  render(size).save(&buffer, "PNG");
  return bytes;
}

void ChartPanel::setHeading(const QString& heading) {
  if (m_chart->title() != heading) m_chart->setTitle(heading);
}

QRect ChartPanel::plotRect() const {
  return m_view->mapFromScene(m_chart->mapToScene(m_chart->plotArea())).boundingRect();
}

QImage ChartPanel::grabView() const { return m_view->grab().toImage(); }

bool ChartPanel::exportPng(const QString& path, const QSize& size) const { return exportImage(size).save(path, "PNG"); }

bool ChartPanel::exportSvg(const QString& path, const QSize& size) const {
  fitAxesForExport();
  QTextDocument caption;
  prepareCaption(caption, size.width() / kExportScale);
  const QSize full(size.width(), size.height() + static_cast<int>(std::ceil(caption.size().height() * kExportScale)));
  QSvgGenerator generator;
  generator.setFileName(path);
  generator.setSize(full);
  generator.setViewBox(QRect(QPoint(0, 0), full));
  generator.setTitle(m_title);
  generator.setDescription(contextLines().join(QLatin1Char('\n')));
  QPainter painter;
  if (!painter.begin(&generator)) return false;
  const ExportLegend legend(m_chart, m_legend != nullptr);
  paintExport(&painter, size, caption);
  painter.end();
  return QFile::exists(path) && QFile(path).size() > 0;
}

QString ChartPanel::curvesCsv() const {
  QString out;
  QTextStream stream(&out);
  for (const QString& line : contextLines()) stream << "# " << line << '\n';
  stream << "curve,x,y\n";
  for (const QString& id : m_order) {
    const Curve& curve = m_curves.at(id);
    QString name = curve.label;
    name.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    for (const QPointF& p : curve.points) {
      stream << '"' << name << '"' << ',' << QString::number(p.x(), 'g', 10) << ',' << QString::number(p.y(), 'g', 10)
             << '\n';
    }
  }
  return out;
}

QJsonObject ChartPanel::curvesJson() const {
  QJsonObject root;
  root.insert(QStringLiteral("title"), m_title);
  // Axis titles may be rich text ("ε<sub>α</sub>"); a file gets their plain text.
  const auto plain = [](const QString& title) { return QTextDocumentFragment::fromHtml(title).toPlainText(); };
  root.insert(QStringLiteral("x_axis"), plain(m_logX ? m_xLog->titleText() : m_xLinear->titleText()));
  root.insert(QStringLiteral("y_axis"), plain(m_logY ? m_yLog->titleText() : m_yLinear->titleText()));
  QJsonArray curves;
  for (const QString& id : m_order) {
    const Curve& curve = m_curves.at(id);
    QJsonArray xs;
    QJsonArray ys;
    for (const QPointF& p : curve.points) {
      xs.append(p.x());
      ys.append(p.y());
    }
    QJsonObject c;
    c.insert(QStringLiteral("id"), id);
    c.insert(QStringLiteral("label"), curve.label);
    c.insert(QStringLiteral("x"), xs);
    c.insert(QStringLiteral("y"), ys);
    c.insert(QStringLiteral("greyed"), curve.style.greyed);
    if (!curve.style.tooltip.isEmpty()) c.insert(QStringLiteral("note"), curve.style.tooltip);
    curves.append(c);
  }
  root.insert(QStringLiteral("curves"), curves);
  const ExportContext context = exportContext();
  QJsonObject about;
  about.insert(QStringLiteral("app"), QStringLiteral("DP Explorer"));
  about.insert(QStringLiteral("version"), QStringLiteral(DPX_VERSION));
  about.insert(QStringLiteral("exported"), QDateTime::currentDateTime().toString(Qt::ISODate));
  about.insert(QStringLiteral("knobs"), context.knobs);
  if (!context.dataset.isEmpty()) about.insert(QStringLiteral("data"), context.dataset);
  if (!context.note.isEmpty()) about.insert(QStringLiteral("note"), context.note);
  about.insert(QStringLiteral("command"), context.command);
  root.insert(QStringLiteral("context"), about);
  return root;
}

}  // namespace dpx::ui
