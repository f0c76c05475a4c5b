// A chart of named curves on Qt Charts, built for live updates (QT_NOTES.md): axes are created
// once and re-ranged; a curve is updated with one replace() call; points are sanitised (nothing
// non-finite, a floor on log axes) and decimated to about twice the plot width; animations are
// off; the legend toggles curves; hovering a curve shows its tooltip (for a greyed accountant,
// why its assumptions fail). Exports: PNG, SVG, CSV and JSON of the curves as computed, each
// with the context its owner supplies (knobs, data, the dpx command that recomputes it).
// Qt Charts types stay inside ui/charts/.
#pragma once

#include <QByteArray>
#include <QColor>
#include <QImage>
#include <QJsonObject>
#include <QPointF>
#include <QSet>
#include <QSizeF>
#include <QString>
#include <QVector>
#include <QWidget>
#include <functional>
#include <map>
#include <optional>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QAbstractAxis;
class QValueAxis;
class QLogValueAxis;
class QXYSeries;
class QLineSeries;
class QAreaSeries;
class QLegendMarker;
class QLabel;
class QToolButton;
class QHBoxLayout;
class QPainter;
class QTextDocument;
QT_END_NAMESPACE

namespace dpx::ui {

class ChartLegend;

struct CurveStyle {
  QColor color;
  Qt::PenStyle pen = Qt::SolidLine;
  qreal width = 2.0;
  bool scatter = false;  // points instead of a line
  bool markers = false;  // a line with its points marked
  bool greyed = false;   // assumptions fail: drawn light and dashed
  QString tooltip;       // shown on hover
  bool inLegend = true;
  bool hiddenAtFirst = false;  // starts toggled off in the legend (click to show)
  // Curves of one group show and hide together when any of their legend entries is clicked
  // (e.g. an accountant's f_{ε,δ} with its f_α, which has no legend entry of its own).
  QString group;
  // Counts when the axes are fitted to the data. A ghost (a pinned configuration's curve) does not:
  // the axes follow what the knobs show now.
  bool fitsAxes = true;
};

// Removes non-finite points; on a log axis, clamps values at or below zero to `floor`.
QVector<QPointF> sanitizePoints(const QVector<QPointF>& points, bool logX, bool logY, double floor);
// Keeps the first and last point and, per bucket of x, the points with the smallest and largest
// y, so a curve of any length draws like the full one at `maxPoints` points.
QVector<QPointF> decimatePoints(const QVector<QPointF>& points, int maxPoints);
// The points of a polyline that keep it within `tolerance` of itself once mapped by `toPixels`
// (Douglas–Peucker on the mapped positions, which must be finite; the ends are always kept). A smooth curve on
// log-log axes is nearly straight over most of its length: a few dozen of its 500 points draw it.
QVector<QPointF> simplifyPolyline(const QVector<QPointF>& points,
                                  const std::function<QPointF(const QPointF&)>& toPixels, double tolerance);

// Where an exported chart's numbers come from. The chart knows only its curves: the view that
// owns the knobs supplies this (ChartPanel::setExportContext).
struct ExportContext {
  QString knobs;    // one or two lines: "n = 60000 · m = 256 · σ = 1.1 · …"
  QString dataset;  // the data a training or audit chart trained on; empty for pure accounting
  QString note;     // e.g. that the result is of knobs changed since
  QString command;  // the dpx command line(s) that recompute the chart, one per line
};

class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  ChartPanel(const QString& title, const QString& xTitle, const QString& yTitle, QWidget* parent = nullptr);
  ~ChartPanel() override;

  // Opt-in (dpexplorer --opengl): draw the line series of charts created afterwards through
  // OpenGL. Off by default — the raster engine draws everywhere, offscreen and in exports, and
  // an OpenGL series without a context is not drawn at all (QT_NOTES.md).
  static void setOpenGLSeries(bool enabled);
  static bool openGLSeries();

  void setLogAxis(Qt::Orientation orientation, bool logarithmic);
  bool isLogAxis(Qt::Orientation orientation) const;
  void setAxisTitle(Qt::Orientation orientation, const QString& title);
  // Fixed range on an axis (nullopt: fit the data).
  void setFixedRange(Qt::Orientation orientation, std::optional<std::pair<double, double>> range);
  // A fitted vertical axis never reaches beyond these (accuracy: [0, 1]); nullopt: no limits.
  void setVerticalLimits(std::optional<std::pair<double, double>> limits);
  void setLogFloor(double floor) { m_logFloor = floor; }
  // Legend on the right (many curves) or at the bottom (few).
  void setLegendOnRight(bool right);

  void setCurve(const QString& id, const QString& label, const QVector<QPointF>& points, const CurveStyle& style);
  // Per-point notes shown when the pointer is over that point of the curve (same length as its
  // points; e.g. each frontier point's σ and seeds).
  void setPointNotes(const QString& id, const QStringList& notes);
  // A shaded band between two curves (a min–max spread); not in the legend: the curve it
  // surrounds is. With sameX the edges share their x values and an x missing on either side is
  // dropped from both; without, each edge is drawn as given (a confidence region whose corners
  // move in x and y).
  void setBand(const QString& id, const QVector<QPointF>& lower, const QVector<QPointF>& upper, const QColor& color,
               bool sameX = true);
  void removeBand(const QString& id);
  QStringList bandIds() const;
  void removeCurve(const QString& id);
  void removeCurvesExcept(const QSet<QString>& keep);
  QStringList curveIds() const;
  QVector<QPointF> curvePoints(const QString& id) const;  // as given (sanitised, not decimated)
  int drawnPointCount(const QString& id) const;           // as drawn
  bool curveVisible(const QString& id) const;
  bool curveGreyed(const QString& id) const;
  // Whether the curve has a legend entry now (its style asks for one and a focus does not hide
  // it), and the label it shows.
  bool inLegend(const QString& id) const;
  QString curveLabel(const QString& id) const;
  // Focus (a lesson): only the curves and bands named are shown, the rest hidden with their legend
  // entries, including curves that arrive later (the charts re-set theirs on every knob change).
  // nullopt leaves it: every curve gets back the visibility it had (the user's legend toggles).
  void setFocusCurves(std::optional<QSet<QString>> ids);
  const std::optional<QSet<QString>>& focusCurves() const { return m_focus; }
  std::optional<double> marker() const { return m_markerX; }

  // A vertical line marking the current value of the x knob.
  void setMarker(std::optional<double> x, const QString& label = {});
  // Every curve drawn light and desaturated (a result of knobs that have moved on), or as styled.
  void setFaded(bool faded);
  bool faded() const { return m_faded; }
  // A message over the chart (invalid parameters, computation in progress), empty to hide.
  void setMessage(const QString& text);
  // Draft drawing (no antialiasing: a chart repaints ~4× faster, and the axes only grow, so their
  // labels are not laid out again) while values stream in during a drag; switching back fits
  // the axes to the data and repaints the chart smooth.
  void setDraftDrawing(bool draft);
  bool draftDrawing() const { return m_draft; }
  QString message() const;

  // Re-ranges the axes to the visible curves; call after a batch of setCurve().
  void refreshAxes();
  // The curves set from now until the next refreshAxes() are drawn by it, once, on the axes it
  // chooses. A re-ranged axis lays out every series again: a series replaced before it would be
  // laid out twice, for its new points on the old axes and again on the new ones.
  void deferRedraws() { m_deferRedraws = true; }

  // `size` is the chart's part of the image; the caption (title, knobs, data, app, date, the dpx
  // command) is added below it, as tall as its wrapped text needs.
  bool exportPng(const QString& path, const QSize& size = QSize(1200, 800)) const;
  QImage exportImage(const QSize& size = QSize(1200, 800)) const;
  // The chart alone, laid out for `size` (scaled so its text reads as on screen) and filling it.
  QImage render(const QSize& size) const;
  QByteArray pngBytes(const QSize& size = QSize(900, 600)) const;
  bool exportSvg(const QString& path, const QSize& size = QSize(1200, 800)) const;
  // The curves after `# ` lines of context (contextLines()); a reader that skips them gets
  // the same table as before.
  QString curvesCsv() const;
  QJsonObject curvesJson() const;  // with a "context" object of the same fields
  void setExportContext(std::function<ExportContext()> provider) { m_contextProvider = std::move(provider); }
  ExportContext exportContext() const;
  // App and version, date, title, knobs, data, note and command, one item per line.
  QStringList contextLines() const;
  // Puts the dpx command on the clipboard; false when the chart has none.
  bool copyCommand() const;
  QString title() const { return m_title; }
  // The title drawn over the chart (title() stays the chart's name in menus and exports).
  void setHeading(const QString& heading);

  QChartView* view() const { return m_view; }
  // The legend beside the chart when it is on the right (null otherwise).
  ChartLegend* legend() const { return m_legend; }
  // The plot area (inside the axes) in view() coordinates: where the curves are drawn.
  QRect plotRect() const;
  // What is on screen now, in view() coordinates (tests look at the pixels).
  QImage grabView() const;

 Q_SIGNALS:
  // "Export…" in the chart's context menu: the owner asks where to (PNG, SVG, CSV or JSON).
  void exportRequested(ChartPanel* panel);

 private:
  void syncLegend();
  void toggleCurve(const QString& id);
  static QColor drawnColor(const CurveStyle& style);
  struct Curve {
    QXYSeries* series = nullptr;
    QString label;
    QString shownLabel;  // in the legend: the label, or while values stream in the one before
    QVector<QPointF> points;
    CurveStyle style;
    QStringList pointNotes;
  };
  struct Band {
    QAreaSeries* area = nullptr;
    QLineSeries* lower = nullptr;
    QLineSeries* upper = nullptr;
    QVector<QPointF> lowerPoints;
    QVector<QPointF> upperPoints;
    bool sameX = true;
  };
  // The axes' ranges of one refreshAxes().
  struct AxisRanges {
    double xMin = 0.0;
    double xMax = 0.0;
    double yMin = 0.0;
    double yMax = 0.0;
  };
  void buildView(const QString& title);
  void buildAxes(const QString& xTitle, const QString& yTitle);
  void buildMarker();
  void buildContextMenu();
  void paintChart(QPainter* painter, const QRectF& target) const;
  void paintExport(QPainter* painter, const QSize& chartSize, QTextDocument& caption) const;
  void prepareCaption(QTextDocument& caption, double width) const;
  std::map<QString, Curve>::iterator addCurve(const QString& id, const CurveStyle& style);
  void showHoverTip(const QString& id, const QPointF& point, bool state);
  qsizetype nearestPoint(const Curve& curve, double x) const;
  void toggleFromLegend(const QString& id, QLegendMarker* marker, QXYSeries* series);
  AxisRanges dataRanges() const;
  void fitAxesForExport() const;
  void padRanges(AxisRanges& ranges) const;
  void applyRanges(const AxisRanges& ranges);
  void placeMarker(double yMin, double yMax);
  void redrawBand(Band& band);
  void fitLogLabels();
  void attach(QXYSeries* series);
  void applyStyle(const QString& id, Curve& curve);
  // The legend entry as the curve is: shown unless kept out of the legend or out of focus, struck
  // out while the curve is hidden.
  void updateLegendEntry(const QString& id, Curve& curve);
  void showLabel(Curve& curve);
  void redraw(Curve& curve);
  // Data to pixels as the axes map it now (offsets dropped); empty before the chart is laid out.
  std::function<QPointF(const QPointF&)> pixelMap() const;
  int maxDrawnPoints() const;
  QString m_title;
  QChart* m_chart;
  QChartView* m_view;
  QHBoxLayout* m_viewRow = nullptr;
  std::optional<std::pair<double, double>> m_limitY;
  bool m_faded = false;  // the view and, on the right, its legend
  ChartLegend* m_legend = nullptr;
  QLabel* m_message;
  QValueAxis* m_xLinear;
  QLogValueAxis* m_xLog;
  QValueAxis* m_yLinear;
  QLogValueAxis* m_yLog;
  bool m_logX = false;
  bool m_logY = false;
  double m_logFloor = 1e-7;
  bool m_draft = false;
  std::optional<std::pair<double, double>> m_fixedX;
  std::optional<std::pair<double, double>> m_fixedY;
  std::map<QString, Curve> m_curves;
  std::map<QString, Band> m_bands;
  QStringList m_order;  // insertion order, for exports
  QLineSeries* m_marker;
  std::optional<double> m_markerX;
  std::optional<AxisRanges> m_shownRanges;  // what the axes show since the last refreshAxes()
  bool m_deferRedraws = false;
  QSet<QString> m_pendingRedraws;  // curves set since deferRedraws(), not yet drawn
  QSet<QString> m_pendingLabels;   // legend labels held while values stream in
  QSizeF m_simplifiedFor;          // the plot size the drawn lines were simplified for
  std::optional<QSet<QString>> m_focus;
  std::map<QString, bool> m_visibleBeforeFocus;  // the user's visibility, restored when focus ends
  std::function<ExportContext()> m_contextProvider;
};

}  // namespace dpx::ui
