// libFuzzer harness for parseIdx (core/training/idx_loader.cpp): the input is split into an images
// file and a labels file (byte 0: scaling, bytes 1-4: images length; fuzz_inputs.h), either of
// which may be gzipped. Header dimensions are 32-bit and may claim gigabytes: every claim must be
// checked against the bytes present and the limits before anything is allocated for it.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.h"
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const auto parsed = dpx::fuzz::runIdx(input);
  if (parsed.isOk()) {
    const auto split = dpx::fuzz::splitIdx(input);
    if (const std::string defect = dpx::fuzz::datasetDefect(*parsed, split.options); !defect.empty()) {
      dpx::fuzz::invariantFailed("fuzz_idx", defect);
    }
  } else if (parsed.status().message().empty()) {
    dpx::fuzz::invariantFailed("fuzz_idx", "error status without a message");
  }
  return 0;
}
