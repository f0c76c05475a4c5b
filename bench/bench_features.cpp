// Timed harness for the ScatterNet features (issue: the linear probe): the 70 000 Fashion-MNIST
// images through the scattering transform (J = 2, L = 8) and GroupNorm(27), cold (the dataset
// cache off: decode the IDX files, transform every image) and warm (the features read back from
// the cache); then the transform alone per image on one thread. Arguments: threads (0 = all).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/parallel.h"
#include "numerics/scattering_transform.h"
#include "training/dataset.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double timeLoad(const LoadOptions& options, std::int64_t* records = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<LoadedData> loaded = loadData("builtin:fashion-mnist", options);
  if (!loaded) {
    std::printf("builtin:fashion-mnist: %s\n", loaded.status().message().c_str());
    std::exit(1);
  }
  if (records) *records = loaded->train.size() + (loaded->test ? loaded->test->size() : 0);
  return secondsSince(t0);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  return inArena(threads, [&] {
    LoadOptions scatter;
    scatter.features = FeatureKind::kScatterNet;
    setenv("DPX_NO_DATASET_CACHE", "1", 1);
    const double pixels = timeLoad({});
    std::int64_t images = 0;
    const double cold = timeLoad(scatter, &images);
    unsetenv("DPX_NO_DATASET_CACHE");
    timeLoad(scatter);  // fills the cache if it was empty
    const double warm = timeLoad(scatter);
    std::printf(
        "ScatterNet on %lld Fashion-MNIST images, %d threads: cold %.2f s (decoding the pixels alone %.2f s), "
        "from the dataset cache %.2f s\n",
        static_cast<long long>(images), effectiveThreads(threads), cold, pixels, warm);

    const auto transform = *numerics::ScatteringTransform::create({});
    numerics::ScatteringWorkspace workspace = transform->makeWorkspace();
    std::vector<float> image(784);
    for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>((i * 37) % 256) / 255.0f;
    std::vector<double> out(static_cast<std::size_t>(transform->outputSize()));
    const int reps = 2000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) transform->apply(image, out, workspace);
    std::printf("the transform alone: %.1f µs per 28 × 28 image on one thread\n", secondsSince(t0) / reps * 1e6);
    return 0;
  });
}
