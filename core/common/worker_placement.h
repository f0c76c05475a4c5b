#pragma once
// Placing oneTBB's worker threads on other cores before a short process computes.
//
// Linux starts a new thread on its creator's core and moves it only at the next load-balancing
// tick (4 ms at HZ = 250). A dpx run lasts a few milliseconds: its first parallel loop created
// oneTBB's worker there, behind the busy main thread, and the run's two lanes of work ran one
// after the other on one core (measured: the worker joined 3.5 ms late in most runs; the exact
// bracket at K = 10³ took 6.5 ms instead of 5.5). The kernel does place a thread at once on a
// core its CPU mask names, so the worker is created from a thread whose mask leaves out the
// caller's core, and lets go of that mask as it joins its first arena.
//
// A long-lived process (the explorer) gains nothing: its workers exist by the time it computes.

namespace dpx::core {

// Once per process, from the thread that will compute: starts oneTBB's workers away from this
// thread's core, on a helper thread that finishes by itself (and is joined at exit). Returns at
// once. Does nothing when the process may use one core only, or in a ThreadSanitizer build
// (whose loops run on plain threads).
void placeParallelWorkers();

}  // namespace dpx::core
