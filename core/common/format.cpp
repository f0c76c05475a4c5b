#include "common/format.h"

#include <cstdio>

namespace dpx::core {

std::string formatNumber(double value, int significantDigits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significantDigits, value);
  return buffer;
}

}  // namespace dpx::core
