#include "common/worker_placement.h"

#include <pthread.h>
#include <sched.h>

#include <mutex>

#include "common/parallel.h"

#ifndef DPX_PLAIN_THREADS_FOR_TSAN
#include <tbb/task_scheduler_observer.h>
#endif

namespace dpx::core {

#ifdef DPX_PLAIN_THREADS_FOR_TSAN
void placeParallelWorkers() {}
#else
namespace {

// Gives each worker the process's whole CPU mask back as it joins an arena (it inherited the
// placing thread's narrower one). Never destroyed: workers may join arenas until the process ends.
class FullMaskForWorkers final : public tbb::task_scheduler_observer {
 public:
  explicit FullMaskForWorkers(const cpu_set_t& all) : m_all(all) { observe(true); }
  void on_scheduler_entry(bool isWorker) override {
    if (isWorker) sched_setaffinity(0, sizeof m_all, &m_all);
  }

 private:
  cpu_set_t m_all;
};

// The placing thread: created on another core (its attributes carry the narrower mask, so the
// kernel starts it there), joined at exit.
struct PlacingThread {
  pthread_t thread{};
  bool started = false;
  cpu_set_t all{};
  ~PlacingThread() {
    if (started) pthread_join(thread, nullptr);
  }
};

void* place(void* argument) {
  const auto* placing = static_cast<const PlacingThread*>(argument);
  // Before this thread's first loop: the worker must not enter an arena unobserved.
  static FullMaskForWorkers* const observer = new FullMaskForWorkers(placing->all);
  (void)observer;
  // A loop of two pieces wakes the first worker, which oneTBB creates from this thread.
  parallelFor(0, 2, [](int) {});
  return nullptr;
}

}  // namespace

void placeParallelWorkers() {
  static std::once_flag once;
  static PlacingThread placing;
  std::call_once(once, [] {
    const int here = sched_getcpu();
    if (here < 0 || sched_getaffinity(0, sizeof placing.all, &placing.all) != 0 || CPU_COUNT(&placing.all) < 2 ||
        !CPU_ISSET(here, &placing.all)) {
      return;
    }
    cpu_set_t elsewhere = placing.all;
    CPU_CLR(here, &elsewhere);
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return;
    if (pthread_attr_setaffinity_np(&attributes, sizeof elsewhere, &elsewhere) == 0) {
      placing.started = pthread_create(&placing.thread, &attributes, place, &placing) == 0;
    }
    pthread_attr_destroy(&attributes);
  });
}
#endif

}  // namespace dpx::core
