// A deliberate data race inside dpx::core::parallelFor: the TSan step expects this program to be
// reported (ctest passes it only on a "data race" report), which shows that its green runs mean
// something — the loop's tasks really run on threads that TSan watches, and no suppression hides
// a race in our code.
#include <chrono>
#include <thread>

#include "common/parallel.h"

int main() {
  long unsynchronisedSum = 0;
  dpx::core::inArena(4, [&] {
    dpx::core::parallelFor(0, 100, [&](int i) {
      unsynchronisedSum += i;
      // Long enough that every thread of the arena takes tasks before the caller has done them all.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  });
  return unsynchronisedSum == 4950 ? 0 : 0;  // TSan's report decides, not the sum
}
