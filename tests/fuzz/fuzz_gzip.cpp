// libFuzzer harness for gunzip (core/training/idx_loader.cpp): any bytes, with the output limit
// chosen by byte 0 (fuzz_inputs.h), must give a clean Status or at most maxBytes of output; input
// that is not gzip passes through unchanged. Forged ISIZE trailers, concatenated members, padding
// and truncation are the cases of interest.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_check.h"
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const std::int64_t limit = dpx::fuzz::gzipLimit(input);
  const auto inflated = dpx::fuzz::runGzip(input);
  if (!inflated.isOk()) {
    if (inflated.status().message().empty()) dpx::fuzz::invariantFailed("fuzz_gzip", "error status without a message");
    return 0;
  }
  if (static_cast<std::int64_t>(inflated->size()) > limit) {
    dpx::fuzz::invariantFailed(
        "fuzz_gzip", std::to_string(inflated->size()) + " bytes out, above the limit of " + std::to_string(limit));
  }
  const auto body = input.empty() ? input : input.subspan(1);
  const bool gzip = body.size() >= 2 && body[0] == 0x1f && body[1] == 0x8b;
  if (!gzip && !std::equal(body.begin(), body.end(), inflated->begin(), inflated->end())) {
    dpx::fuzz::invariantFailed("fuzz_gzip", "input that is not gzip did not pass through unchanged");
  }
  return 0;
}
