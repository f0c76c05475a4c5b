// Number formatting shared by the CLI, reports and the GUI: 10 significant digits, as the `dpx` JSON contract fixes
// them.
#pragma once

#include <string>

namespace dpx::core {

// "%.10g" of a finite value; "nan"/"inf" only ever appear if a caller breaks the contract.
std::string formatNumber(double value, int significantDigits = 10);

// A calibrated value as printed must keep its promise when typed back in: the smallest number
// ≥ value (the largest ≤ value) that formatNumber prints exactly at these digits. For value > 0
// (others are returned as they are).
double roundedUpToPrinted(double value, int significantDigits = 10);
double roundedDownToPrinted(double value, int significantDigits = 10);

// A wait as people say it: "8 s", "4 min 10 s", "2 h 5 min" (seconds ≥ 0; rounded to whole
// seconds, or to minutes beyond an hour).
std::string formatDuration(double seconds);

}  // namespace dpx::core
