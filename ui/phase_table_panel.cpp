#include "phase_table_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <set>

#include "common/format.h"
#include "io/dp_event.h"
#include "io/json_writer.h"
#include "knob_widget.h"

namespace dpx::ui {

using core::accounting::GaussianPhase;
using core::accounting::Phase;
using core::accounting::RandomAllocationPhase;

namespace {

constexpr int kKindColumn = 0;
constexpr int kQColumn = 1;
constexpr int kSigmaColumn = 2;
constexpr int kCountColumn = 3;  // steps of a Poisson phase, epochs of an allocation
constexpr int kStepsPerEpochColumn = 4;
constexpr int kSelectionsColumn = 5;
constexpr int kPoissonKind = 0;
constexpr int kAllocationKind = 1;

QString number(double v, int digits = 10) { return QString::fromStdString(core::formatNumber(v, digits)); }
QString text(const std::string& s) { return QString::fromStdString(s); }

// The composition of one table (on the worker): the PLD bracket and the RDP ε at δ.
PhasedRunResult compute(std::vector<Phase> phases, double delta, core::accounting::Conversion conversion,
                        const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) {
  PhasedRunResult r;
  r.phases = std::move(phases);
  r.delta = delta;
  r.conversion = conversion;
  core::accounting::EpsilonOptions options;
  options.conversion = conversion;
  if (auto rdp = core::accounting::phasedRdpEpsilon(r.phases, delta, options)) {
    r.rdpEpsilon = rdp->epsilon;
    r.rdpAlpha = rdp->alpha;
  } else {
    r.rdpMessage = text(rdp.status().message());
  }
  options.exact.cancel = &cancel;
  options.exact.progress = progress;
  if (auto pld = core::accounting::phasedPldEpsilon(r.phases, delta, options.exact)) {
    r.pldUpper = pld->epsilonUpper;
    r.pldLower = pld->epsilonLower;
  } else {
    r.pldMessage = text(pld.status().message());
  }
  return r;
}

}  // namespace

PhaseTablePanel::PhaseTablePanel(ParameterModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(QStringLiteral("A run in phases: each row is a stretch of Poisson-subsampled Gaussian "
                                          "steps (q, σ, steps) or epochs of random allocation (σ, each record in k "
                                          "of t steps, epochs). The phases compose; ε is at the knobs' δ."),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  m_table = new QTableWidget(0, 6, this);
  m_table->setHorizontalHeaderLabels({QStringLiteral("kind"), QStringLiteral("q"), QStringLiteral("σ"),
                                      QStringLiteral("count"), QStringLiteral("t"), QStringLiteral("k")});
  const QString tips[] = {
      QStringLiteral("Poisson: every record joins each step's batch with probability q; allocation: each record in "
                     "k of the t steps of every epoch (balls in bins)"),
      QStringLiteral("sampling probability q in (0, 1] (1: every record in every step); Poisson phases"),
      QStringLiteral("noise multiplier σ > 0 (noise std / clipping norm)"),
      QStringLiteral("count: steps ≥ 1 of a Poisson phase, epochs ≥ 1 of an allocation"),
      QStringLiteral("steps per epoch t ≥ 1; allocations"),
      QStringLiteral("steps per epoch a record is in, 1 ≤ k ≤ t; allocations"),
  };
  for (int c = 0; c < m_table->columnCount(); ++c) m_table->horizontalHeaderItem(c)->setToolTip(tips[c]);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(kKindColumn, QHeaderView::ResizeToContents);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  layout->addWidget(m_table);
  auto* buttons = new QHBoxLayout;
  auto* add = new QPushButton(QStringLiteral("Add phase"), this);
  m_remove = new QPushButton(QStringLiteral("Remove selected"), this);
  auto* knobs = new QPushButton(QStringLiteral("From knobs"), this);
  knobs->setToolTip(QStringLiteral("One phase: q = m/n, σ and K of the knobs"));
  buttons->addWidget(add);
  buttons->addWidget(m_remove);
  buttons->addWidget(knobs);
  buttons->addStretch();
  layout->addLayout(buttons);
  m_pld = new QLabel(this);
  m_rdp = new QLabel(this);
  m_status = new QLabel(this);
  for (QLabel* l : {m_pld, m_rdp, m_status}) {
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(l);
  }
  layout->addStretch();
  connect(add, &QPushButton::clicked, this, &PhaseTablePanel::addRow);
  connect(m_remove, &QPushButton::clicked, this, &PhaseTablePanel::removeSelectedRows);
  connect(knobs, &QPushButton::clicked, this, &PhaseTablePanel::fromKnobs);
  connect(m_table, &QTableWidget::itemChanged, this, [this] {
    if (!m_filling) recompute();
  });
  // δ and the conversion are the knobs'.
  connect(m_model, &ParameterModel::paramsChanged, this, [this] {
    if (m_result && m_result->delta != m_model->params().delta) recompute();
  });
  connect(m_model, &ParameterModel::viewChanged, this, [this] {
    if (m_result && m_result->conversion != m_model->conversion()) recompute();
  });
  connect(&m_job, &BackgroundJob::progressed, this,
          [this](double f) { m_status->setText(QStringLiteral("composing… %1 %").arg(static_cast<int>(f * 100.0))); });
  fromKnobs();
}

void PhaseTablePanel::setRow(int row, const Phase& phase) {
  const bool allocation = std::holds_alternative<RandomAllocationPhase>(phase);
  // The row's kind box is kept (a row converted from inside its signal must not delete it).
  auto* kind = qobject_cast<QComboBox*>(m_table->cellWidget(row, kKindColumn));
  if (!kind) {
    kind = new QComboBox(m_table);
    kind->addItems({QStringLiteral("Poisson"), QStringLiteral("allocation")});
    connect(kind, &QComboBox::currentIndexChanged, this, [this, kind](int index) {
      for (int r = 0; r < m_table->rowCount(); ++r) {
        if (m_table->cellWidget(r, kKindColumn) == kind) {
          convertRow(r, index);
          return;
        }
      }
    });
    m_table->setCellWidget(row, kKindColumn, kind);
  }
  {
    const QSignalBlocker quiet(kind);
    kind->setCurrentIndex(allocation ? kAllocationKind : kPoissonKind);
  }
  // The shortest text that reads back to the same double: a table read back is the same run.
  auto cell = [&](int column, const QString& value) { m_table->setItem(row, column, new QTableWidgetItem(value)); };
  auto unused = [&](int column) {
    auto* item = new QTableWidgetItem;
    item->setFlags(Qt::NoItemFlags);
    m_table->setItem(row, column, item);
  };
  if (allocation) {
    const auto& a = std::get<RandomAllocationPhase>(phase);
    unused(kQColumn);
    cell(kSigmaColumn, text(core::roundTripNumber(a.noiseMultiplier)));
    cell(kCountColumn, QString::number(a.epochs));
    cell(kStepsPerEpochColumn, QString::number(a.stepsPerEpoch));
    cell(kSelectionsColumn, QString::number(a.selections));
  } else {
    const auto& g = std::get<GaussianPhase>(phase);
    cell(kQColumn, text(core::roundTripNumber(g.samplingProbability)));
    cell(kSigmaColumn, text(core::roundTripNumber(g.noiseMultiplier)));
    cell(kCountColumn, QString::number(g.steps));
    unused(kStepsPerEpochColumn);
    unused(kSelectionsColumn);
  }
}

// A row switched to the other kind takes the knobs' run of that kind, its σ kept where it reads.
void PhaseTablePanel::convertRow(int row, int kind) {
  const core::Params& p = m_model->params();
  const std::optional<double> sigma =
      parseTypedNumber(m_table->item(row, kSigmaColumn) ? m_table->item(row, kSigmaColumn)->text() : QString());
  const double noise = sigma.value_or(p.sigma);
  m_filling = true;
  if (kind == kAllocationKind) {
    const auto epochs = static_cast<std::int64_t>(std::ceil(core::nominalEpochs(p) - 1e-9));
    setRow(row, RandomAllocationPhase{noise, p.allocationSteps(), p.allocationSelections(),
                                      std::max<std::int64_t>(1, epochs)});
  } else {
    setRow(row, GaussianPhase{p.q(), noise, p.K});
  }
  m_filling = false;
  recompute();
}

void PhaseTablePanel::setPhases(const std::vector<Phase>& phases) {
  m_filling = true;
  m_table->setRowCount(static_cast<int>(phases.size()));
  for (std::size_t i = 0; i < phases.size(); ++i) setRow(static_cast<int>(i), phases[i]);
  m_filling = false;
  recompute();
}

core::Result<std::vector<Phase>> PhaseTablePanel::phases() const {
  std::vector<Phase> out;
  for (int row = 0; row < m_table->rowCount(); ++row) {
    auto value = [&](int column, const char* name) -> core::Result<double> {
      const QTableWidgetItem* item = m_table->item(row, column);
      const QString typed = item ? item->text() : QString();
      const std::optional<double> v = parseTypedNumber(typed);
      if (!v) {
        return core::Status::invalidArgument("row " + std::to_string(row + 1) + ", " + name + ": '" +
                                             typed.toStdString() + "' is not a number");
      }
      return *v;
    };
    auto whole = [&](int column, const char* name) -> core::Result<std::int64_t> {
      DPX_ASSIGN_OR_RETURN(const double v, value(column, name));
      if (v != std::floor(v) || v < 1.0 || v > 1e15) {
        return core::Status::invalidArgument("row " + std::to_string(row + 1) + ", " + name + ": " +
                                             core::formatNumber(v) + " must be a whole number in [1, 1e15]");
      }
      return static_cast<std::int64_t>(v);
    };
    const auto* kind = qobject_cast<const QComboBox*>(m_table->cellWidget(row, kKindColumn));
    if (kind && kind->currentIndex() == kAllocationKind) {
      RandomAllocationPhase a;
      DPX_ASSIGN_OR_RETURN(a.noiseMultiplier, value(kSigmaColumn, "σ"));
      DPX_ASSIGN_OR_RETURN(a.epochs, whole(kCountColumn, "epochs"));
      DPX_ASSIGN_OR_RETURN(a.stepsPerEpoch, whole(kStepsPerEpochColumn, "t"));
      DPX_ASSIGN_OR_RETURN(a.selections, whole(kSelectionsColumn, "k"));
      out.emplace_back(a);
    } else {
      GaussianPhase g;
      DPX_ASSIGN_OR_RETURN(g.samplingProbability, value(kQColumn, "q"));
      DPX_ASSIGN_OR_RETURN(g.noiseMultiplier, value(kSigmaColumn, "σ"));
      DPX_ASSIGN_OR_RETURN(g.steps, whole(kCountColumn, "steps"));
      out.emplace_back(g);
    }
  }
  DPX_RETURN_IF_ERROR(core::accounting::validatePhases(out));
  return out;
}

bool PhaseTablePanel::loadEventsFile(const QString& path, QString* error) {
  auto phases = core::readDpEventFile(path.toStdString());
  QString problem;
  if (!phases) {
    problem = text(phases.status().message());
  } else {
    setPhases(*phases);
    m_status->setText(QStringLiteral("read %1").arg(path));
    return true;
  }
  if (error) *error = problem;
  m_status->setText(problem);
  return false;
}

void PhaseTablePanel::fromKnobs() {
  const core::Params& p = m_model->params();
  setPhases({GaussianPhase{p.q(), p.sigma, p.K}});
}

void PhaseTablePanel::addRow() {
  Phase copy = GaussianPhase{m_model->params().q(), m_model->params().sigma, m_model->params().K};
  if (auto current = phases(); current && !current->empty()) copy = current->back();
  m_filling = true;
  m_table->insertRow(m_table->rowCount());
  setRow(m_table->rowCount() - 1, copy);
  m_filling = false;
  recompute();
}

void PhaseTablePanel::removeSelectedRows() {
  std::set<int> rows;
  for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) rows.insert(index.row());
  if (rows.empty()) return;
  m_filling = true;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) m_table->removeRow(*it);
  m_filling = false;
  recompute();
}

void PhaseTablePanel::recompute() {
  auto current = phases();
  if (!current) {
    m_job.cancel();
    m_result.reset();
    m_pld->setText(QStringLiteral("ε (exact, PLD): —"));
    m_rdp->setText(QStringLiteral("ε (moments accountant, RDP): —"));
    m_status->setText(text(current.status().message()));
    return;
  }
  const double delta = m_model->params().delta;
  const core::accounting::Conversion conversion = m_model->conversion();
  m_status->setText(QStringLiteral("composing…"));
  m_job.request(
      [phases = *current, delta, conversion](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) {
        return std::any(compute(phases, delta, conversion, cancel, progress));
      },
      [this](std::any&& result) {
        if (auto* r = std::any_cast<PhasedRunResult>(&result)) showResult(*r);
      });
}

void PhaseTablePanel::showResult(const PhasedRunResult& r) {
  m_result = r;
  const QString at = QStringLiteral(" at δ = ") + number(r.delta);
  if (r.pldUpper && r.pldLower) {
    m_pld->setText(QStringLiteral("ε (exact, PLD) = %1 (upper bound)%2; bracket [%3, %1]")
                       .arg(number(*r.pldUpper, 6), at, number(*r.pldLower, 6)));
  } else {
    m_pld->setText(QStringLiteral("ε (exact, PLD): ") + r.pldMessage);
  }
  if (r.rdpEpsilon) {
    m_rdp->setText(QStringLiteral("ε (moments accountant, RDP) = %1%2 (α = %3, %4 conversion)")
                       .arg(number(*r.rdpEpsilon, 6), at, number(r.rdpAlpha.value_or(0.0), 6),
                            text(std::string(core::accounting::conversionName(r.conversion)))));
  } else {
    m_rdp->setText(QStringLiteral("ε (moments accountant, RDP): ") + r.rdpMessage);
  }
  std::int64_t steps = 0;
  for (const Phase& p : r.phases) steps += core::accounting::phaseSteps(p);
  m_status->setText(QStringLiteral("%1 phase(s), %2 steps").arg(r.phases.size()).arg(steps));
  Q_EMIT computed();
}

}  // namespace dpx::ui
