#pragma once
// Placing oneTBB's worker threads on other cores before a short process computes.
//
// Measured on the reference machine (a 2-core VM, Linux 6.x): a thread created by a busy thread
// started on its creator's core and moved only at a load-balancing tick, ~4 ms later, although
// the other core was idle. A dpx run lasts a few milliseconds: oneTBB's worker, created by the
// run's first parallel loop, joined at 4.3 ms in 3 of 4 runs, and the run's two lanes of work ran
// one after the other on one core (the exact bracket at K = 10³: median 6.2 ms instead of 5.3).
// A thread whose attributes name the other core does start there at once, so a helper thread is
// created there and creates the worker, which starts beside it.
//
// A long-lived process (the explorer) gains nothing: its workers exist by the time it computes.
// twoLanes (common/parallel.h) places its plain second thread the same way.

#include <pthread.h>

namespace dpx::core {

// Starts a thread running fn(arg) on a core other than the caller's; as it starts, it takes back
// the caller's mask (only its start is placed). False, and no thread, when the caller may use one
// core only or the thread could not be made.
bool startThreadElsewhere(pthread_t& thread, void* (*fn)(void*), void* arg);

// Once per process, from the thread that will compute: creates oneTBB's first worker on a core
// other than this thread's, from a helper thread that ends by itself once the worker has come
// (within 20 ms; at exit it is told to stop waiting, then joined). Returns at once. The helper
// starts on a core this thread's mask allows and may then run wherever this thread may; the
// worker gets the process's mask from oneTBB. Does nothing when this thread may use one core
// only, or in an executable whose loops run on plain threads (common/parallel.h).
void placeParallelWorkers();

}  // namespace dpx::core
