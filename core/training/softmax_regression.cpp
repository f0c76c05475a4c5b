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

// The widest SIMD register Eigen targets on this build (16 floats under AVX-512). The kernels
// below use Eigen's packet primitives rather than its GEMM: a batch's rows are scattered over the
// data set, and a GEMM would need them copied into a contiguous block first (and then packed
// again), while these kernels read every row straight from the data set once, while it is hot in
// L1, for both its logits and its share of Xᵀ R.
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int kLanes = Eigen::internal::packet_traits<float>::size;

// Rows handled together: their logits share the loads of W, their gradient terms the loads and
// stores of G. Classes handled together in the logits: R·G accumulators plus R rows must fit the
// 32 vector registers of AVX-512.
constexpr int kRowBlock = 4;
constexpr int kClassBlock = 4;

// z[r·C + c0 + g] = x_r · w_{c0+g} for the R rows and the G classes from c0 on. W is d×C
// column-major, so a class's weights are contiguous like a row.
template <int R, int G>
void logitsBlock(const float* const* x, const float* w, Eigen::Index d, int classes, int c0, float* z) {
  using namespace Eigen::internal;
  const float* wc[G];
  for (int g = 0; g < G; ++g) wc[g] = w + static_cast<Eigen::Index>(c0 + g) * d;
  Packet acc[R][G];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) acc[r][g] = pset1<Packet>(0.0f);
  Eigen::Index k = 0;
  for (; k + kLanes <= d; k += kLanes) {
    Packet xv[R];
    for (int r = 0; r < R; ++r) xv[r] = ploadu<Packet>(x[r] + k);
    for (int g = 0; g < G; ++g) {
      const Packet wv = ploadu<Packet>(wc[g] + k);
      for (int r = 0; r < R; ++r) acc[r][g] = pmadd(xv[r], wv, acc[r][g]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int g = 0; g < G; ++g) {
      float sum = predux(acc[r][g]);
      for (Eigen::Index t = k; t < d; ++t) sum += x[r][t] * wc[g][t];
      z[r * classes + c0 + g] = sum;
    }
  }
}

template <int R>
void logitsRows(const float* const* x, const float* w, Eigen::Index d, int classes, float* z) {
  int c0 = 0;
  for (; c0 + kClassBlock <= classes; c0 += kClassBlock) logitsBlock<R, kClassBlock>(x, w, d, classes, c0, z);
  switch (classes - c0) {
    case 3:
      logitsBlock<R, 3>(x, w, d, classes, c0, z);
      break;
    case 2:
      logitsBlock<R, 2>(x, w, d, classes, c0, z);
      break;
    case 1:
      logitsBlock<R, 1>(x, w, d, classes, c0, z);
      break;
    default:
      break;
  }
}

// G[:, c] += Σ_r residual[r·C + c] · x_r for every class: the R rows' share of Xᵀ R, each column
// of G loaded and stored once per block of rows.
template <int R>
void accumulateRows(const float* const* x, const float* residual, Eigen::Index d, int classes, float* gradient) {
  using namespace Eigen::internal;
  for (int c = 0; c < classes; ++c) {
    float* gc = gradient + static_cast<Eigen::Index>(c) * d;
    Packet scale[R];
    for (int r = 0; r < R; ++r) scale[r] = pset1<Packet>(residual[r * classes + c]);
    Eigen::Index k = 0;
    for (; k + kLanes <= d; k += kLanes) {
      Packet acc = ploadu<Packet>(gc + k);
      for (int r = 0; r < R; ++r) acc = pmadd(scale[r], ploadu<Packet>(x[r] + k), acc);
      pstoreu(gc + k, acc);
    }
    for (; k < d; ++k) {
      float acc = gc[k];
      for (int r = 0; r < R; ++r) acc += residual[r * classes + c] * x[r][k];
      gc[k] = acc;
    }
  }
}

// ‖x‖² of one row, for callers that do not pass the data set's squared norms.
float squaredNormOf(const float* x, Eigen::Index d) {
  using namespace Eigen::internal;
  Packet acc = pset1<Packet>(0.0f);
  Eigen::Index k = 0;
  for (; k + kLanes <= d; k += kLanes) {
    const Packet v = ploadu<Packet>(x + k);
    acc = pmadd(v, v, acc);
  }
  float sum = predux(acc);
  for (; k < d; ++k) sum += x[k] * x[k];
  return sum;
}

// Turns the logits z (one record's C values) into its residual p − e_y (the gradient of its loss
// with respect to the logits), clipped so that ‖∇ℓᵢ‖ = √((‖xᵢ‖² + 1)·‖pᵢ − yᵢ‖²) ≤ clip; adds its
// loss to `stats` and returns the unclipped norm.
double clippedResidual(float* z, int classes, int label, float squaredNorm, float clip, GradientStats& stats) {
  float top = z[0];
  for (int c = 1; c < classes; ++c) top = std::max(top, z[c]);
  double sum = 0.0;
  for (int c = 0; c < classes; ++c) {
    z[c] = std::exp(z[c] - top);
    sum += static_cast<double>(z[c]);
  }
  const auto inverse = static_cast<float>(1.0 / sum);
  for (int c = 0; c < classes; ++c) z[c] *= inverse;
  stats.lossSum += -std::log(std::max(static_cast<double>(z[label]), 1e-300));
  z[label] -= 1.0f;  // residual p − e_y
  // In double: a saturated softmax leaves residuals near 1e-22, whose float squares are subnormal.
  double residualSquared = 0.0;
  for (int c = 0; c < classes; ++c) residualSquared += static_cast<double>(z[c]) * static_cast<double>(z[c]);
  const double norm = std::sqrt((static_cast<double>(squaredNorm) + 1.0) * residualSquared);
  stats.maxGradientNorm = std::max(stats.maxGradientNorm, norm);
  if (norm > clip) {
    const auto scale = static_cast<float>(clip / norm);
    for (int c = 0; c < classes; ++c) z[c] *= scale;
    ++stats.clipped;
  }
  return norm;
}

// R rows of a chunk: their logits, clipped residuals, and their terms of the chunk's gradient.
template <int R>
void rowBlockGradient(GradientWorkspace::Chunk& chunk, const SoftmaxModel& model, const Dataset& data,
                      std::span<const float> squaredNorms, const std::int64_t* records, float clip, double* norms,
                      GradientStats& stats) {
  const Eigen::Index d = model.dimension();
  const int classes = model.classes();
  const float* x[R];
  for (int r = 0; r < R; ++r) x[r] = data.features.data() + records[r] * d;
  float* z = chunk.logits.data();
  logitsRows<R>(x, model.parameters().data(), d, classes, z);
  const float* bias = model.parameters().data() + d * classes;
  for (int r = 0; r < R; ++r) {
    const auto record = static_cast<std::size_t>(records[r]);
    const float squaredNorm = squaredNorms.empty() ? squaredNormOf(x[r], d) : squaredNorms[record];
    float* zr = z + r * classes;
    for (int c = 0; c < classes; ++c) zr[c] += bias[c];
    const double norm = clippedResidual(zr, classes, data.labels[record], squaredNorm, clip, stats);
    if (norms) norms[r] = norm;
  }
  float* gradient = chunk.gradient.data();
  accumulateRows<R>(x, z, d, classes, gradient);
  float* biasGradient = gradient + d * classes;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < classes; ++c) biasGradient[c] += z[r * classes + c];
}

// The clipped gradient sum of one chunk of the batch, rows taken kRowBlock at a time in batch
// order. `norms` (optional) receives the unclipped per-example norms of the chunk.
void chunkGradient(GradientWorkspace::Chunk& chunk, const SoftmaxModel& model, const Dataset& data,
                   std::span<const float> squaredNorms, std::span<const std::int64_t> records, float clip,
                   double* norms) {
  chunk.gradient.setZero(model.parameters().size());
  chunk.logits.resize(kRowBlock * model.classes());
  GradientStats stats;
  const auto rows = static_cast<std::int64_t>(records.size());
  std::int64_t i = 0;
  for (; i + kRowBlock <= rows; i += kRowBlock) {
    rowBlockGradient<kRowBlock>(chunk, model, data, squaredNorms, records.data() + i, clip, norms ? norms + i : nullptr,
                                stats);
  }
  for (; i < rows; ++i) {
    rowBlockGradient<1>(chunk, model, data, squaredNorms, records.data() + i, clip, norms ? norms + i : nullptr, stats);
  }
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

namespace {

GradientStats gradientWithSideTasks(const SoftmaxModel& model, const Dataset& data, std::span<const float> squaredNorms,
                                    std::span<const std::int64_t> batch, double clipNorm, GradientWorkspace& workspace,
                                    Eigen::VectorXf& out, std::vector<double>* perExampleNorms,
                                    std::size_t sideTaskCount, const std::function<void(std::size_t)>* sideTask) {
  out.setZero(static_cast<Eigen::Index>(model.parameters().size()));
  const auto total = static_cast<std::int64_t>(batch.size());
  const std::int64_t chunkCount = (total + kChunkRows - 1) / kChunkRows;
  if (static_cast<std::int64_t>(workspace.chunks.size()) < chunkCount)
    workspace.chunks.resize(static_cast<std::size_t>(chunkCount));
  if (perExampleNorms) perExampleNorms->assign(batch.size(), 0.0);
  const float clip = floatClipNorm(clipNorm);
  const auto tasks = chunkCount + static_cast<std::int64_t>(sideTaskCount);
  parallelFor(tbb::blocked_range<std::int64_t>(0, tasks, 1), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t c = r.begin(); c != r.end(); ++c) {
      if (c >= chunkCount) {
        (*sideTask)(static_cast<std::size_t>(c - chunkCount));
        continue;
      }
      const std::int64_t begin = c * kChunkRows;
      const std::int64_t rows = std::min(kChunkRows, total - begin);
      chunkGradient(workspace.chunks[static_cast<std::size_t>(c)], model, data, squaredNorms,
                    batch.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(rows)), clip,
                    perExampleNorms ? perExampleNorms->data() + begin : nullptr);
    }
  });
  return sumChunks(workspace, chunkCount, out);
}

}  // namespace

GradientStats clippedGradientSum(const SoftmaxModel& model, const Dataset& data, std::span<const float> squaredNorms,
                                 std::span<const std::int64_t> batch, double clipNorm, GradientWorkspace& workspace,
                                 Eigen::VectorXf& out, std::vector<double>* perExampleNorms) {
  return gradientWithSideTasks(model, data, squaredNorms, batch, clipNorm, workspace, out, perExampleNorms, 0, nullptr);
}

GradientStats clippedGradientSum(const SoftmaxModel& model, const Dataset& data, std::span<const float> squaredNorms,
                                 std::span<const std::int64_t> batch, double clipNorm, GradientWorkspace& workspace,
                                 Eigen::VectorXf& out, std::size_t sideTaskCount,
                                 const std::function<void(std::size_t)>& sideTask) {
  return gradientWithSideTasks(model, data, squaredNorms, batch, clipNorm, workspace, out, nullptr, sideTaskCount,
                               &sideTask);
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

namespace {

using BlockLogits = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Logits (with the bias) of `rows` consecutive records from `begin`, by the gradient's row kernel:
// Eigen's GEMM would first copy the block into its packed layout, which costs more than the
// product itself at C = 10 classes.
void blockLogits(const SoftmaxModel& model, const Dataset& data, Eigen::Index begin, Eigen::Index rows,
                 BlockLogits& z) {
  const Eigen::Index d = model.dimension();
  const int classes = model.classes();
  z.resize(rows, classes);
  const float* w = model.parameters().data();
  const float* first = data.features.data() + begin * d;
  Eigen::Index i = 0;
  for (; i + kRowBlock <= rows; i += kRowBlock) {
    const float* x[kRowBlock];
    for (int r = 0; r < kRowBlock; ++r) x[r] = first + (i + r) * d;
    logitsRows<kRowBlock>(x, w, d, classes, z.data() + i * classes);
  }
  for (; i < rows; ++i) {
    const float* x[1] = {first + i * d};
    logitsRows<1>(x, w, d, classes, z.data() + i * classes);
  }
  z.rowwise() += model.bias();
}

}  // namespace

namespace {

// Hits and summed loss of `rows` consecutive records from `begin`.
std::pair<double, double> blockHitsAndLoss(const SoftmaxModel& model, const Dataset& data, Eigen::Index begin,
                                           Eigen::Index rows) {
  thread_local BlockLogits z;
  blockLogits(model, data, begin, rows, z);
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
  return {hits, sum};
}

}  // namespace

std::vector<Evaluation> evaluate(const SoftmaxModel& model, std::span<const Dataset* const> sets) {
  // The blocks of every set in one parallel loop: one fork-join, and no core idles at the end of
  // one set while the other still has blocks. Each set's blocks are summed in order afterwards,
  // so the numbers are those of evaluating the sets one by one, whatever the threads.
  std::vector<Eigen::Index> firstBlock(sets.size() + 1, 0);
  for (std::size_t s = 0; s < sets.size(); ++s)
    firstBlock[s + 1] = firstBlock[s] + (sets[s]->features.rows() + kEvalBlock - 1) / kEvalBlock;
  std::vector<std::pair<double, double>> blocks(static_cast<std::size_t>(firstBlock.back()));
  parallelFor(tbb::blocked_range<Eigen::Index>(0, firstBlock.back(), 1),
              [&](const tbb::blocked_range<Eigen::Index>& r) {
                for (Eigen::Index b = r.begin(); b != r.end(); ++b) {
                  const auto set = static_cast<std::size_t>(std::upper_bound(firstBlock.begin(), firstBlock.end(), b) -
                                                            firstBlock.begin() - 1);
                  const Dataset& data = *sets[set];
                  const Eigen::Index begin = (b - firstBlock[set]) * kEvalBlock;
                  blocks[static_cast<std::size_t>(b)] =
                      blockHitsAndLoss(model, data, begin, std::min(kEvalBlock, data.features.rows() - begin));
                }
              });
  std::vector<Evaluation> out(sets.size());
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const Eigen::Index n = sets[s]->features.rows();
    if (n == 0) continue;
    for (Eigen::Index b = firstBlock[s]; b < firstBlock[s + 1]; ++b) {
      out[s].accuracy += blocks[static_cast<std::size_t>(b)].first;
      out[s].meanLoss += blocks[static_cast<std::size_t>(b)].second;
    }
    out[s].accuracy /= static_cast<double>(n);
    out[s].meanLoss /= static_cast<double>(n);
  }
  return out;
}

Evaluation evaluate(const SoftmaxModel& model, const Dataset& data) {
  const Dataset* const sets[] = {&data};
  return evaluate(model, sets).front();
}

std::vector<double> perExampleLosses(const SoftmaxModel& model, const Dataset& data) {
  std::vector<double> out(static_cast<std::size_t>(data.features.rows()));
  forEachBlock(data, [&](Eigen::Index, Eigen::Index begin, Eigen::Index rows) {
    thread_local BlockLogits z;
    blockLogits(model, data, begin, rows, z);
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
      // Slices small enough to stay in L2 between the two products, so each iteration reads the
      // data set from memory once, not twice.
      constexpr Eigen::Index kSlice = 256;
      Eigen::VectorXf sum = Eigen::VectorXf::Zero(d);
      double biasSum = 0.0;
      for (Eigen::Index s = begin; s < begin + rows; s += kSlice) {
        const Eigen::Index sliceRows = std::min(kSlice, begin + rows - s);
        const Eigen::VectorXf xv = (data.features.middleRows(s, sliceRows) * vf).array() + static_cast<float>(vb);
        sum.noalias() += data.features.middleRows(s, sliceRows).transpose() * xv;
        biasSum += xv.cast<double>().sum();
      }
      Eigen::VectorXd acc(d + 1);
      acc.head(d) = sum.cast<double>();
      acc(d) = biasSum;
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
