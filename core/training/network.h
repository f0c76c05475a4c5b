// Small feed-forward networks trained with exact per-example clipping: the models of the source
// papers that are not linear.
//   cnn          Papernot et al. 2020's tempered-sigmoid version of the TensorFlow Privacy MNIST
//                CNN, as Tramèr & Boneh 2021 train it end to end (28 × 28 × 1 inputs):
//                Conv(1→16, 8×8, stride 2, pad 2) → tanh → MaxPool(2, stride 1) → Conv(16→32, 4×4,
//                stride 2) → tanh → MaxPool(2, stride 1) → FC 512→32 → tanh → FC 32→10;
//                26 010 parameters (ReLU in place of tanh is the tutorial's own).
//   scatter-cnn  Tramèr & Boneh 2021's CNN on ScatterNet features (81 × 7 × 7, GroupNorm'd by the
//                feature extraction): Conv(81→16, 3×3, stride 2, pad 1) → tanh → Conv(16→32, 3×3,
//                pad 1) → tanh → FC 512→32 → tanh → FC 32→10; 33 066 parameters.
//   mlp          one hidden layer (its width a knob) for tabular data: Bu, Dong, Long & Su 2020's
//                Adult model is 16 ReLU units.
// Per-example gradients, clipped exactly (Abadi et al. 2016): a batch is cut into chunks of
// kNetworkChunk examples; each chunk's forward and backward passes run as matrix products over the
// whole chunk (convolutions by im2col), and each example's gradient norm over all layers comes from
// per-layer formulas — for a dense layer the ghost-norm identity ‖x gᵀ‖ = ‖x‖‖g‖ (Goodfellow 2015),
// for a convolution its per-example gradient Gᵢᵀ·Patchesᵢ, one small product per example. The
// clipped sum is then Σᵢ cᵢ gᵢ with cᵢ = min(1, L/‖gᵢ‖): dense layers by one product with the rows
// scaled, convolutions from their per-example gradients. Chunks are summed in a fixed order, so a
// result does not depend on the thread count.
// Activations are channels-last (position-major, channel-minor) per example; a dataset row of a
// convolutional model is an image (height × width) or a channel-major feature map (channels ×
// height × width, as ScatterNet writes it).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "training/dataset.h"
#include "training/softmax_regression.h"

namespace dpx::core::training {

enum class ModelKind { kLinear, kMlp, kCnn, kScatterCnn };
std::string_view modelKindName(ModelKind kind);  // "linear" | "mlp" | "cnn" | "scatter-cnn"
std::optional<ModelKind> parseModelKind(std::string_view text);

enum class Activation { kTanh, kRelu };
std::string_view activationName(Activation activation);  // "tanh" | "relu"
std::optional<Activation> parseActivation(std::string_view text);

struct ModelSpec {
  ModelKind kind = ModelKind::kLinear;
  int hidden = 16;  // mlp: hidden units
  // The hidden activation; unset: tanh for the CNNs (Papernot et al. 2020's tempered sigmoid),
  // ReLU for the mlp (Bu et al. 2020).
  std::optional<Activation> activation;
  bool operator==(const ModelSpec&) const = default;
  Activation effectiveActivation() const;
  // The loss is convex in the parameters (softmax regression) — the convex analyses need it.
  bool convex() const { return kind == ModelKind::kLinear; }
};

// Channels × height × width; a vector of d features is d × 1 × 1.
struct TensorShape {
  int channels = 0;
  int height = 1;
  int width = 1;
  std::int64_t size() const { return static_cast<std::int64_t>(channels) * height * width; }
  bool operator==(const TensorShape&) const = default;
};

// What a network reads from a dataset's rows: an image (1 × h × w), a feature map (its shape), or
// a vector. An error that names the model and what the data is when the model cannot read it
// (a CNN on tabular features, a scatter-cnn on pixels).
Result<TensorShape> networkInput(const ModelSpec& spec, const Dataset& data);

// Examples per chunk of a network's batch (the unit of parallel work and of the fixed-order sum).
inline constexpr std::int64_t kNetworkChunk = 16;

class Network {
 public:
  // The architecture of `spec` on inputs of `input`'s shape with `classes` outputs; refuses shapes
  // its layers cannot shrink to a positive size, naming the layer.
  static Result<Network> create(const ModelSpec& spec, const TensorShape& input, int classes);

  const ModelSpec& spec() const { return m_spec; }
  const TensorShape& input() const { return m_input; }
  int classes() const { return m_classes; }
  Eigen::Index parameterCount() const { return m_parameters.size(); }
  Eigen::VectorXf& parameters() { return m_parameters; }
  const Eigen::VectorXf& parameters() const { return m_parameters; }
  // Multiply-adds of one example's forward pass (a training step costs about three times it).
  double forwardMacs() const;
  // One line per layer: "conv 1→16 8×8/2 pad 2: 28×28 → 13×13, 1 040 parameters".
  std::vector<std::string> describe() const;

  // PyTorch's default initialisation: every weight and bias U(−1/√fan_in, 1/√fan_in), from a
  // stream of `seed` (xoshiro256++, Stream::kInit).
  void initialise(std::uint64_t seed);

  // out = Σ_{i∈batch} clip_L(∇ℓ_i(θ)), cross-entropy, no averaging, no regulariser (as
  // clippedGradientSum of softmax_regression.h); clipNorm = ∞ disables clipping. `perExampleNorms`
  // receives ‖∇ℓ_i‖ before clipping; sideTask(0 … sideTaskCount − 1) run in the same parallel loop.
  GradientStats clippedGradientSum(const Dataset& data, std::span<const std::int64_t> batch, double clipNorm,
                                   Eigen::VectorXf& out, std::vector<double>* perExampleNorms = nullptr,
                                   std::size_t sideTaskCount = 0,
                                   const std::function<void(std::size_t)>& sideTask = {}) const;

  // Evaluation of every set in one parallel pass; per-example cross-entropy; the logits of rows.
  std::vector<Evaluation> evaluate(std::span<const Dataset* const> sets) const;
  std::vector<double> perExampleLosses(const Dataset& data) const;
  // The logits of every row of `features` (rows laid out as a dataset's), one row each.
  Eigen::MatrixXf logits(const FeatureMatrix& features) const;

  struct Layer;  // the layers' shapes and parameter offsets (network.cpp)

 private:
  Network() = default;
  ModelSpec m_spec;
  TensorShape m_input;
  int m_classes = 0;
  std::shared_ptr<const std::vector<Layer>> m_layers;  // immutable, shared by copies
  Eigen::VectorXf m_parameters;
};

}  // namespace dpx::core::training
