#include "common/worker_placement.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "common/parallel.h"

namespace dpx::core {

namespace {

struct PlacedStart {
  void* (*fn)(void*);
  void* arg;
  cpu_set_t mask;
};

void* startPlaced(void* argument) {
  auto* start = static_cast<PlacedStart*>(argument);
  pthread_setaffinity_np(pthread_self(), sizeof start->mask, &start->mask);
  void* (*fn)(void*) = start->fn;
  void* arg = start->arg;
  delete start;
  return fn(arg);
}

}  // namespace

bool startThreadElsewhere(pthread_t& thread, void* (*fn)(void*), void* arg) {
  auto* start = new PlacedStart{fn, arg, {}};
  const int here = sched_getcpu();
  if (here < 0 || sched_getaffinity(0, sizeof start->mask, &start->mask) != 0 || CPU_COUNT(&start->mask) < 2 ||
      !CPU_ISSET(here, &start->mask)) {
    delete start;
    return false;
  }
  cpu_set_t elsewhere = start->mask;
  CPU_CLR(here, &elsewhere);
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) {
    delete start;
    return false;
  }
  const bool started = pthread_attr_setaffinity_np(&attributes, sizeof elsewhere, &elsewhere) == 0 &&
                       pthread_create(&thread, &attributes, startPlaced, start) == 0;
  pthread_attr_destroy(&attributes);
  if (!started) delete start;
  return started;
}

void twoLanes(const std::function<void()>& first, const std::function<void()>& second) {
  if (detail::inPlainLane) {  // both cores are busy already
    first();
    second();
    return;
  }
  if (detail::oneTbbEntered.load(std::memory_order_relaxed)) {
    parallelFor(0, 2, [&](int lane) { lane == 0 ? first() : second(); });
    return;
  }
  struct Lane {
    const std::function<void()>* work;
    std::exception_ptr failure;
  } other{&second, nullptr};
  auto run = [](void* argument) -> void* {
    auto* lane = static_cast<Lane*>(argument);
    detail::inPlainLane = true;
    try {
      (*lane->work)();
    } catch (...) {
      lane->failure = std::current_exception();
    }
    detail::inPlainLane = false;
    return nullptr;
  };
  pthread_t thread{};
  if (!startThreadElsewhere(thread, run, &other)) {  // one core: one after the other
    first();
    second();
    return;
  }
  Lane own{&first, nullptr};
  run(&own);
  pthread_join(thread, nullptr);
  if (own.failure) std::rethrow_exception(own.failure);
  if (other.failure) std::rethrow_exception(other.failure);
}

#ifdef DPX_PLAIN_THREADS_FOR_TSAN
void placeParallelWorkers() {}
#else
namespace {

struct Placement {
  pthread_t helper{};
  bool started = false;
  pid_t process = 0;  // a child forked without exec has no helper to join
  std::mutex mutex;
  std::condition_variable arrived;
  bool settled = false;  // a second thread ran a piece, or the wait gave up
  ~Placement() {
    if (!started || process != ::getpid()) return;
    {
      // A process ending before the worker came (a short command) does not wait for it.
      const std::lock_guard lock(mutex);
      settled = true;
    }
    arrived.notify_all();
    pthread_join(helper, nullptr);
  }
};

// The helper: created on a core other than the caller's, it takes back the caller's mask (staying
// where it is: only its start is placed; oneTBB creates its workers with the process's mask
// anyway), then runs a loop of two pieces whose first waits until another thread has taken the
// second — the worker oneTBB creates for the loop, which starts on the helper's core, free since
// the helper waits.
void* placeWorkers(void* argument) {
  auto* placement = static_cast<Placement*>(argument);
  const std::thread::id helper = std::this_thread::get_id();
  parallelFor(0, 2, [&](int) {
    std::unique_lock lock(placement->mutex);
    if (std::this_thread::get_id() != helper) {
      placement->settled = true;
      placement->arrived.notify_all();
      return;
    }
    // Bounded: with no worker (a process limited to one oneTBB thread) the helper ends anyway.
    placement->arrived.wait_for(lock, std::chrono::milliseconds(20), [&] { return placement->settled; });
    placement->settled = true;
  });
  return nullptr;
}

}  // namespace

void placeParallelWorkers() {
  static std::once_flag once;
  static Placement placement;
  std::call_once(once, [] {
    placement.process = ::getpid();
    placement.started = startThreadElsewhere(placement.helper, placeWorkers, &placement);
  });
}
#endif

}  // namespace dpx::core
