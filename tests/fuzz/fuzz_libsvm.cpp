// libFuzzer harness for parseLibsvm (core/training/libsvm_loader.cpp): sparse "label index:value"
// text, with the scaling and a feature limit chosen by byte 0 (fuzz_inputs.h), must give a clean
// Status or a well-formed dataset. The dense n×d matrix is the interesting allocation: a few bytes
// can name index 10⁴ on 10⁵ lines, and it must be refused against maxBytes before it is made.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.h"
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const auto parsed = dpx::fuzz::runLibsvm(input);
  if (parsed.isOk()) {
    const auto options = dpx::fuzz::libsvmOptions(size > 0 ? data[0] : 0);
    if (const std::string defect = dpx::fuzz::datasetDefect(*parsed, options); !defect.empty()) {
      dpx::fuzz::invariantFailed("fuzz_libsvm", defect);
    }
  } else if (parsed.status().message().empty()) {
    dpx::fuzz::invariantFailed("fuzz_libsvm", "error status without a message");
  }
  return 0;
}
