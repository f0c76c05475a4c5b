// dpx: the headless command line of DP Explorer (see app/cli/cli.h).
#include <malloc.h>

#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  // dpx lives for one computation. Memory it frees is kept for its next allocations instead of
  // going back to the kernel, which would zero every page again when it is touched: an exact
  // composition spent a third of its time in such page faults.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return dpx::cli::run(dpx::cli::Arguments(argv, argv + argc), std::cout, std::cerr);
}
