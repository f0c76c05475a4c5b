#include "numerics/code_paths.h"

#include <cstdlib>
#include <cstring>

namespace dpx::core::numerics {

// Read once per process (a thread-safe static).
bool portableNumerics() {
  static const bool portable = [] {
    const char* value = std::getenv("DPX_PORTABLE_NUMERICS");
    return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
  }();
  return portable;
}

}  // namespace dpx::core::numerics
