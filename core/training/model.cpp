#include "training/model.h"

#include <algorithm>

namespace dpx::core::training {

Result<Model> Model::create(const ModelSpec& spec, const Dataset& data, std::uint64_t seed) {
  if (spec.kind == ModelKind::kLinear) return Model(SoftmaxModel(data.dimension(), data.numClasses));
  DPX_ASSIGN_OR_RETURN(const TensorShape input, networkInput(spec, data));
  DPX_ASSIGN_OR_RETURN(Network network, Network::create(spec, input, data.numClasses));
  network.initialise(seed);
  return Model(std::move(network));
}

ModelSpec Model::spec() const {
  if (const Network* n = network()) return n->spec();
  return ModelSpec{};
}

Eigen::VectorXf& Model::parameters() {
  return std::visit([](auto& m) -> Eigen::VectorXf& { return m.parameters(); }, m_model);
}

const Eigen::VectorXf& Model::parameters() const {
  return std::visit([](const auto& m) -> const Eigen::VectorXf& { return m.parameters(); }, m_model);
}

double forwardMacsOf(const ModelSpec& spec, const TensorShape& input, int classes) {
  const double linear = static_cast<double>(input.size() + 1) * std::max(1, classes);
  if (spec.convex()) return linear;
  Result<Network> network = Network::create(spec, input, classes);
  return network ? network->forwardMacs() : linear;
}

TensorShape modelInput(const ModelSpec& spec, const Dataset& data) {
  if (!spec.convex()) {
    if (Result<TensorShape> shape = networkInput(spec, data)) return *shape;
  }
  return TensorShape{static_cast<int>(data.dimension()), 1, 1};
}

double Model::forwardMacs() const {
  if (const Network* n = network()) return n->forwardMacs();
  const SoftmaxModel& m = *linear();
  return static_cast<double>(m.dimension() + 1) * m.classes();
}

GradientStats Model::clippedGradientSum(const Dataset& data, std::span<const std::int64_t> batch, double clipNorm,
                                        GradientWorkspace& workspace, Eigen::VectorXf& out, std::size_t sideTaskCount,
                                        const std::function<void(std::size_t)>& sideTask,
                                        std::vector<double>* perExampleNorms) const {
  if (const Network* n = network()) {
    return n->clippedGradientSum(data, batch, clipNorm, out, perExampleNorms, sideTaskCount, sideTask);
  }
  if (sideTaskCount == 0) {
    return training::clippedGradientSum(*linear(), data, {}, batch, clipNorm, workspace, out, perExampleNorms);
  }
  return training::clippedGradientSum(*linear(), data, {}, batch, clipNorm, workspace, out, sideTaskCount, sideTask);
}

std::vector<Evaluation> Model::evaluate(std::span<const Dataset* const> sets) const {
  if (const Network* n = network()) return n->evaluate(sets);
  return training::evaluate(*linear(), sets);
}

std::vector<double> Model::perExampleLosses(const Dataset& data) const {
  if (const Network* n = network()) return n->perExampleLosses(data);
  return training::perExampleLosses(*linear(), data);
}

Eigen::MatrixXd Model::logits(const FeatureMatrix& features) const {
  if (const Network* n = network()) return n->logits(features).cast<double>();
  const SoftmaxModel& m = *linear();
  Eigen::MatrixXd z = features.cast<double>() * m.weights().cast<double>();
  z.rowwise() += m.bias().cast<double>();
  return z;
}

}  // namespace dpx::core::training
