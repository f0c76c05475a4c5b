// placeParallelWorkers(): the worker it creates, and every thread that later runs a parallel
// piece, may use every core the process may (only the helper's start is placed), and calling
// it again does nothing.
#include <sched.h>

#include <QTest>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "common/parallel.h"
#include "common/worker_placement.h"

namespace {

bool sameMask(const cpu_set_t& a, const cpu_set_t& b) { return CPU_EQUAL(&a, &b); }

}  // namespace

class TestWorkerPlacement : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void workersKeepTheProcessMask() {
    cpu_set_t process;
    QCOMPARE(sched_getaffinity(0, sizeof process, &process), 0);
    dpx::core::placeParallelWorkers();
    dpx::core::placeParallelWorkers();  // once per process
    // As a command parses its flags: the helper has created the worker before this thread's loop.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<std::thread::id, cpu_set_t> masks;
    // Two pieces, the first waiting (up to 5 s, for a loaded machine) until another thread has
    // taken the second: both oneTBB threads record their masks.
    dpx::core::parallelFor(0, 2, [&](int) {
      cpu_set_t mine;
      if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);  // reported as a narrowed mask
      std::unique_lock lock(mutex);
      masks.emplace(std::this_thread::get_id(), mine);
      arrived.notify_all();
      arrived.wait_for(lock, std::chrono::seconds(5), [&] { return masks.size() >= 2; });
    });
    QVERIFY(!masks.empty());
    for (const auto& [thread, mask] : masks) QVERIFY2(sameMask(mask, process), "a thread kept a narrowed CPU mask");
    if (dpx::core::parallelRuntime() == dpx::core::ParallelRuntime::oneTbb && CPU_COUNT(&process) >= 2) {
      QVERIFY2(masks.size() >= 2, "no worker ran a piece");
    }
  }
};

QTEST_GUILESS_MAIN(TestWorkerPlacement)
#include "tst_worker_placement.moc"
