#include "parameter_panel.h"

#include <QCheckBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace dpx::ui {

using core::Knob;

ParameterPanel::ParameterPanel(ParameterModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  buildMessage();
  addKnobGroup(layout, QStringLiteral("Run"), {Knob::kN, Knob::kM, Knob::kK, Knob::kSigma, Knob::kDelta});
  addKnobGroup(layout, QStringLiteral("Optimisation"), {Knob::kEta, Knob::kL, Knob::kLambda, Knob::kBeta});
  addKnobGroup(layout, QStringLiteral("Rényi view"), {Knob::kAlpha});
  QGroupBox* advanced = addKnobGroup(layout, QStringLiteral("Advanced"), {Knob::kW, Knob::kCurvatureM, Knob::kD});
  buildAdvancedSettings(advanced);
  layout->addStretch(1);
  connectSettings();
  connect(model, &ParameterModel::paramsChanged, this, &ParameterPanel::refresh);
  connect(model, &ParameterModel::viewChanged, this, &ParameterPanel::refresh);
  connect(model, &ParameterModel::batchAverageChanged, this, &ParameterPanel::refresh);
  refresh();
}

bool ParameterPanel::event(QEvent* event) {
  const bool handled = QWidget::event(event);
  if (event->type() == QEvent::LayoutRequest) Q_EMIT layoutChanged();
  return handled;
}

void ParameterPanel::buildMessage() {
  m_message = new QLabel(this);
  m_message->setObjectName(QStringLiteral("validationMessage"));
  m_message->setWordWrap(true);
  m_message->setStyleSheet(
      QStringLiteral("color: #b71c1c; background: #ffebee; border: 1px solid #ef9a9a; "
                     "border-radius: 3px; padding: 4px;"));
  m_message->hide();
  // Placed by the window, under the knobs' scroll area (see MainWindow::buildParameterDock).
}

QGroupBox* ParameterPanel::addKnobGroup(QVBoxLayout* layout, const QString& title, std::initializer_list<Knob> knobs) {
  auto* box = new QGroupBox(title, this);
  auto* v = new QVBoxLayout(box);
  v->setSpacing(2);
  for (Knob k : knobs) {
    auto* w = new KnobWidget(k, m_model, box);
    m_knobs[k] = w;
    v->addWidget(w);
  }
  layout->addWidget(box);
  return box;
}

// The settings that are not knobs, in a form under the Advanced knobs.
void ParameterPanel::buildAdvancedSettings(QGroupBox* advanced) {
  auto* form = new QFormLayout();
  buildSettingBoxes(advanced);
  form->addRow(QStringLiteral("Schedule"), m_schedule);
  form->addRow(QStringLiteral("Sampling"), m_sampling);
  form->addRow(QStringLiteral("Neighbours"), m_neighbouring);
  form->addRow(QStringLiteral("Optimiser"), m_optimizer);
  form->addRow(QStringLiteral("Batch average"), m_batchAverage);
  form->addRow(QStringLiteral("RDP → (ε, δ)"), m_conversion);
  static_cast<QVBoxLayout*>(advanced->layout())->addLayout(form);
  advanced->layout()->addWidget(m_averaged);
}

// Schedule, sampling, neighbours, averaged release and conversion, created in the order Tab
// visits them.
void ParameterPanel::buildSettingBoxes(QGroupBox* advanced) {
  m_schedule = new QComboBox(advanced);
  m_schedule->addItem(QStringLiteral("constant η"), static_cast<int>(core::Schedule::kConstant));
  m_schedule->addItem(QStringLiteral("decreasing η"), static_cast<int>(core::Schedule::kDecreasing));
  m_schedule->setToolTip(
      QStringLiteral("Constant step, or decreasing: η_k = 1/(2β + λk/2) for sgld (Ryffel, Bach "
                     "& Pointcheval 2022, Cor. 3.3) and η_t = η·t^(−1/3) for sgmcmc (Li, Chen, "
                     "Liu & Carin 2019, Thm 3)."));
  m_sampling = new QComboBox(advanced);
  m_sampling->addItem(QStringLiteral("each accountant's own"), -1);
  for (core::Sampling s : {core::Sampling::kPoisson, core::Sampling::kUniform, core::Sampling::kCyclic,
                           core::Sampling::kShuffle, core::Sampling::kBallsInBins}) {
    m_sampling->addItem(QString::fromLatin1(core::samplingName(s).data()), static_cast<int>(s));
  }
  m_sampling->setToolTip(
      QStringLiteral("The run's batch sampling. Accountants that assume another scheme are "
                     "greyed with the reason: Poisson analyses do not cover shuffled batches."));
  m_neighbouring = new QComboBox(advanced);
  m_neighbouring->addItem(QStringLiteral("each accountant's own"), -1);
  m_neighbouring->addItem(QStringLiteral("add/remove one record"), static_cast<int>(core::Neighbouring::kAddRemove));
  m_neighbouring->addItem(QStringLiteral("replace one record"), static_cast<int>(core::Neighbouring::kReplaceOne));
  m_optimizer = new QComboBox(advanced);
  m_optimizer->setObjectName(QStringLiteral("optimizerBox"));
  m_optimizer->addItem(QStringLiteral("each mechanism's own"), -1);
  m_optimizer->addItem(QStringLiteral("plain SGD steps"), static_cast<int>(core::Optimizer::kSgd));
  m_optimizer->addItem(QStringLiteral("momentum 0.9"), static_cast<int>(core::Optimizer::kMomentum));
  m_optimizer->addItem(QStringLiteral("Adam"), static_cast<int>(core::Optimizer::kAdam));
  m_optimizer->setToolTip(
      QStringLiteral("How a step uses the (privatised) gradient. Each mechanism's own: momentum 0.9 for "
                     "non-private SGD, plain steps for the private mechanisms. For DP-SGD momentum and Adam are "
                     "post-processing (the same ε), though at small batches momentum amplifies the noise; the "
                     "Langevin, cyclic, output-perturbation, SG-MCMC and last-iterate analyses assume plain "
                     "steps and are greyed with the reason."));
  m_batchAverage = new QComboBox(advanced);
  m_batchAverage->setObjectName(QStringLiteral("batchAverageBox"));
  m_batchAverage->addItem(QStringLiteral("sum / m (expected size)"),
                          static_cast<int>(core::accounting::BatchAverage::kExpected));
  m_batchAverage->addItem(QStringLiteral("sum / |B| (realised size)"),
                          static_cast<int>(core::accounting::BatchAverage::kRealised));
  m_batchAverage->setToolTip(
      QStringLiteral("How your pipeline averages the noisy gradient sum. The analyses assume it is divided by the "
                     "fixed m; dividing by each Poisson batch's realised size |B| is not what they bound (the "
                     "configuration check says so). DP Explorer's trainer always divides by m."));
  m_averaged = new QCheckBox(QStringLiteral("outpert releases the last epoch's average"), advanced);
  m_averaged->setToolTip(
      QStringLiteral("Chen, Lee & Kifer 2019, Prop. 3: releasing the average of the last epoch's "
                     "iterates instead of the last one has a smaller ε"));
  m_conversion = new QComboBox(advanced);
  m_conversion->addItem(QStringLiteral("improved (Balle et al. 2020)"),
                        static_cast<int>(core::accounting::Conversion::kImproved));
  m_conversion->addItem(QStringLiteral("classic (Mironov 2017)"),
                        static_cast<int>(core::accounting::Conversion::kClassic));
  m_conversion->setToolTip(QStringLiteral("How RDP becomes (ε, δ): the improved conversion is never worse."));
}

void ParameterPanel::connectSettings() {
  connect(m_schedule, &QComboBox::activated, this,
          [this](int) { m_model->setSchedule(static_cast<core::Schedule>(m_schedule->currentData().toInt())); });
  connect(m_sampling, &QComboBox::activated, this, [this](int) {
    const int v = m_sampling->currentData().toInt();
    m_model->setSampling(v < 0 ? std::nullopt : std::optional<core::Sampling>(static_cast<core::Sampling>(v)));
  });
  connect(m_neighbouring, &QComboBox::activated, this, [this](int) {
    const int v = m_neighbouring->currentData().toInt();
    m_model->setNeighbouring(v < 0 ? std::nullopt
                                   : std::optional<core::Neighbouring>(static_cast<core::Neighbouring>(v)));
  });
  connect(m_optimizer, &QComboBox::activated, this, [this](int) {
    const int v = m_optimizer->currentData().toInt();
    m_model->setOptimizer(v < 0 ? std::nullopt : std::optional<core::Optimizer>(static_cast<core::Optimizer>(v)));
  });
  connect(m_batchAverage, &QComboBox::activated, this, [this](int) {
    m_model->setBatchAverage(static_cast<core::accounting::BatchAverage>(m_batchAverage->currentData().toInt()));
  });
  connect(m_averaged, &QCheckBox::toggled, this, [this](bool on) { m_model->setAveraged(on); });
  connect(m_conversion, &QComboBox::activated, this, [this](int) {
    m_model->setConversion(static_cast<core::accounting::Conversion>(m_conversion->currentData().toInt()));
  });
}

void ParameterPanel::refresh() {
  const core::Params& p = m_model->params();
  const QSignalBlocker b1(m_schedule);
  const QSignalBlocker b2(m_sampling);
  const QSignalBlocker b3(m_neighbouring);
  const QSignalBlocker b4(m_averaged);
  const QSignalBlocker b5(m_conversion);
  const QSignalBlocker b6(m_batchAverage);
  const QSignalBlocker b7(m_optimizer);
  m_optimizer->setCurrentIndex(m_optimizer->findData(p.optimizer ? static_cast<int>(*p.optimizer) : -1));
  m_schedule->setCurrentIndex(m_schedule->findData(static_cast<int>(p.schedule)));
  m_sampling->setCurrentIndex(m_sampling->findData(p.sampling ? static_cast<int>(*p.sampling) : -1));
  m_neighbouring->setCurrentIndex(m_neighbouring->findData(p.neighbouring ? static_cast<int>(*p.neighbouring) : -1));
  m_batchAverage->setCurrentIndex(m_batchAverage->findData(static_cast<int>(m_model->batchAverage())));
  m_averaged->setChecked(p.averaged);
  m_conversion->setCurrentIndex(m_conversion->findData(static_cast<int>(m_model->conversion())));
  if (m_model->isValid()) {
    m_message->hide();
  } else {
    m_message->setText(QStringLiteral("Invalid combination — the charts keep the last valid one:\n") +
                       m_model->validationMessage());
    m_message->show();
  }
}

}  // namespace dpx::ui
