#pragma once
// The parallel loop and the arena every parallel part of the product runs on: oneTBB's, except in
// a ThreadSanitizer build.
//
// Debian's libtbb is not built with -fsanitize=thread, so TSan cannot see how oneTBB hands a task
// from one thread to another (its deques, its allocator's recycled memory, the partitioner's nodes
// on the caller's stack): under it, every loop reports hundreds of races inside oneTBB's own
// bookkeeping, and a real race in our tasks would drown among them. In a TSan build the loop
// therefore runs its pieces on plain std::threads — created and joined, which TSan follows —
// that take pieces from a shared counter, as many threads as the enclosing arena allows. The
// pieces still run at the same time on different threads, so what TSan checks is what can go
// wrong in our code: two tasks touching one location, a result read before its task ended, a
// flag or a counter shared without an atomic. oneTBB's scheduler itself is oneTBB's to test.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define DPX_PLAIN_THREADS_FOR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DPX_PLAIN_THREADS_FOR_TSAN 1
#endif
#endif

#ifdef DPX_PLAIN_THREADS_FOR_TSAN
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <vector>
#endif

namespace dpx::core {

namespace detail {
// Whether this process has entered oneTBB through these wrappers (see twoLanes).
inline std::atomic<bool> oneTbbEntered{false};
// Set on the two threads of a plain twoLanes split: both cores are busy, so a loop inside runs
// as one piece on its lane's thread (and never starts oneTBB).
inline thread_local bool inPlainLane = false;
}  // namespace detail

// The number of threads a caller's "threads" setting means: itself if positive, else the
// machine's hardware threads.
inline int effectiveThreads(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

#ifdef DPX_PLAIN_THREADS_FOR_TSAN
namespace detail {

inline thread_local int plainThreadLimit = 0;  // set by inArena; 0 = the machine's

// task(k) for every k in [0, count), on up to the arena's number of threads (the caller one of
// them). The first exception a task throws is rethrown in the caller once all threads are joined.
template <typename Task>
void runOnPlainThreads(std::size_t count, const Task& task) {
  if (count == 0) return;
  const int limit = plainThreadLimit;
  std::atomic<std::size_t> next{0};
  std::mutex failureMutex;
  std::exception_ptr failure;
  auto drain = [&] {
    plainThreadLimit = limit;  // a nested loop sees the same arena
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

}  // namespace detail
#endif

// body(i) for every i in [first, last), in parallel; the options are tbb::parallel_for's
// (a partitioner).
template <typename Index, typename Body, typename... Options>
void parallelFor(Index first, Index last, const Body& body, Options&&... options) {
  if (detail::inPlainLane) {
    ((void)options, ...);
    for (Index i = first; i < last; ++i) body(i);
    return;
  }
#ifdef DPX_PLAIN_THREADS_FOR_TSAN
  ((void)options, ...);  // the plain threads take pieces from a counter: no partitioner
  const std::size_t count = last > first ? static_cast<std::size_t>(last - first) : 0;
  detail::runOnPlainThreads(count, [&](std::size_t k) { body(static_cast<Index>(first + static_cast<Index>(k))); });
#else
  detail::oneTbbEntered.store(true, std::memory_order_relaxed);
  tbb::parallel_for(first, last, body, std::forward<Options>(options)...);
#endif
}

// body(piece) over pieces of range (none smaller than its grain size, except the last), in
// parallel.
template <typename Value, typename Body, typename... Options>
void parallelFor(const tbb::blocked_range<Value>& range, const Body& body, Options&&... options) {
  if (detail::inPlainLane) {
    ((void)options, ...);
    if (!range.empty()) body(range);
    return;
  }
#ifdef DPX_PLAIN_THREADS_FOR_TSAN
  ((void)options, ...);
  const std::size_t size = range.size();
  const std::size_t target = (size + 8 * static_cast<std::size_t>(effectiveThreads(detail::plainThreadLimit)) - 1) /
                             (8 * static_cast<std::size_t>(effectiveThreads(detail::plainThreadLimit)));
  const std::size_t piece = std::max<std::size_t>({range.grainsize(), target, 1});
  detail::runOnPlainThreads((size + piece - 1) / piece, [&](std::size_t k) {
    const Value begin = range.begin() + static_cast<Value>(k * piece);
    const Value end = range.begin() + static_cast<Value>(std::min(size, (k + 1) * piece));
    body(tbb::blocked_range<Value>(begin, end, range.grainsize()));
  });
#else
  detail::oneTbbEntered.store(true, std::memory_order_relaxed);
  tbb::parallel_for(range, body, std::forward<Options>(options)...);
#endif
}

// f() with the parallel loops inside it limited to effectiveThreads(threads) threads; returns f's
// result.
template <typename F>
auto inArena(int threads, F&& f) -> decltype(f()) {
#ifdef DPX_PLAIN_THREADS_FOR_TSAN
  const int outer = detail::plainThreadLimit;
  detail::plainThreadLimit = effectiveThreads(threads);
  struct Restore {
    int value;
    ~Restore() { detail::plainThreadLimit = value; }
  } restore{outer};
  return f();
#else
  detail::oneTbbEntered.store(true, std::memory_order_relaxed);
  tbb::task_arena arena(effectiveThreads(threads));
  return arena.execute(std::forward<F>(f));
#endif
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
