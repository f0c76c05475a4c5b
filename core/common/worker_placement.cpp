#include "common/worker_placement.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
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

namespace {

// One lane of a plain twoLanes split: its work, and what it threw.
struct Lane {
  const std::function<void()>* work = nullptr;
  std::exception_ptr failure;
};

void runLane(Lane& lane) {
  detail::inPlainLane = true;
  try {
    (*lane.work)();
  } catch (...) {
    lane.failure = std::current_exception();
  }
  detail::inPlainLane = false;
}

// The second lane of plain twoLanes splits, kept for the process: a thread placed on another core
// that waits for a lane, spinning for a while before it sleeps. A thread made per split cost two
// pthread_create calls and ~70 µs of start each time on the 2-core VM it was measured on (an exact
// composition splits twice), and a sleeping thread's core, idle, may take longer to come back on
// a busy host. A lane is handed over in a slot: `posted` and `done` count the lanes handed over
// and ended (the acquire/release pairs order the lane's data).
class LaneHelper {
 public:
  // The process's helper, started on first use; null when it cannot run beside the caller (one
  // core) or its thread could not be made. A child forked without exec has no thread behind its
  // parent's helper: the child starts one of its own on the same slot.
  static LaneHelper* get() {
    static std::mutex mutex;
    static LaneHelper* helper = nullptr;  // never freed: its thread may be waiting at exit
    const std::lock_guard lock(mutex);
    if (!helper) helper = new LaneHelper;
    if (helper->m_process != ::getpid()) {
      helper->m_process = ::getpid();
      helper->m_busy.store(false);
      helper->m_posted.store(0);
      helper->m_done.store(0);
      pthread_t thread{};
      helper->m_started = startThreadElsewhere(thread, &LaneHelper::loop, helper);
      if (helper->m_started) pthread_detach(thread);
    }
    return helper->m_started ? helper : nullptr;
  }

  // Claims the helper for one split: false when another split holds it.
  bool claim() { return !m_busy.exchange(true, std::memory_order_acquire); }

  // Runs `lane` on the helper while the caller runs `own`, and waits for it; then frees the
  // helper for the next split.
  void runBeside(Lane& lane, Lane& own) {
    m_lane = &lane;
    const std::uint64_t ticket = m_posted.load(std::memory_order_relaxed) + 1;
    m_posted.store(ticket, std::memory_order_release);
    m_posted.notify_one();
    runLane(own);
    awaitChange(m_done, ticket - 1);
    m_busy.store(false, std::memory_order_release);
  }

 private:
  // Returns once `value` differs from `seen`: spinning first, for up to 2 ms (a run's second
  // split follows its first within a fraction of that, and a run its command's parsing), then
  // sleeping on a futex.
  static std::uint64_t awaitChange(const std::atomic<std::uint64_t>& value, std::uint64_t seen) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    for (unsigned spin = 1;; ++spin) {
      const std::uint64_t now = value.load(std::memory_order_acquire);
      if (now != seen) return now;
      if (spin % 256 == 0 && std::chrono::steady_clock::now() > deadline) break;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    for (;;) {
      value.wait(seen, std::memory_order_acquire);
      const std::uint64_t now = value.load(std::memory_order_acquire);
      if (now != seen) return now;
    }
  }

  static void* loop(void* argument) {
    auto* helper = static_cast<LaneHelper*>(argument);
    std::uint64_t seen = 0;
    for (;;) {
      seen = awaitChange(helper->m_posted, seen);
      runLane(*helper->m_lane);
      helper->m_done.store(seen, std::memory_order_release);
      helper->m_done.notify_one();
    }
  }

  pid_t m_process = 0;  // whose thread waits behind the slot
  bool m_started = false;
  std::atomic<bool> m_busy{false};
  Lane* m_lane = nullptr;  // written before `posted` is, read after
  std::atomic<std::uint64_t> m_posted{0};
  std::atomic<std::uint64_t> m_done{0};
};

}  // namespace

void prepareTwoLanes() {
  if (!detail::oneTbbEntered.load(std::memory_order_relaxed)) LaneHelper::get();
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
  Lane own{&first, nullptr};
  Lane other{&second, nullptr};
  if (LaneHelper* helper = LaneHelper::get(); helper && helper->claim()) {
    helper->runBeside(other, own);
  } else {
    // The helper is another split's (two threads split at once): a thread of this split's own.
    auto run = [](void* argument) -> void* {
      runLane(*static_cast<Lane*>(argument));
      return nullptr;
    };
    pthread_t thread{};
    if (!startThreadElsewhere(thread, run, &other)) {  // one core: one after the other
      first();
      second();
      return;
    }
    runLane(own);
    pthread_join(thread, nullptr);
  }
  if (own.failure) std::rethrow_exception(own.failure);
  if (other.failure) std::rethrow_exception(other.failure);
}

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
  if (parallelRuntime() != ParallelRuntime::oneTbb) return;  // plain loops start their threads
  static std::once_flag once;
  static Placement placement;
  std::call_once(once, [] {
    placement.process = ::getpid();
    placement.started = startThreadElsewhere(placement.helper, placeWorkers, &placement);
  });
}

}  // namespace dpx::core
