// Fixed feature extractors: functions of one record alone, chosen before any data is seen, so
// they cost no privacy (a neighbouring dataset changes only its own record's features).
//
// ScatterNet (Tramèr & Boneh 2021, "Differentially private learning needs better features (or
// much more data)", ICLR 2021, §3 and their code): the scattering transform of each image with
// J = 2 scales and L = 8 angles to order 2 (numerics/scattering_transform.h), computed on pixels in
// [0, 1], then a GroupNorm without affine parameters over 27 groups of 3 consecutive channels —
// per example, so data-independent, unlike their private batch normalisation (their App. B), which
// would have to be charged. Each group of the output has mean 0 and variance v/(v + 10⁻⁵) < 1,
// so every row has ‖x‖ < √(81·7·7) = 63 whatever the image: a bound the convex analyses can use.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "training/dataset.h"

namespace dpx::core::training {

struct ScatterNetSettings {
  int scales = 2;         // J
  int angles = 8;         // L
  int groups = 27;        // GroupNorm groups (of channels / groups consecutive channels)
  double epsilon = 1e-5;  // GroupNorm's ε (PyTorch's default)
};

// The features of every image of `images` (which must carry an ImageShape; its pixels are divided
// by the shape's maxValue first), GroupNorm'd, with rowNormBound = √(channels·h·w). Labels, class
// names and the name are kept; the rows are no longer images (no ImageShape). Parallel over images; cancelled with a
// Status of kCancelled.
Result<Dataset> scatterNetFeatures(const Dataset& images, const ScatterNetSettings& settings = {},
                                   const FeatureExtractionControl* control = nullptr);

// The features of a loaded source's sets (train, and test when it has one), then the per-record
// `scaling`; progress runs over both sets. Raw features are returned as they are (scaled).
Result<LoadedData> extractFeatures(LoadedData pixels, FeatureKind kind, FeatureScaling scaling,
                                   const FeatureExtractionControl* control = nullptr);

// For people: "3969 ScatterNet features (J = 2, L = 8, order 2: 81 channels of 49 points,
// GroupNorm(27))", or "784 raw features".
std::string describeFeatures(FeatureKind kind, int dimension);

// What the features depend on besides the source and the options, for the dataset cache's key:
// the settings and the code's version ("raw" for raw features).
std::string featureComputation(FeatureKind kind);

// The ScatterNet feature map of an image of this shape: 81 channels of ⌊h/4⌋ × ⌊w/4⌋, and the
// number of its features.
Dataset::FeatureMapShape scatterNetMapShape(const ImageShape& shape);
int scatterNetDimension(const ImageShape& shape);

// Seconds an extraction of `images` images of this shape takes on `threads` threads of this kind
// of machine (measured: bench/bench_features), for estimates made before a run.
double scatterNetSecondsEstimate(std::int64_t images, const ImageShape& shape, int threads);

}  // namespace dpx::core::training
