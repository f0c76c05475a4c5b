// Number formatting shared by the CLI, reports and the GUI: 10 significant digits, as the `dpx` JSON contract fixes
// them.
#pragma once

#include <string>

namespace dpx::core {

// "%.10g" of a finite value; "nan"/"inf" only ever appear if a caller breaks the contract.
std::string formatNumber(double value, int significantDigits = 10);

}  // namespace dpx::core
