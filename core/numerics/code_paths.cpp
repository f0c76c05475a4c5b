#include "numerics/code_paths.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace dpx::core::numerics {
namespace {

std::atomic<bool>& portableFlag() {
  static std::atomic<bool> flag = [] {
    const char* value = std::getenv("DPX_PORTABLE_NUMERICS");
    return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
  }();
  return flag;
}

}  // namespace

bool portableNumerics() { return portableFlag().load(std::memory_order_relaxed); }

void setPortableNumerics(bool portable) { portableFlag().store(portable, std::memory_order_relaxed); }

}  // namespace dpx::core::numerics
