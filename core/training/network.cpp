#include "training/network.h"

#include <tbb/blocked_range.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "common/format.h"
#include "common/parallel.h"
#include "training/rng.h"

namespace dpx::core::training {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapRow = Eigen::Map<RowMatrix>;
using ConstMapRow = Eigen::Map<const RowMatrix>;

struct Network::Layer {
  enum class Type { kConv, kPool, kActivation, kDense };
  Type type = Type::kDense;
  TensorShape in;
  TensorShape out;
  int kernel = 0;
  int stride = 1;
  int pad = 0;
  Activation activation = Activation::kTanh;
  Eigen::Index weights = 0;  // offsets into the parameters: weights (out.channels × fanIn, row-major), then bias
  Eigen::Index bias = 0;
  int fanIn = 0;
  bool hasParameters() const { return type == Type::kConv || type == Type::kDense; }
  // Conv: positions of the output map and the patch size; dense: 1 and the input size.
  int positions() const { return type == Type::kConv ? out.height * out.width : 1; }
};

namespace {

using Layer = Network::Layer;

std::string shapeText(const TensorShape& s) {
  return s.height == 1 && s.width == 1
             ? std::to_string(s.channels)
             : std::to_string(s.channels) + " × " + std::to_string(s.height) + " × " + std::to_string(s.width);
}

// One chunk's buffers, reused from step to step.
struct ChunkBuffers {
  std::vector<RowMatrix> activations;  // per layer: (examples × out.size()); [0] is the input
  std::vector<RowMatrix> patches;      // conv: (examples·positions × fanIn)
  std::vector<RowMatrix> weightGrads;  // conv: per example (out.channels × fanIn) flattened
  std::vector<RowMatrix> biasGrads;    // conv: (examples × out.channels)
  std::vector<RowMatrix> denseGrads;   // dense: the gradient at the output (examples × out)
  RowMatrix gradient;                  // the gradient flowing back (examples × size)
  RowMatrix next;
  RowMatrix probabilities;
  Eigen::VectorXd squaredNorms;
};

// At least `rows` rows of every buffer, with the layers' widths (buffers only grow: a pool's
// buffers serve chunks of training and blocks of evaluation).
void ensureRows(RowMatrix& m, Eigen::Index rows, Eigen::Index cols) {
  if (m.rows() < rows || m.cols() != cols) m.resize(rows, cols);
}

void resizeBuffers(ChunkBuffers& b, const std::vector<Layer>& layers, const TensorShape& input, Eigen::Index rows) {
  const std::size_t n = layers.size();
  b.activations.resize(n + 1);
  b.patches.resize(n);
  b.weightGrads.resize(n);
  b.biasGrads.resize(n);
  b.denseGrads.resize(n);
  ensureRows(b.activations[0], rows, input.size());
  for (std::size_t l = 0; l < n; ++l) {
    const Layer& layer = layers[l];
    ensureRows(b.activations[l + 1], rows, layer.out.size());
    if (layer.type == Layer::Type::kConv) {
      ensureRows(b.patches[l], rows * layer.positions(), layer.fanIn);
      ensureRows(b.weightGrads[l], rows, static_cast<Eigen::Index>(layer.out.channels) * layer.fanIn);
      ensureRows(b.biasGrads[l], rows, layer.out.channels);
    } else if (layer.type == Layer::Type::kDense) {
      ensureRows(b.denseGrads[l], rows, layer.out.channels);
    }
  }
}

// Row `row` of the data set into channels-last order: a feature map's rows are channel-major.
void loadInput(const FeatureMatrix& features, std::int64_t row, const TensorShape& shape, float* out) {
  const float* x = features.data() + row * features.cols();
  if (shape.channels == 1 || (shape.height == 1 && shape.width == 1)) {
    std::copy(x, x + shape.size(), out);
    return;
  }
  const int points = shape.height * shape.width;
  for (int c = 0; c < shape.channels; ++c) {
    for (int p = 0; p < points; ++p) out[p * shape.channels + c] = x[c * points + p];
  }
}

// A patch row of a channels-last map: for each kernel row, the k·c values of input row iy from
// column ix0 on are contiguous, so they are copied as one run (zeros outside the image).
void im2col(const Layer& layer, const float* input, float* patches) {
  const int c = layer.in.channels;
  const int w = layer.in.width;
  const int h = layer.in.height;
  const int k = layer.kernel;
  const int run = k * c;
  for (int oy = 0; oy < layer.out.height; ++oy) {
    for (int ox = 0; ox < layer.out.width; ++ox) {
      float* row = patches + static_cast<std::ptrdiff_t>(oy * layer.out.width + ox) * layer.fanIn;
      const int ix0 = ox * layer.stride - layer.pad;
      const bool inside = ix0 >= 0 && ix0 + k <= w;
      for (int ky = 0; ky < k; ++ky) {
        const int iy = oy * layer.stride - layer.pad + ky;
        float* target = row + ky * run;
        if (iy < 0 || iy >= h) {
          for (int i = 0; i < run; ++i) target[i] = 0.0f;
          continue;
        }
        const float* source = input + static_cast<std::ptrdiff_t>(iy * w) * c;
        if (inside) {
          const float* from = source + static_cast<std::ptrdiff_t>(ix0) * c;
          for (int i = 0; i < run; ++i) target[i] = from[i];
          continue;
        }
        for (int kx = 0; kx < k; ++kx) {
          const int ix = ix0 + kx;
          const bool valid = ix >= 0 && ix < w;
          for (int ch = 0; ch < c; ++ch) target[kx * c + ch] = valid ? source[ix * c + ch] : 0.0f;
        }
      }
    }
  }
}

void col2imAdd(const Layer& layer, const float* patches, float* input) {
  const int c = layer.in.channels;
  const int w = layer.in.width;
  const int h = layer.in.height;
  const int k = layer.kernel;
  for (int oy = 0; oy < layer.out.height; ++oy) {
    for (int ox = 0; ox < layer.out.width; ++ox) {
      const float* row = patches + static_cast<std::ptrdiff_t>(oy * layer.out.width + ox) * layer.fanIn;
      for (int ky = 0; ky < k; ++ky) {
        const int iy = oy * layer.stride - layer.pad + ky;
        if (iy < 0 || iy >= h) continue;
        for (int kx = 0; kx < k; ++kx) {
          const int ix = ox * layer.stride - layer.pad + kx;
          if (ix < 0 || ix >= w) continue;
          const float* source = row + (ky * k + kx) * c;
          float* target = input + static_cast<std::ptrdiff_t>(iy * w + ix) * c;
          for (int ch = 0; ch < c; ++ch) target[ch] += source[ch];
        }
      }
    }
  }
}

// One example's 2 × 2 stride-1 max-pool gradient: each output's gradient goes to the first of its
// four inputs equal to its value. Branch-free over the contiguous channels (restrict: the
// compiler may vectorise them).
void routePoolGradient(const Layer& layer, const float* __restrict x, const float* __restrict y,
                       const float* __restrict g, float* __restrict target, int c, int w) {
  for (int oy = 0; oy < layer.out.height; ++oy) {
    for (int ox = 0; ox < layer.out.width; ++ox) {
      const std::ptrdiff_t a = static_cast<std::ptrdiff_t>(oy * w + ox) * c;
      const std::ptrdiff_t d = a + static_cast<std::ptrdiff_t>(w) * c;
      const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(oy * layer.out.width + ox) * c;
      float* __restrict t0 = target + a;
      float* __restrict t1 = target + a + c;
      float* __restrict t2 = target + d;
      float* __restrict t3 = target + d + c;
      for (int ch = 0; ch < c; ++ch) {
        const float m = y[o + ch];
        const float gg = g[o + ch];
        const float f0 = x[a + ch] == m ? 1.0f : 0.0f;
        const float f1 = (1.0f - f0) * (x[a + c + ch] == m ? 1.0f : 0.0f);
        const float f2 = (1.0f - f0 - f1) * (x[d + ch] == m ? 1.0f : 0.0f);
        const float f3 = 1.0f - f0 - f1 - f2;
        t0[ch] += f0 * gg;
        t1[ch] += f1 * gg;
        t2[ch] += f2 * gg;
        t3[ch] += f3 * gg;
      }
    }
  }
}

// The forward pass of `rows` examples whose inputs are in b.activations[0]; logits in the last.
void forward(const std::vector<Layer>& layers, const Eigen::VectorXf& theta, Eigen::Index rows, ChunkBuffers& b) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Layer& layer = layers[l];
    const RowMatrix& in = b.activations[l];
    RowMatrix& out = b.activations[l + 1];
    switch (layer.type) {
      case Layer::Type::kConv: {
        RowMatrix& p = b.patches[l];
        const Eigen::Index t = layer.positions();
        for (Eigen::Index e = 0; e < rows; ++e) im2col(layer, in.row(e).data(), p.data() + e * t * layer.fanIn);
        const ConstMapRow w(theta.data() + layer.weights, layer.out.channels, layer.fanIn);
        MapRow y(out.data(), rows * t, layer.out.channels);
        y.noalias() = p.topRows(rows * t) * w.transpose();
        y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(theta.data() + layer.bias, layer.out.channels);
        break;
      }
      case Layer::Type::kDense: {
        const ConstMapRow w(theta.data() + layer.weights, layer.out.channels, layer.fanIn);
        out.topRows(rows).noalias() = in.topRows(rows) * w.transpose();
        out.topRows(rows).rowwise() +=
            Eigen::Map<const Eigen::RowVectorXf>(theta.data() + layer.bias, layer.out.channels);
        break;
      }
      case Layer::Type::kActivation:
        if (layer.activation == Activation::kTanh) {
          out.topRows(rows) = in.topRows(rows).array().tanh();
        } else {
          out.topRows(rows) = in.topRows(rows).cwiseMax(0.0f);
        }
        break;
      case Layer::Type::kPool: {
        // 2 × 2, stride 1, channels-last: the max of four contiguous channel vectors.
        const int c = layer.in.channels;
        const int w = layer.in.width;
        for (Eigen::Index e = 0; e < rows; ++e) {
          const float* x = in.row(e).data();
          float* y = out.row(e).data();
          for (int oy = 0; oy < layer.out.height; ++oy) {
            for (int ox = 0; ox < layer.out.width; ++ox) {
              const float* a = x + static_cast<std::ptrdiff_t>(oy * w + ox) * c;
              const float* d = a + static_cast<std::ptrdiff_t>(w) * c;
              float* o = y + static_cast<std::ptrdiff_t>(oy * layer.out.width + ox) * c;
              for (int ch = 0; ch < c; ++ch) o[ch] = std::max(std::max(a[ch], a[c + ch]), std::max(d[ch], d[c + ch]));
            }
          }
        }
        break;
      }
    }
  }
}

// Softmax probabilities of the logits, the cross-entropy of each row into `losses` (when given),
// and the gradient p − e_y into b.gradient.
void softmaxGradient(const RowMatrix& logits, Eigen::Index rows, const std::int32_t* labels, ChunkBuffers& b,
                     double* lossSum, double* losses) {
  b.gradient.resize(rows, logits.cols());
  for (Eigen::Index e = 0; e < rows; ++e) {
    const auto z = logits.row(e);
    const float top = z.maxCoeff();
    double sum = 0.0;
    for (Eigen::Index j = 0; j < z.size(); ++j) sum += std::exp(static_cast<double>(z(j) - top));
    const double logSum = std::log(sum) + top;
    const int y = labels[e];
    const double loss = logSum - z(y);
    if (lossSum) *lossSum += loss;
    if (losses) losses[e] = loss;
    for (Eigen::Index j = 0; j < z.size(); ++j) {
      b.gradient(e, j) = static_cast<float>(std::exp(static_cast<double>(z(j)) - logSum));
    }
    b.gradient(e, y) -= 1.0f;
  }
}

// The backward pass: each example's squared gradient norm into b.squaredNorms, and what the
// clipped sum needs (per-example convolution gradients, dense layers' output gradients).
void backward(const std::vector<Layer>& layers, const Eigen::VectorXf& theta, Eigen::Index rows, ChunkBuffers& b) {
  b.squaredNorms.setZero(rows);
  for (std::size_t l = layers.size(); l-- > 0;) {
    const Layer& layer = layers[l];
    const RowMatrix& in = b.activations[l];
    const bool first = l == 0;
    switch (layer.type) {
      case Layer::Type::kDense: {
        // ‖x gᵀ‖² = ‖x‖²‖g‖² (the ghost norm) plus the bias's ‖g‖².
        b.denseGrads[l].topRows(rows) = b.gradient.topRows(rows);
        for (Eigen::Index e = 0; e < rows; ++e) {
          const double g = b.gradient.row(e).cast<double>().squaredNorm();
          b.squaredNorms(e) += g * (in.row(e).cast<double>().squaredNorm() + 1.0);
        }
        if (!first) {
          const ConstMapRow w(theta.data() + layer.weights, layer.out.channels, layer.fanIn);
          b.next.resize(rows, layer.in.size());
          b.next.noalias() = b.gradient.topRows(rows) * w;
          b.gradient.swap(b.next);
        }
        break;
      }
      case Layer::Type::kConv: {
        const Eigen::Index t = layer.positions();
        const ConstMapRow dy(b.gradient.data(), rows * t, layer.out.channels);
        const RowMatrix& p = b.patches[l];
        for (Eigen::Index e = 0; e < rows; ++e) {
          MapRow dw(b.weightGrads[l].row(e).data(), layer.out.channels, layer.fanIn);
          dw.noalias() = dy.middleRows(e * t, t).transpose() * p.middleRows(e * t, t);
          b.biasGrads[l].row(e) = dy.middleRows(e * t, t).colwise().sum();
          // Float sums on packets (a double loop over 8 192 values was latency-bound: 11 µs an example).
          b.squaredNorms(e) += static_cast<double>(dw.squaredNorm()) + b.biasGrads[l].row(e).squaredNorm();
        }
        if (!first) {
          const ConstMapRow w(theta.data() + layer.weights, layer.out.channels, layer.fanIn);
          RowMatrix dp = dy * w;  // (rows·positions × fanIn)
          b.next.setZero(rows, layer.in.size());
          for (Eigen::Index e = 0; e < rows; ++e)
            col2imAdd(layer, dp.data() + e * t * layer.fanIn, b.next.row(e).data());
          b.gradient.swap(b.next);
        }
        break;
      }
      case Layer::Type::kActivation: {
        const RowMatrix& y = b.activations[l + 1];
        if (layer.activation == Activation::kTanh) {
          b.gradient.topRows(rows).array() *= 1.0f - y.topRows(rows).array().square();
        } else {
          b.gradient.topRows(rows).array() *= (y.topRows(rows).array() > 0.0f).cast<float>();
        }
        break;
      }
      case Layer::Type::kPool: {
        // Each output's gradient goes to the first of its four inputs that equals its value (the
        // maximum): the input a sequential argmax picks.
        const int c = layer.in.channels;
        const int w = layer.in.width;
        b.next.setZero(rows, layer.in.size());
        for (Eigen::Index e = 0; e < rows; ++e) {
          routePoolGradient(layer, in.row(e).data(), b.activations[l + 1].row(e).data(), b.gradient.row(e).data(),
                            b.next.row(e).data(), c, w);
        }
        b.gradient.swap(b.next);
        break;
      }
    }
  }
}

// out += Σ_e c_e g_e for this chunk, layer by layer.
void addClippedSum(const std::vector<Layer>& layers, Eigen::Index rows, const Eigen::VectorXf& scale, ChunkBuffers& b,
                   Eigen::VectorXf& out) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Layer& layer = layers[l];
    if (layer.type == Layer::Type::kDense) {
      const RowMatrix scaled = scale.head(rows).asDiagonal() * b.denseGrads[l].topRows(rows);
      MapRow w(out.data() + layer.weights, layer.out.channels, layer.fanIn);
      w.noalias() += scaled.transpose() * b.activations[l].topRows(rows);
      Eigen::Map<Eigen::RowVectorXf>(out.data() + layer.bias, layer.out.channels) += scaled.colwise().sum();
    } else if (layer.type == Layer::Type::kConv) {
      Eigen::Map<Eigen::RowVectorXf>(out.data() + layer.weights, b.weightGrads[l].cols()).noalias() +=
          scale.head(rows).transpose() * b.weightGrads[l].topRows(rows);
      Eigen::Map<Eigen::RowVectorXf>(out.data() + layer.bias, layer.out.channels).noalias() +=
          scale.head(rows).transpose() * b.biasGrads[l].topRows(rows);
    }
  }
}

// A reusable set of chunk buffers per worker (the training loop calls the gradient at every step).
class BufferPool {
 public:
  std::unique_ptr<ChunkBuffers> take() {
    const std::lock_guard lock(m_mutex);
    if (m_free.empty()) return std::make_unique<ChunkBuffers>();
    auto b = std::move(m_free.back());
    m_free.pop_back();
    return b;
  }
  void give(std::unique_ptr<ChunkBuffers> b) {
    const std::lock_guard lock(m_mutex);
    m_free.push_back(std::move(b));
  }

 private:
  std::mutex m_mutex;
  std::vector<std::unique_ptr<ChunkBuffers>> m_free;
};

BufferPool& poolFor(const void* layers) {
  // One pool per architecture (its layer table), for the process: trainers of one architecture
  // share idle buffers; a buffer is taken by one chunk at a time.
  static std::mutex mutex;
  static std::vector<std::pair<const void*, std::unique_ptr<BufferPool>>> pools;
  const std::lock_guard lock(mutex);
  for (auto& [key, pool] : pools) {
    if (key == layers) return *pool;
  }
  pools.emplace_back(layers, std::make_unique<BufferPool>());
  return *pools.back().second;
}

}  // namespace

std::string_view modelKindName(ModelKind kind) {
  switch (kind) {
    case ModelKind::kLinear:
      return "linear";
    case ModelKind::kMlp:
      return "mlp";
    case ModelKind::kCnn:
      return "cnn";
    case ModelKind::kScatterCnn:
      return "scatter-cnn";
  }
  return "linear";
}

std::optional<ModelKind> parseModelKind(std::string_view text) {
  for (ModelKind k : {ModelKind::kLinear, ModelKind::kMlp, ModelKind::kCnn, ModelKind::kScatterCnn}) {
    if (modelKindName(k) == text) return k;
  }
  return std::nullopt;
}

std::string_view activationName(Activation activation) { return activation == Activation::kTanh ? "tanh" : "relu"; }

std::optional<Activation> parseActivation(std::string_view text) {
  if (text == "tanh") return Activation::kTanh;
  if (text == "relu") return Activation::kRelu;
  return std::nullopt;
}

Activation ModelSpec::effectiveActivation() const {
  return activation.value_or(kind == ModelKind::kMlp ? Activation::kRelu : Activation::kTanh);
}

Result<TensorShape> networkInput(const ModelSpec& spec, const Dataset& data) {
  switch (spec.kind) {
    case ModelKind::kLinear:
    case ModelKind::kMlp:
      return TensorShape{data.dimension(), 1, 1};
    case ModelKind::kCnn:
      if (!data.image) {
        return Status::invalidArgument(
            "the cnn reads images, and " + data.name + " has " + std::to_string(data.dimension()) +
            (data.featureMap ? " ScatterNet features (use --model scatter-cnn, or raw features)"
                             : " features and no image shape (tabular data: use --model mlp or linear)"));
      }
      return TensorShape{1, data.image->height, data.image->width};
    case ModelKind::kScatterCnn:
      if (!data.featureMap) {
        return Status::invalidArgument("the scatter-cnn reads ScatterNet feature maps, and " + data.name +
                                       " has none (use --features scatternet)");
      }
      return TensorShape{data.featureMap->channels, data.featureMap->height, data.featureMap->width};
  }
  return Status::invalidArgument("unknown model");
}

Result<Network> Network::create(const ModelSpec& spec, const TensorShape& input, int classes) {
  if (spec.kind == ModelKind::kLinear) {
    return Status::invalidArgument("the linear model is softmax regression (softmax_regression.h), not a network");
  }
  if (input.size() < 1 || classes < 2) return Status::invalidArgument("a network needs inputs and two classes");
  if (spec.kind == ModelKind::kMlp && (spec.hidden < 1 || spec.hidden > 4096)) {
    return Status::invalidArgument("hidden = " + std::to_string(spec.hidden) +
                                   " is out of range: the mlp's hidden units must be in [1, 4096]");
  }
  const Activation activation = spec.effectiveActivation();
  auto layers = std::make_shared<std::vector<Layer>>();
  TensorShape shape = input;
  Eigen::Index parameters = 0;
  const std::string model(modelKindName(spec.kind));
  const auto conv = [&](int outChannels, int kernel, int stride, int pad) -> Status {
    Layer l;
    l.type = Layer::Type::kConv;
    l.in = shape;
    l.kernel = kernel;
    l.stride = stride;
    l.pad = pad;
    l.out = {outChannels, (shape.height + 2 * pad - kernel) / stride + 1,
             (shape.width + 2 * pad - kernel) / stride + 1};
    if (shape.height + 2 * pad < kernel || shape.width + 2 * pad < kernel) {
      return Status::invalidArgument("the " + model + "'s " + std::to_string(kernel) + " × " + std::to_string(kernel) +
                                     " convolution does not fit its " + shapeText(shape) +
                                     " input: the data's images are too small for this model");
    }
    l.fanIn = kernel * kernel * shape.channels;
    l.weights = parameters;
    l.bias = parameters + static_cast<Eigen::Index>(outChannels) * l.fanIn;
    parameters = l.bias + outChannels;
    layers->push_back(l);
    shape = l.out;
    return Status::ok();
  };
  const auto pool = [&]() -> Status {
    Layer l;
    l.type = Layer::Type::kPool;
    l.in = shape;
    l.kernel = 2;
    l.stride = 1;
    if (shape.height < 2 || shape.width < 2) {
      return Status::invalidArgument("the " + model + "'s 2 × 2 max-pooling does not fit its " + shapeText(shape) +
                                     " input: the data's images are too small for this model");
    }
    l.out = {shape.channels, shape.height - 1, shape.width - 1};
    layers->push_back(l);
    shape = l.out;
    return Status::ok();
  };
  const auto act = [&] {
    Layer l;
    l.type = Layer::Type::kActivation;
    l.in = l.out = shape;
    l.activation = activation;
    layers->push_back(l);
  };
  const auto dense = [&](int outputs) {
    Layer l;
    l.type = Layer::Type::kDense;
    l.in = shape;
    l.out = {outputs, 1, 1};
    l.fanIn = static_cast<int>(shape.size());
    l.weights = parameters;
    l.bias = parameters + static_cast<Eigen::Index>(outputs) * l.fanIn;
    parameters = l.bias + outputs;
    layers->push_back(l);
    shape = l.out;
  };
  switch (spec.kind) {
    case ModelKind::kCnn:
      DPX_RETURN_IF_ERROR(conv(16, 8, 2, 2));
      act();
      DPX_RETURN_IF_ERROR(pool());
      DPX_RETURN_IF_ERROR(conv(32, 4, 2, 0));
      act();
      DPX_RETURN_IF_ERROR(pool());
      dense(32);
      act();
      dense(classes);
      break;
    case ModelKind::kScatterCnn:
      DPX_RETURN_IF_ERROR(conv(16, 3, 2, 1));
      act();
      DPX_RETURN_IF_ERROR(conv(32, 3, 1, 1));
      act();
      dense(32);
      act();
      dense(classes);
      break;
    case ModelKind::kMlp:
      dense(spec.hidden);
      act();
      dense(classes);
      break;
    case ModelKind::kLinear:
      break;
  }
  Network n;
  n.m_spec = spec;
  n.m_input = input;
  n.m_classes = classes;
  n.m_layers = std::move(layers);
  n.m_parameters.setZero(parameters);
  return n;
}

double Network::forwardMacs() const {
  double macs = 0.0;
  for (const Layer& l : *m_layers) {
    if (l.hasParameters()) macs += static_cast<double>(l.positions()) * l.fanIn * l.out.channels;
  }
  return macs;
}

std::vector<std::string> Network::describe() const {
  std::vector<std::string> out;
  for (const Layer& l : *m_layers) {
    const std::string io = shapeText(l.in) + " → " + shapeText(l.out);
    switch (l.type) {
      case Layer::Type::kConv:
        out.push_back("conv " + std::to_string(l.in.channels) + "→" + std::to_string(l.out.channels) + " " +
                      std::to_string(l.kernel) + "×" + std::to_string(l.kernel) + "/" + std::to_string(l.stride) +
                      " pad " + std::to_string(l.pad) + ": " + io + ", " +
                      std::to_string(static_cast<long long>(l.out.channels) * (l.fanIn + 1)) + " parameters");
        break;
      case Layer::Type::kDense:
        out.push_back("dense: " + io + ", " + std::to_string(static_cast<long long>(l.out.channels) * (l.fanIn + 1)) +
                      " parameters");
        break;
      case Layer::Type::kActivation:
        out.push_back(std::string(activationName(l.activation)));
        break;
      case Layer::Type::kPool:
        out.push_back("max-pool 2×2/1: " + io);
        break;
    }
  }
  return out;
}

void Network::initialise(std::uint64_t seed) {
  Xoshiro256 engine = streamFor(seed, Stream::kInit, 1);
  for (const Layer& l : *m_layers) {
    if (!l.hasParameters()) continue;
    const double bound = 1.0 / std::sqrt(static_cast<double>(l.fanIn));
    for (Eigen::Index i = l.weights; i < l.bias + l.out.channels; ++i) {
      m_parameters(i) = static_cast<float>((2.0 * engine.uniformOpen() - 1.0) * bound);
    }
  }
}

GradientStats Network::clippedGradientSum(const Dataset& data, std::span<const std::int64_t> batch, double clipNorm,
                                          Eigen::VectorXf& out, std::vector<double>* perExampleNorms,
                                          std::size_t sideTaskCount,
                                          const std::function<void(std::size_t)>& sideTask) const {
  const std::vector<Layer>& layers = *m_layers;
  const auto size = static_cast<std::int64_t>(batch.size());
  const std::int64_t chunks = (size + kNetworkChunk - 1) / kNetworkChunk;
  out.setZero(m_parameters.size());
  if (perExampleNorms) perExampleNorms->assign(batch.size(), 0.0);
  std::vector<Eigen::VectorXf> partial(static_cast<std::size_t>(chunks));
  std::vector<GradientStats> stats(static_cast<std::size_t>(chunks));
  BufferPool& pool = poolFor(m_layers.get());
  const std::size_t tasks = static_cast<std::size_t>(chunks) + sideTaskCount;
  parallelFor(std::size_t{0}, tasks, [&](std::size_t task) {
    if (task >= static_cast<std::size_t>(chunks)) {
      sideTask(task - static_cast<std::size_t>(chunks));
      return;
    }
    const std::int64_t begin = static_cast<std::int64_t>(task) * kNetworkChunk;
    const Eigen::Index rows = std::min(kNetworkChunk, size - begin);
    std::unique_ptr<ChunkBuffers> b = pool.take();
    resizeBuffers(*b, layers, m_input, kNetworkChunk);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
    for (Eigen::Index e = 0; e < rows; ++e) {
      const std::int64_t row = batch[static_cast<std::size_t>(begin + e)];
      loadInput(data.features, row, m_input, b->activations[0].row(e).data());
      labels[static_cast<std::size_t>(e)] = data.labels[static_cast<std::size_t>(row)];
    }
    forward(layers, m_parameters, rows, *b);
    GradientStats& s = stats[task];
    softmaxGradient(b->activations.back(), rows, labels.data(), *b, &s.lossSum, nullptr);
    backward(layers, m_parameters, rows, *b);
    Eigen::VectorXf scale(rows);
    for (Eigen::Index e = 0; e < rows; ++e) {
      const double norm = std::sqrt(b->squaredNorms(e));
      if (perExampleNorms) (*perExampleNorms)[static_cast<std::size_t>(begin + e)] = norm;
      s.maxGradientNorm = std::max(s.maxGradientNorm, norm);
      const bool clipped = std::isfinite(clipNorm) && norm > clipNorm;
      if (clipped) ++s.clipped;
      scale(e) = clipped ? static_cast<float>(clipNorm / norm) : 1.0f;
    }
    partial[task].setZero(m_parameters.size());
    addClippedSum(layers, rows, scale, *b, partial[task]);
    pool.give(std::move(b));
  });
  GradientStats total;
  for (std::size_t c = 0; c < partial.size(); ++c) {  // a fixed order: the same bits for any thread count
    out += partial[c];
    total.lossSum += stats[c].lossSum;
    total.clipped += stats[c].clipped;
    total.maxGradientNorm = std::max(total.maxGradientNorm, stats[c].maxGradientNorm);
  }
  return total;
}

std::vector<Evaluation> Network::evaluate(std::span<const Dataset* const> sets) const {
  const std::vector<Layer>& layers = *m_layers;
  struct Block {
    std::size_t set;
    std::int64_t begin;
    std::int64_t rows;
    double loss = 0.0;
    std::int64_t correct = 0;
  };
  std::vector<Block> blocks;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    for (std::int64_t b = 0; b < sets[s]->size(); b += 64)
      blocks.push_back({s, b, std::min<std::int64_t>(64, sets[s]->size() - b)});
  }
  BufferPool& pool = poolFor(m_layers.get());
  parallelFor(std::size_t{0}, blocks.size(), [&](std::size_t i) {
    Block& block = blocks[i];
    const Dataset& data = *sets[block.set];
    std::unique_ptr<ChunkBuffers> b = pool.take();
    resizeBuffers(*b, layers, m_input, 64);
    for (std::int64_t e = 0; e < block.rows; ++e)
      loadInput(data.features, block.begin + e, m_input, b->activations[0].row(e).data());
    forward(layers, m_parameters, block.rows, *b);
    std::vector<double> losses(static_cast<std::size_t>(block.rows));
    softmaxGradient(b->activations.back(), block.rows, data.labels.data() + block.begin, *b, nullptr, losses.data());
    for (std::int64_t e = 0; e < block.rows; ++e) {
      block.loss += losses[static_cast<std::size_t>(e)];
      Eigen::Index predicted = 0;
      b->activations.back().row(e).maxCoeff(&predicted);
      if (predicted == data.labels[static_cast<std::size_t>(block.begin + e)]) ++block.correct;
    }
    pool.give(std::move(b));
  });
  std::vector<Evaluation> out(sets.size());
  std::vector<double> loss(sets.size(), 0.0);
  std::vector<std::int64_t> correct(sets.size(), 0);
  for (const Block& b : blocks) {
    loss[b.set] += b.loss;
    correct[b.set] += b.correct;
  }
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const double n = static_cast<double>(std::max<std::int64_t>(1, sets[s]->size()));
    out[s].accuracy = static_cast<double>(correct[s]) / n;
    out[s].meanLoss = loss[s] / n;
  }
  return out;
}

std::vector<double> Network::perExampleLosses(const Dataset& data) const {
  const std::vector<Layer>& layers = *m_layers;
  std::vector<double> losses(static_cast<std::size_t>(data.size()));
  BufferPool& pool = poolFor(m_layers.get());
  const std::int64_t blocks = (data.size() + 63) / 64;
  parallelFor(std::int64_t{0}, blocks, [&](std::int64_t block) {
    const std::int64_t begin = block * 64;
    const std::int64_t rows = std::min<std::int64_t>(64, data.size() - begin);
    std::unique_ptr<ChunkBuffers> b = pool.take();
    resizeBuffers(*b, layers, m_input, 64);
    for (std::int64_t e = 0; e < rows; ++e)
      loadInput(data.features, begin + e, m_input, b->activations[0].row(e).data());
    forward(layers, m_parameters, rows, *b);
    softmaxGradient(b->activations.back(), rows, data.labels.data() + begin, *b, nullptr, losses.data() + begin);
    pool.give(std::move(b));
  });
  return losses;
}

Eigen::MatrixXf Network::logits(const FeatureMatrix& features) const {
  const std::vector<Layer>& layers = *m_layers;
  BufferPool& pool = poolFor(m_layers.get());
  std::unique_ptr<ChunkBuffers> b = pool.take();
  Eigen::MatrixXf out(features.rows(), m_classes);
  for (Eigen::Index begin = 0; begin < features.rows(); begin += 64) {
    const Eigen::Index rows = std::min<Eigen::Index>(64, features.rows() - begin);
    resizeBuffers(*b, layers, m_input, 64);
    for (Eigen::Index e = 0; e < rows; ++e) loadInput(features, begin + e, m_input, b->activations[0].row(e).data());
    forward(layers, m_parameters, rows, *b);
    out.middleRows(begin, rows) = b->activations.back().topRows(rows);
  }
  pool.give(std::move(b));
  return out;
}

}  // namespace dpx::core::training
