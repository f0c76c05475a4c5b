// Timed harness for the privacy–utility frontier: the full digits frontier of the GUI's default
// view (DP-SGLD and DP-SGD, 10 targets over [ε/8, 8ε] around ε = 1, 3 seeds each, plus the
// non-private ceiling: 63 runs), repeated; and the same in the epochs mode. Prints wall times.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "training/dataset_cache.h"
#include "training/frontier.h"

using namespace dpx::core::training;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  DatasetCache cache;
  DatasetKey key;
  key.source = "builtin:digits";
  auto data = cache.get(key);
  if (!data) {
    std::fprintf(stderr, "%s\n", data.status().message().c_str());
    return 1;
  }
  FrontierRequest r;
  r.mechanisms = {Mechanism::kDpSgld, Mechanism::kDpSgd};
  r.base.knobs.m = 64;
  r.base.knobs.eta = 0.5;
  r.base.knobs.lambda = 1e-3;
  r.base.epochs = 30;
  r.base.bounds = data->bounds;
  r.seeds = 3;
  r.epsilons = frontierEpsilonGrid(1.0, 10);
  for (const char* mode : {"accuracy vs ε", "accuracy vs epochs"}) {
    FrontierRequest request = r;
    if (std::string(mode) == "accuracy vs epochs") {
      request.vary = FrontierVary::kEpochs;
      request.epsilons = {1.0};
      request.epochsList = frontierEpochsGrid(30, 10);
    }
    std::vector<double> seconds;
    std::int64_t runs = 0;
    for (int repeat = 0; repeat < 5; ++repeat) {
      const auto start = std::chrono::steady_clock::now();
      auto result = computeFrontier(request, data->data);
      if (!result) {
        std::fprintf(stderr, "%s\n", result.status().message().c_str());
        return 1;
      }
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      runs = result->runs;
    }
    std::printf(
        "digits frontier, %s: %lld runs, median %.3f s, min %.3f s over 5 (2 mechanisms × 10 points × 3 seeds)\n", mode,
        static_cast<long long>(runs), median(seconds), *std::min_element(seconds.begin(), seconds.end()));
  }
  return 0;
}
