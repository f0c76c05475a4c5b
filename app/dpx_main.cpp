// dpx: the headless command line of DP Explorer (see app/cli/cli.h).
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DPX_SANITIZED_PROCESS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DPX_SANITIZED_PROCESS 1
#endif
#endif

int main(int argc, char** argv) {
  const dpx::cli::Arguments arguments(argv, argv + argc);
  // dpx lives for one computation. Memory it frees is kept for its next allocations instead of
  // going back to the kernel, which would zero every page again when it is touched: an exact
  // composition spent a third of its time in such page faults.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  const int code = dpx::cli::run(arguments, std::cout, std::cerr);
#ifdef DPX_SANITIZED_PROCESS
  return code;  // the sanitizers' leak and race reports run at exit
#else
  // Everything the command writes is written and closed by now. What is left at exit are the
  // process's caches (discretised steps, composed runs, transform plans): freeing them one by one
  // cost 0.3–0.5 ms of a 9 ms exact composition, and the kernel reclaims their pages anyway.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // any C stream as well
  std::_Exit(code);
#endif
}
