// The model a run trains and releases: softmax regression (`linear`, on its fused kernel) or a
// network (`mlp`, `cnn`, `scatter-cnn`, network.h). One interface for the trainer, the audit and
// the evaluation: the clipped per-example gradient sum, accuracies and losses, logits.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <span>
#include <variant>
#include <vector>

#include "common/status.h"
#include "training/dataset.h"
#include "training/network.h"
#include "training/softmax_regression.h"

namespace dpx::core::training {

// Multiply-adds of one example's forward pass of `spec` on inputs of `input`'s shape: (d + 1)·C
// for softmax regression (d = input.size()), the network's layers otherwise (the linear count when
// the network cannot read that shape).
double forwardMacsOf(const ModelSpec& spec, const TensorShape& input, int classes);
// The input `spec` reads from rows of `data`: a network's (networkInput), or the d features.
TensorShape modelInput(const ModelSpec& spec, const Dataset& data);

class Model {
 public:
  Model() : m_model(SoftmaxModel(0, 0)) {}
  explicit Model(SoftmaxModel linear) : m_model(std::move(linear)) {}
  explicit Model(Network network) : m_model(std::move(network)) {}
  // The model of `spec` for this data (its input shape and classes), initialised from `seed`
  // (softmax regression starts at zero). Refuses a model that cannot read the data, saying why.
  static Result<Model> create(const ModelSpec& spec, const Dataset& data, std::uint64_t seed);

  ModelSpec spec() const;
  bool convex() const { return spec().convex(); }
  const SoftmaxModel* linear() const { return std::get_if<SoftmaxModel>(&m_model); }
  const Network* network() const { return std::get_if<Network>(&m_model); }
  Eigen::VectorXf& parameters();
  const Eigen::VectorXf& parameters() const;
  // Multiply-adds of one example's forward pass.
  double forwardMacs() const;

  // Σ_{i∈batch} clip_L(∇ℓ_i(θ)) into `out` (clippedGradientSum of softmax_regression.h or of
  // Network); sideTask(0 … sideTaskCount − 1) run in the same parallel loop.
  GradientStats clippedGradientSum(const Dataset& data, std::span<const std::int64_t> batch, double clipNorm,
                                   GradientWorkspace& workspace, Eigen::VectorXf& out, std::size_t sideTaskCount = 0,
                                   const std::function<void(std::size_t)>& sideTask = {},
                                   std::vector<double>* perExampleNorms = nullptr) const;
  std::vector<Evaluation> evaluate(std::span<const Dataset* const> sets) const;
  std::vector<double> perExampleLosses(const Dataset& data) const;
  // Logits of every row of `features` (rows × classes), in double.
  Eigen::MatrixXd logits(const FeatureMatrix& features) const;

 private:
  std::variant<SoftmaxModel, Network> m_model;
};

}  // namespace dpx::core::training
