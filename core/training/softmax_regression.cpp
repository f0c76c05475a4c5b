#include "training/softmax_regression.h"

#include <tbb/blocked_range.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/parallel.h"

namespace dpx::core::training {

SoftmaxModel::SoftmaxModel(int dimension, int classes)
    : m_dimension(dimension), m_classes(classes), m_parameters(Eigen::VectorXf::Zero((dimension + 1) * classes)) {}

Eigen::Map<Eigen::MatrixXf> SoftmaxModel::weights() { return {m_parameters.data(), m_dimension, m_classes}; }
Eigen::Map<const Eigen::MatrixXf> SoftmaxModel::weights() const {
  return {m_parameters.data(), m_dimension, m_classes};
}
Eigen::Map<Eigen::RowVectorXf> SoftmaxModel::bias() {
  return {m_parameters.data() + static_cast<Eigen::Index>(m_dimension) * m_classes, m_classes};
}
Eigen::Map<const Eigen::RowVectorXf> SoftmaxModel::bias() const {
  return {m_parameters.data() + static_cast<Eigen::Index>(m_dimension) * m_classes, m_classes};
}

std::vector<float> squaredRowNorms(const FeatureMatrix& features) {
  std::vector<float> norms(static_cast<std::size_t>(features.rows()));
  for (Eigen::Index i = 0; i < features.rows(); ++i) {
    norms[static_cast<std::size_t>(i)] = static_cast<float>(features.row(i).cast<double>().squaredNorm());
  }
  return norms;
}

namespace {

// The clip norm as a float; one beyond float's range clips nothing.
float floatClipNorm(double clipNorm) {
  return clipNorm >= static_cast<double>(std::numeric_limits<float>::max()) ? std::numeric_limits<float>::infinity()
                                                                            : static_cast<float>(clipNorm);
}

// Turns row i of `logits` into the record's residual p − e_y (the gradient of its loss with respect
// to the logits), clipped so that ‖∇ℓᵢ‖ = √((‖xᵢ‖² + 1)·‖pᵢ − yᵢ‖²) ≤ clip; adds its loss to
// `stats` and returns the unclipped norm.
inline double clippedResidual(Eigen::MatrixXf& logits, std::int64_t i, int label, float squaredNorm, float clip,
                              GradientStats& stats) {
  auto z = logits.row(i);
  const float top = z.maxCoeff();
  z = (z.array() - top).exp();
  const double sum = static_cast<double>(z.sum());
  z /= static_cast<float>(sum);
  stats.lossSum += -std::log(std::max(static_cast<double>(z(label)), 1e-300));
  z(label) -= 1.0f;  // residual p − e_y
  // In double: a saturated softmax leaves residuals near 1e-22, whose float squares are subnormal.
  const double norm = std::sqrt((static_cast<double>(squaredNorm) + 1.0) * z.cast<double>().squaredNorm());
  stats.maxGradientNorm = std::max(stats.maxGradientNorm, norm);
  if (norm > clip) {
    z *= static_cast<float>(clip / norm);
    ++stats.clipped;
  }
  return norm;
}

// The clipped gradient sum of one chunk of the batch: its rows gathered, their logits in one GEMM,
// the clipped residuals R, then Xᵀ R for the weights and R's column sums for the bias. `norms`
// (optional) receives the unclipped per-example norms of the chunk.
void chunkGradient(GradientWorkspace::Chunk& chunk, const SoftmaxModel& model, const Dataset& data,
                   std::span<const float> squaredNorms, std::span<const std::int64_t> records, float clip,
                   double* norms) {
  const int d = model.dimension();
  const int classes = model.classes();
  const auto rows = static_cast<std::int64_t>(records.size());
  chunk.rows.resize(rows, d);
  for (std::int64_t i = 0; i < rows; ++i) chunk.rows.row(i) = data.features.row(records[static_cast<std::size_t>(i)]);
  chunk.logits.noalias() = chunk.rows * model.weights();
  chunk.logits.rowwise() += model.bias();
  GradientStats stats;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto record = static_cast<std::size_t>(records[static_cast<std::size_t>(i)]);
    const double norm = clippedResidual(chunk.logits, i, data.labels[record], squaredNorms[record], clip, stats);
    if (norms) norms[i] = norm;
  }
  chunk.gradient.resize(model.parameters().size());
  Eigen::Map<Eigen::MatrixXf> gw(chunk.gradient.data(), d, classes);
  gw.noalias() = chunk.rows.transpose() * chunk.logits;
  Eigen::Map<Eigen::RowVectorXf>(chunk.gradient.data() + static_cast<Eigen::Index>(d) * classes, classes) =
      chunk.logits.colwise().sum();
  chunk.stats = stats;
}

// out = Σ of the chunks' gradients in a fixed order: the result is the same for any number of threads.
GradientStats sumChunks(const GradientWorkspace& workspace, std::int64_t chunkCount, Eigen::VectorXf& out) {
  GradientStats stats;
  for (std::int64_t c = 0; c < chunkCount; ++c) {
    const GradientWorkspace::Chunk& chunk = workspace.chunks[static_cast<std::size_t>(c)];
    out += chunk.gradient;
    stats.lossSum += chunk.stats.lossSum;
    stats.clipped += chunk.stats.clipped;
    stats.maxGradientNorm = std::max(stats.maxGradientNorm, chunk.stats.maxGradientNorm);
  }
  return stats;
}

}  // namespace

GradientStats clippedGradientSum(const SoftmaxModel& model, const Dataset& data, std::span<const float> squaredNorms,
                                 std::span<const std::int64_t> batch, double clipNorm, GradientWorkspace& workspace,
                                 Eigen::VectorXf& out, std::vector<double>* perExampleNorms) {
  out.setZero(static_cast<Eigen::Index>(model.parameters().size()));
  const auto total = static_cast<std::int64_t>(batch.size());
  const std::int64_t chunkCount = (total + kChunkRows - 1) / kChunkRows;
  if (static_cast<std::int64_t>(workspace.chunks.size()) < chunkCount)
    workspace.chunks.resize(static_cast<std::size_t>(chunkCount));
  if (perExampleNorms) perExampleNorms->assign(batch.size(), 0.0);
  const float clip = floatClipNorm(clipNorm);
  parallelFor(tbb::blocked_range<std::int64_t>(0, chunkCount, 1), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t c = r.begin(); c != r.end(); ++c) {
      const std::int64_t begin = c * kChunkRows;
      const std::int64_t rows = std::min(kChunkRows, total - begin);
      chunkGradient(workspace.chunks[static_cast<std::size_t>(c)], model, data, squaredNorms,
                    batch.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(rows)), clip,
                    perExampleNorms ? perExampleNorms->data() + begin : nullptr);
    }
  });
  return sumChunks(workspace, chunkCount, out);
}

namespace {

constexpr Eigen::Index kEvalBlock = 1024;

template <typename PerBlock>
void forEachBlock(const Dataset& data, PerBlock&& perBlock) {
  const Eigen::Index n = data.features.rows();
  const Eigen::Index blocks = (n + kEvalBlock - 1) / kEvalBlock;
  parallelFor(tbb::blocked_range<Eigen::Index>(0, blocks, 1), [&](const tbb::blocked_range<Eigen::Index>& r) {
    for (Eigen::Index b = r.begin(); b != r.end(); ++b) {
      const Eigen::Index begin = b * kEvalBlock;
      perBlock(b, begin, std::min(kEvalBlock, n - begin));
    }
  });
}

}  // namespace

Evaluation evaluate(const SoftmaxModel& model, const Dataset& data) {
  const Eigen::Index n = data.features.rows();
  if (n == 0) return {};
  const Eigen::Index blocks = (n + kEvalBlock - 1) / kEvalBlock;
  std::vector<double> correct(static_cast<std::size_t>(blocks), 0.0);
  std::vector<double> loss(static_cast<std::size_t>(blocks), 0.0);
  forEachBlock(data, [&](Eigen::Index b, Eigen::Index begin, Eigen::Index rows) {
    Eigen::MatrixXf z = data.features.middleRows(begin, rows) * model.weights();
    z.rowwise() += model.bias();
    double hits = 0.0;
    double sum = 0.0;
    for (Eigen::Index i = 0; i < rows; ++i) {
      Eigen::Index best = 0;
      const float top = z.row(i).maxCoeff(&best);
      const int label = data.labels[static_cast<std::size_t>(begin + i)];
      if (best == label) hits += 1.0;
      const double logSum = std::log((z.row(i).array() - top).exp().cast<double>().sum());
      sum += logSum - static_cast<double>(z(i, label) - top);
    }
    correct[static_cast<std::size_t>(b)] = hits;
    loss[static_cast<std::size_t>(b)] = sum;
  });
  Evaluation e;
  for (Eigen::Index b = 0; b < blocks; ++b) {
    e.accuracy += correct[static_cast<std::size_t>(b)];
    e.meanLoss += loss[static_cast<std::size_t>(b)];
  }
  e.accuracy /= static_cast<double>(n);
  e.meanLoss /= static_cast<double>(n);
  return e;
}

std::vector<double> perExampleLosses(const SoftmaxModel& model, const Dataset& data) {
  std::vector<double> out(static_cast<std::size_t>(data.features.rows()));
  forEachBlock(data, [&](Eigen::Index, Eigen::Index begin, Eigen::Index rows) {
    Eigen::MatrixXf z = data.features.middleRows(begin, rows) * model.weights();
    z.rowwise() += model.bias();
    for (Eigen::Index i = 0; i < rows; ++i) {
      const float top = z.row(i).maxCoeff();
      const int label = data.labels[static_cast<std::size_t>(begin + i)];
      const double logSum = std::log((z.row(i).array() - top).exp().cast<double>().sum());
      out[static_cast<std::size_t>(begin + i)] = logSum - static_cast<double>(z(i, label) - top);
    }
  });
  return out;
}

double largestEigenvalueOfGram(const Dataset& data, int iterations) {
  const Eigen::Index n = data.features.rows();
  const Eigen::Index d = data.features.cols();
  if (n == 0) return 0.0;
  // v over [features | bias]; start from a fixed, data-independent direction.
  Eigen::VectorXd v = Eigen::VectorXd::Constant(d + 1, 1.0 / std::sqrt(static_cast<double>(d + 1)));
  double lambda = 0.0;
  const Eigen::Index blocks = (n + kEvalBlock - 1) / kEvalBlock;
  std::vector<Eigen::VectorXd> partial(static_cast<std::size_t>(blocks));
  for (int it = 0; it < iterations; ++it) {
    const Eigen::VectorXf vf = v.head(d).cast<float>();
    const double vb = v(d);
    forEachBlock(data, [&](Eigen::Index b, Eigen::Index begin, Eigen::Index rows) {
      const Eigen::VectorXf xv = (data.features.middleRows(begin, rows) * vf).array() + static_cast<float>(vb);
      Eigen::VectorXd acc(d + 1);
      acc.head(d) = (data.features.middleRows(begin, rows).transpose() * xv).cast<double>();
      acc(d) = xv.cast<double>().sum();
      partial[static_cast<std::size_t>(b)] = std::move(acc);
    });
    Eigen::VectorXd next = Eigen::VectorXd::Zero(d + 1);
    for (const Eigen::VectorXd& p : partial) next += p;
    next /= static_cast<double>(n);
    const double previous = lambda;
    lambda = next.norm();
    if (lambda == 0.0) return 0.0;
    v = next / lambda;
    if (std::fabs(lambda - previous) <= 1e-7 * lambda) break;  // converged
  }
  return lambda;
}

}  // namespace dpx::core::training
