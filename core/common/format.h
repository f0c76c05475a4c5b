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

}  // namespace dpx::core
