#pragma once
// Placing oneTBB's worker threads on other cores before a short process computes.
//
// Linux starts a new thread on its creator's core and moves it only at the next load-balancing
// tick (4 ms at HZ = 250). A dpx run lasts a few milliseconds: its first parallel loop created
// oneTBB's worker there, behind the busy main thread, and the run's two lanes of work ran one
// after the other on one core (measured: the worker joined 3.5 ms late in most runs; the exact
// bracket at K = 10³ took 6.2 ms instead of 5.3). The kernel does start a thread at once on a
// core its attributes name, so a helper thread is created on another core and creates the
// worker there, from where it starts at once.
//
// A long-lived process (the explorer) gains nothing: its workers exist by the time it computes.

namespace dpx::core {

// Once per process, from the thread that will compute: creates oneTBB's first worker on a core
// other than this thread's, from a helper thread that ends by itself (joined at exit). Returns at
// once. The worker and the helper may run on every core the process may use (only the helper's
// start is placed). Does nothing when the process may use one core only, or in a
// ThreadSanitizer build (whose loops run on plain threads).
void placeParallelWorkers();

}  // namespace dpx::core
