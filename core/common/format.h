// Number formatting shared by the CLI, reports and the GUI: 10 significant digits (SPEC §5).
#pragma once

#include <string>

namespace dpx::core {

// "%.10g" of a finite value; "nan"/"inf" only ever appear if a caller breaks the contract.
std::string formatNumber(double value, int significantDigits = 10);

}  // namespace dpx::core
