// Multinomial logistic regression (softmax cross-entropy with a bias) and its per-example
// clipped gradient sum without materialising per-example gradients.
// For one record (x, y) with class probabilities p = softmax(Wᵀx + b):
//   ∇_W ℓ = x (p − e_y)ᵀ,  ∇_b ℓ = p − e_y,  so  ‖∇ℓ‖² = (‖x‖² + 1)·‖p − e_y‖².
// The clipped sum over a batch is then Z = X_B W (logits) and G_W = X_Bᵀ diag(c)(P − Y), with
// c_i = min(1, L/‖∇ℓ_i‖) — plus O(m·C) work — computed row block by row block straight from the
// data set (no copy of the batch's rows), so each row is read from memory once. Batches are cut
// into fixed chunks of kChunkRows records summed in a fixed order, so results do not depend on
// the thread count.
// Parameters and data are float32; losses, accuracies and norms accumulate in double.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "training/dataset.h"

namespace dpx::core::training {

// Small enough that a batch of 64 (the CLI's default) still gives both cores of a laptop work.
inline constexpr std::int64_t kChunkRows = 32;

// θ = [W (d×C, column-major) | b (C)] in one vector, so noise, projection and updates see one
// contiguous array.
class SoftmaxModel {
 public:
  SoftmaxModel(int dimension, int classes);
  int dimension() const { return m_dimension; }
  int classes() const { return m_classes; }
  Eigen::VectorXf& parameters() { return m_parameters; }
  const Eigen::VectorXf& parameters() const { return m_parameters; }
  Eigen::Map<Eigen::MatrixXf> weights();
  Eigen::Map<const Eigen::MatrixXf> weights() const;
  Eigen::Map<Eigen::RowVectorXf> bias();
  Eigen::Map<const Eigen::RowVectorXf> bias() const;

 private:
  int m_dimension;
  int m_classes;
  Eigen::VectorXf m_parameters;
};

// Per-record data the gradient needs once: ‖x_i‖².
std::vector<float> squaredRowNorms(const FeatureMatrix& features);

struct GradientStats {
  double lossSum = 0.0;          // Σ cross-entropy over the batch (before clipping)
  std::int64_t clipped = 0;      // records whose gradient norm exceeded the clip norm
  double maxGradientNorm = 0.0;  // largest per-example norm seen
};

// Reusable buffers for clippedGradientSum (one per trainer).
class GradientWorkspace {
 public:
  struct Chunk {
    Eigen::VectorXf logits;  // of the rows in flight, row-major
    Eigen::VectorXf gradient;
    GradientStats stats;
  };
  std::vector<Chunk> chunks;
};

// out = Σ_{i ∈ batch} clip_L(∇ℓ_i(θ)) (no averaging, no regulariser). clipNorm = +∞ disables
// clipping. `squaredNorms` holds ‖x_i‖² per record (squaredRowNorms), or is empty: the kernel
// then computes each from the row it already reads. `perExampleNorms`, when given, receives
// ‖∇ℓ_i‖ before clipping (for tests/audits).
GradientStats clippedGradientSum(const SoftmaxModel& model, const Dataset& data, std::span<const float> squaredNorms,
                                 std::span<const std::int64_t> batch, double clipNorm, GradientWorkspace& workspace,
                                 Eigen::VectorXf& out, std::vector<double>* perExampleNorms = nullptr);

// As above, with `sideTaskCount` more tasks, sideTask(0) … sideTask(count − 1), run in the same
// parallel loop as the batch's chunks: work of the step that does not depend on the gradient
// (its noise) then costs no fork-join of its own and fills the threads' idle time.
GradientStats clippedGradientSum(const SoftmaxModel& model, const Dataset& data, std::span<const float> squaredNorms,
                                 std::span<const std::int64_t> batch, double clipNorm, GradientWorkspace& workspace,
                                 Eigen::VectorXf& out, std::size_t sideTaskCount,
                                 const std::function<void(std::size_t)>& sideTask);

struct Evaluation {
  double accuracy = 0.0;
  double meanLoss = 0.0;  // mean cross-entropy (no regulariser)
};
Evaluation evaluate(const SoftmaxModel& model, const Dataset& data);
// evaluate() of each set, all in one parallel pass.
std::vector<Evaluation> evaluate(const SoftmaxModel& model, std::span<const Dataset* const> sets);

// Per-record cross-entropy losses (membership-inference audits).
std::vector<double> perExampleLosses(const SoftmaxModel& model, const Dataset& data);

// Largest eigenvalue of X̃ᵀX̃/n with X̃ = [X | 1] (power iteration), for the smoothness β = λ_max/2 + λ
// of the empirical risk (Ryffel, Bach & Pointcheval 2022, Lemma 5.1).
double largestEigenvalueOfGram(const Dataset& data, int iterations = 60);

}  // namespace dpx::core::training
