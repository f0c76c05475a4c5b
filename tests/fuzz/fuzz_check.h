// What the harnesses in tests/fuzz do when an invariant fails: print the reason and abort, so
// libFuzzer records the input as a crash (build-fuzz/crashes/<harness>/).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dpx::fuzz {

[[noreturn]] inline void invariantFailed(const char* harness, const std::string& reason) {
  std::fprintf(stderr, "%s: invariant violated: %s\n", harness, reason.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace dpx::fuzz
