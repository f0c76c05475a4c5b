// Timed harness for the trainer (issue: trainer). For each mechanism on Fashion-MNIST (falls back
// to the embedded digits when dataset-fashion-mnist is not installed): examples per second of the
// gradient steps (evaluation excluded), training / run / end-to-end seconds, time to the first
// epoch's record, peak memory, and the accuracy reached; first the load time with and without the
// dataset cache. Arguments: threads (2), one mechanism id (all), epochs (3). Batch 256, 2 threads, 3 epochs; each
// mechanism in a forked child that loads the data itself (oneTBB's worker threads do not survive a fork, so nothing
// parallel may run in the parent first).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "training/dataset.h"
#include "training/trainer.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

std::shared_ptr<const TrainTestSplit> loadSplit(bool announce, int threads) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string source = "builtin:fashion-mnist";
  Result<LoadedData> loaded = loadData(source);
  if (!loaded) {
    if (announce) std::printf("(%s; using builtin:digits)\n", loaded.status().message().c_str());
    source = "builtin:digits";
    loaded = loadData(source);
  }
  const double loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto split = std::make_shared<const TrainTestSplit>(*trainTestSplit(std::move(*loaded), 0.2, 1));
  if (announce) {
    std::printf("%s loaded in %.0f ms (%lld train records, %d features); batch 256, %d threads, 3 epochs\n",
                source.c_str(), loadMs, static_cast<long long>(split->train.size()), split->train.dimension(), threads);
  }
  return split;
}

// Load times of Fashion-MNIST: decoding the gzipped IDX files (cache off), then a run that
// finds its decoded copy in the dataset cache (the first call fills it if needed).
void printLoadTimes() {
  const auto timeLoad = [] {
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = loadData("builtin:fashion-mnist").isOk();
    return ok ? std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() : -1.0;
  };
  setenv("DPX_NO_DATASET_CACHE", "1", 1);
  const double cold = timeLoad();
  unsetenv("DPX_NO_DATASET_CACHE");
  if (cold < 0) return;
  timeLoad();
  const double cached = timeLoad();
  std::printf("load: decoding %.3f s, from the dataset cache %.3f s\n", cold, cached);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const std::string only = argc > 2 ? argv[2] : "";
  const double epochs = argc > 3 ? std::atof(argv[3]) : 3.0;
  bool first = true;
  std::fflush(stdout);
  if (fork() == 0) {
    printLoadTimes();
    std::fflush(stdout);
    _exit(0);
  }
  int loadStatus = 0;
  wait(&loadStatus);
  for (Mechanism m : allMechanisms()) {
    if (!only.empty() && only != mechanismId(m)) continue;
    std::fflush(stdout);
    if (fork() == 0) {
      const auto processStart = std::chrono::steady_clock::now();
      auto split = loadSplit(first, threads);
      TrainerConfig c;
      c.mechanism = m;
      c.knobs.m = 256;
      c.knobs.sigma = 1.0;
      c.knobs.eta = m == Mechanism::kDpSgld ? 0.5 : 2.0;
      c.knobs.lambda = 1e-4;
      c.epochs = epochs;
      c.threads = threads;
      auto trainer = Trainer::create(c, split);
      if (!trainer) {
        std::printf("%-15s %s\n", mechanismId(m).data(), trainer.status().message().c_str());
        _exit(0);
      }
      auto r = (*trainer)->run();
      const double endToEnd = std::chrono::duration<double>(std::chrono::steady_clock::now() - processStart).count();
      rusage usage{};
      getrusage(RUSAGE_SELF, &usage);
      // "end-to-end" is what `dpx train` spends: load (cached when possible), data bounds, the run
      // with its per-epoch evaluations; "total" is the run alone.
      std::printf(
          "%-15s %9.0f examples/s  training %5.2f s  total %5.2f s  end-to-end %5.2f s  first epoch %5.2f s  peak %4ld "
          "MiB  test acc %.4f  eps %s\n",
          mechanismId(m).data(), static_cast<double>(r->examplesProcessed) / r->trainingSeconds, r->trainingSeconds,
          r->seconds, endToEnd, r->secondsToFirstEpoch, usage.ru_maxrss / 1024, r->finalTestAccuracy,
          r->epsilon ? std::to_string(*r->epsilon).c_str() : "-");
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    wait(&status);
    first = false;
  }
  return 0;
}
