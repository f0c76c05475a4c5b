#include "common/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dpx::core {

std::string formatNumber(double value, int significantDigits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significantDigits, value);
  return buffer;
}

namespace {

double readBack(double value, int significantDigits) {
  return std::strtod(formatNumber(value, significantDigits).c_str(), nullptr);
}

// One unit in the last printed digit of value.
double lastDigitUnit(double value, int significantDigits) {
  return std::pow(10.0, std::floor(std::log10(value)) - (significantDigits - 1));
}

}  // namespace

double roundedUpToPrinted(double value, int significantDigits) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const double printed = readBack(value, significantDigits);
  if (printed >= value) return printed;
  return readBack(printed + lastDigitUnit(value, significantDigits), significantDigits);
}

double roundedDownToPrinted(double value, int significantDigits) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const double printed = readBack(value, significantDigits);
  if (printed <= value) return printed;
  return readBack(printed - lastDigitUnit(value, significantDigits), significantDigits);
}

}  // namespace dpx::core
