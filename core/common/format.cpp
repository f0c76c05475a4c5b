#include "common/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace dpx::core {

// to_chars and from_chars: printf's %g and strtod in the "C" locale, whatever locale the process
// runs in (the explorer's QApplication sets the user's: in de_DE, %g wrote "2,5", and JSON exports
// and printed values broke).
std::string formatNumber(double value, int significantDigits) {
  char buffer[128];  // enough for any double at up to 100 digits
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general,
                                       std::clamp(significantDigits, 1, 100));
  return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

namespace {

double readBack(double value, int significantDigits) {
  const std::string printed = formatNumber(value, significantDigits);
  double out = value;
  std::from_chars(printed.data(), printed.data() + printed.size(), out);
  return out;
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

std::string formatDuration(double seconds) {
  if (!(seconds >= 0.0)) seconds = 0.0;
  if (seconds < 59.5) return std::to_string(std::lround(std::max(seconds, seconds > 0.0 ? 1.0 : 0.0))) + " s";
  if (seconds < 3600.0 - 0.5) {
    const long total = std::lround(seconds);
    const long minutes = total / 60;
    const long rest = total % 60;
    return std::to_string(minutes) + " min" + (rest != 0 ? " " + std::to_string(rest) + " s" : std::string());
  }
  const long totalMinutes = std::lround(seconds / 60.0);
  const long hours = totalMinutes / 60;
  const long minutes = totalMinutes % 60;
  return std::to_string(hours) + " h" + (minutes != 0 ? " " + std::to_string(minutes) + " min" : std::string());
}

}  // namespace dpx::core
