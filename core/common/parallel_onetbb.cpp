// The parallel loops on oneTBB (common/parallel.h says which executables link this runtime).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "common/parallel.h"

namespace dpx::core {

ParallelRuntime parallelRuntime() { return ParallelRuntime::oneTbb; }

namespace detail {

void runPieces(std::size_t size, std::size_t grain, Partition partition,
               FunctionRef<void(std::size_t, std::size_t)> piece) {
  const tbb::blocked_range<std::size_t> range(0, size, grain);
  auto body = [&](const tbb::blocked_range<std::size_t>& r) { piece(r.begin(), r.end()); };
  if (partition == Partition::simple) {
    tbb::parallel_for(range, body, tbb::simple_partitioner());
  } else {
    tbb::parallel_for(range, body);
  }
}

void runInArena(int threads, FunctionRef<void()> work) {
  tbb::task_arena arena(threads);
  arena.execute([&] { work(); });
}

}  // namespace detail
}  // namespace dpx::core
