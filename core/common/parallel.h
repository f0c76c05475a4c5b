#pragma once
// The parallel loop and the arena every parallel part of the product runs on, and the runtime
// behind them, chosen when an executable is linked (core/CMakeLists.txt):
//
// - oneTBB (common/parallel_onetbb.cpp): the explorer, dpx, the tests and the benchmarks.
// - Plain threads (common/parallel_plain_threads.cpp): threads created for a loop and joined at
//   its end, taking pieces from a shared counter, in a ThreadSanitizer build (and in
//   tst_parallel_plain_threads, which tests this runtime in an ordinary build). Debian's libtbb is not built with
//   -fsanitize=thread, so TSan
//     cannot see how oneTBB hands a task from one thread to another (its deques, its
//     allocator's recycled memory, the partitioner's nodes on the caller's stack). Under it,
//     every loop reports hundreds of races inside oneTBB's own bookkeeping, and a real race in
//     our tasks would drown among them. Created and joined threads TSan follows, and the pieces
//     still run at the same time on different threads. So what TSan checks is what can go wrong
//     in our code: two tasks touching one location, a result read before its task ended, a flag
//     or a counter shared without an atomic. oneTBB's scheduler itself is oneTBB's to test.
//
// Either way a loop's pieces are the same, and every loop here writes what a piece computes to
// that piece's own place, so results do not depend on the runtime.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace dpx::core {

enum class ParallelRuntime { oneTbb, plainThreads };

// The runtime this executable was linked with.
ParallelRuntime parallelRuntime();

namespace detail {

// A callable borrowed for one call's duration, without a copy or an allocation.
template <typename Signature>
class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  FunctionRef(F& f)  // NOLINT(google-explicit-constructor): a parameter type
      : m_object(static_cast<void*>(&f)), m_call([](void* object, Args... args) -> R {
          return (*static_cast<F*>(object))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return m_call(m_object, std::forward<Args>(args)...); }

 private:
  void* m_object;
  R (*m_call)(void*, Args...);
};

enum class Partition { automatic, simple };

// piece(begin, end) over pieces of [0, size) sized by grain as parallelFor(blocked_range) says, in
// parallel (simple: split down to the grain size, as tbb::simple_partitioner). The first
// exception a piece throws is rethrown here once the loop has ended.
void runPieces(std::size_t size, std::size_t grain, Partition partition,
               FunctionRef<void(std::size_t, std::size_t)> piece);

// work() with the loops inside it limited to threads threads (> 0).
void runInArena(int threads, FunctionRef<void()> work);
}  // namespace detail

// The number of threads a caller's "threads" setting means: itself if positive, else the
// machine's hardware threads.
inline int effectiveThreads(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// body(i) for every i in [first, last), in parallel; with tbb::simple_partitioner() every index
// is a task of its own (for bodies that are whole jobs: trainers, frontier cells).
template <typename Index, typename Body>
void parallelFor(Index first, Index last, const Body& body,
                 detail::Partition partition = detail::Partition::automatic) {
  if (!(first < last)) return;
  auto piece = [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) body(static_cast<Index>(first + static_cast<Index>(k)));
  };
  detail::runPieces(static_cast<std::size_t>(last - first), 1, partition, piece);
}
template <typename Index, typename Body>
void parallelFor(Index first, Index last, const Body& body, const tbb::simple_partitioner&) {
  parallelFor(first, last, body, detail::Partition::simple);
}

// body(piece) over pieces of range, in parallel. oneTBB splits a piece while it is larger than the
// grain size; the plain threads cut pieces of at least the grain size (the last may be smaller).
template <typename Value, typename Body>
void parallelFor(const tbb::blocked_range<Value>& range, const Body& body) {
  if (range.empty()) return;
  auto piece = [&](std::size_t begin, std::size_t end) {
    body(tbb::blocked_range<Value>(range.begin() + static_cast<Value>(begin), range.begin() + static_cast<Value>(end),
                                   range.grainsize()));
  };
  detail::runPieces(range.size(), range.grainsize(), detail::Partition::automatic, piece);
}

// f() with the parallel loops inside it limited to effectiveThreads(threads) threads; returns f's
// result.
template <typename F>
auto inArena(int threads, F&& f) -> decltype(f()) {
  using Result = decltype(f());
  if constexpr (std::is_void_v<Result>) {
    auto work = [&] { f(); };
    detail::runInArena(effectiveThreads(threads), work);
  } else {
    std::optional<Result> result;
    auto work = [&] { result.emplace(f()); };
    detail::runInArena(effectiveThreads(threads), work);
    return std::move(*result);
  }
}

// first() and second() side by side, for two pieces of work that take about as long (the two
// directions of an exact composition). An exception from either is rethrown here; oneTBB does
// not start the other if it has not started yet.
inline void twoLanes(const std::function<void()>& first, const std::function<void()>& second) {
  parallelFor(
      0, 2, [&](int lane) { lane == 0 ? first() : second(); }, detail::Partition::simple);
}

}  // namespace dpx::core
