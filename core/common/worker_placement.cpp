#include "common/worker_placement.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/parallel.h"

namespace dpx::core {

#ifdef DPX_PLAIN_THREADS_FOR_TSAN
void placeParallelWorkers() {}
#else
namespace {

struct Placement {
  pthread_t helper{};
  bool started = false;
  pid_t process = 0;  // a child forked without exec has no helper to join
  cpu_set_t all{};
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
  pthread_setaffinity_np(pthread_self(), sizeof placement->all, &placement->all);
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
    const int here = sched_getcpu();
    if (here < 0 || sched_getaffinity(0, sizeof placement.all, &placement.all) != 0 || CPU_COUNT(&placement.all) < 2 ||
        !CPU_ISSET(here, &placement.all)) {
      return;
    }
    cpu_set_t elsewhere = placement.all;
    CPU_CLR(here, &elsewhere);
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return;
    if (pthread_attr_setaffinity_np(&attributes, sizeof elsewhere, &elsewhere) == 0) {
      placement.process = ::getpid();
      placement.started = pthread_create(&placement.helper, &attributes, placeWorkers, &placement) == 0;
    }
    pthread_attr_destroy(&attributes);
  });
}
#endif

}  // namespace dpx::core
