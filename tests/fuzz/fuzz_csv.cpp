// libFuzzer harness for parseCsv (core/training/csv_loader.cpp): any bytes, under every header,
// delimiter, label-column and scaling option (byte 0, fuzz_inputs.h), must give a clean Status or
// a well-formed dataset — never a crash, a hang, an allocation beyond the 16 MB limit, or a
// non-finite feature.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.h"
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const auto parsed = dpx::fuzz::runCsv(input);
  if (parsed.isOk()) {
    const auto options = dpx::fuzz::csvOptions(size > 0 ? data[0] : 0);
    if (const std::string defect = dpx::fuzz::datasetDefect(*parsed, options); !defect.empty()) {
      dpx::fuzz::invariantFailed("fuzz_csv", defect);
    }
  } else if (parsed.status().message().empty()) {
    dpx::fuzz::invariantFailed("fuzz_csv", "error status without a message");
  }
  return 0;
}
