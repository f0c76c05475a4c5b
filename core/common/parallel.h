#pragma once
// The parallel loop and the arena every parallel part of the product runs on, and the runtime
// behind them, chosen when an executable is linked (core/CMakeLists.txt):
//
// - oneTBB (common/parallel_onetbb.cpp): the explorer, the tests, the benchmarks, and dpx-onetbb,
//   the build of dpx that runs the commands that train.
// - Plain threads (common/parallel_plain_threads.cpp): threads created for a loop and joined at
//   its end, taking pieces from a shared counter. Two executables link it:
//   - dpx itself, a static executable. A dpx process lives a few milliseconds, and loading
//     oneTBB, libstdc++ and libm and resolving their symbols took 2.1 of the 2.9 ms its start
//     cost on the 2-core VM it was measured on (and 3 of the 7 ms of an exact bracket at
//     K = 10³). Its accounting loops are few and coarse. The commands that train (train, audit,
//     frontier, utility) hand their whole process to dpx-onetbb (app/dpx_main.cpp), so every
//     trainer runs on oneTBB.
//   - A ThreadSanitizer build. Debian's libtbb is not built with -fsanitize=thread, so TSan
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
// Whether this process has entered oneTBB through these wrappers (see twoLanes).
inline std::atomic<bool> oneTbbEntered{false};
// Set on the two threads of a plain twoLanes split: both cores are busy, so a loop inside runs
// as one piece on its lane's thread (and never starts oneTBB).
inline thread_local bool inPlainLane = false;

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
  if (detail::inPlainLane) {
    for (Index i = first; i < last; ++i) body(i);
    return;
  }
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
  if (detail::inPlainLane) {
    if (!range.empty()) body(range);
    return;
  }
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

// first() and second() side by side, for two pieces of work that take about as long. In a
// process that has not entered oneTBB yet (a dpx command), on the calling thread and a plain
// thread on another core, kept for the process's later splits (a split made while another holds
// it starts a thread of its own): oneTBB's start — loading its allocator, searching for its
// resource manager, starting and placing its workers — took 1.2–1.5 ms on the 2-core VM it was
// measured on, longer than the two lanes of an exact composition at K = 10³. Loops inside the
// lanes then run as one piece on their lane's thread. Once the process has entered oneTBB (the
// explorer, whose workers are up), as a two-piece parallelFor. An exception from either piece
// is rethrown here once both have ended.
void twoLanes(const std::function<void()>& first, const std::function<void()>& second);

// Starts twoLanes' plain second thread ahead of the first split (a command that will compose
// calls it once it has parsed its arguments), so that the thread is up and waiting when the
// split comes. Nothing once the process has entered oneTBB.
void prepareTwoLanes();

}  // namespace dpx::core
