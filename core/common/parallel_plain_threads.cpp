// The parallel loops on plain threads, created for a loop and joined at its end
// (common/parallel.h says which executables link this runtime, and why).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/parallel.h"

namespace dpx::core {

ParallelRuntime parallelRuntime() { return ParallelRuntime::plainThreads; }

namespace detail {
namespace {

thread_local int threadLimit = 0;  // set by runInArena; 0 = the machine's

// task(k) for every k in [0, count), on up to the arena's number of threads (the caller one of
// them). The first exception a task throws is rethrown in the caller once all threads are joined.
void runOnPlainThreads(std::size_t count, FunctionRef<void(std::size_t)> task) {
  if (count == 0) return;
  const int limit = threadLimit;
  std::atomic<std::size_t> next{0};
  std::mutex failureMutex;
  std::exception_ptr failure;
  auto drain = [&] {
    threadLimit = limit;  // a nested loop sees the same arena
    // Relaxed: the counter only hands out indices; it must not order one task after another,
    // or TSan would miss a race between tasks that oneTBB could run in either order.
    for (std::size_t k = next.fetch_add(1, std::memory_order_relaxed); k < count;
         k = next.fetch_add(1, std::memory_order_relaxed)) {
      try {
        task(k);
      } catch (...) {
        const std::lock_guard lock(failureMutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(count, static_cast<std::size_t>(effectiveThreads(limit))) - 1;
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (std::size_t h = 0; h < helpers; ++h) threads.emplace_back(drain);
  drain();
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void runPieces(std::size_t size, std::size_t grain, Partition partition,
               FunctionRef<void(std::size_t, std::size_t)> piece) {
  // No partitioner: about eight pieces per thread, none under the grain size (simple: the grain
  // size itself).
  const auto threads = static_cast<std::size_t>(effectiveThreads(threadLimit));
  const std::size_t target = partition == Partition::simple ? 1 : (size + 8 * threads - 1) / (8 * threads);
  const std::size_t length = std::max<std::size_t>({grain, target, 1});
  auto task = [&](std::size_t k) { piece(k * length, std::min(size, (k + 1) * length)); };
  runOnPlainThreads((size + length - 1) / length, task);
}

void runInArena(int threads, FunctionRef<void()> work) {
  const int outer = threadLimit;
  threadLimit = threads;
  struct Restore {
    int value;
    ~Restore() { threadLimit = value; }
  } restore{outer};
  work();
}

}  // namespace detail
}  // namespace dpx::core
