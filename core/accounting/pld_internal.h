// What the translation units of the privacy loss distributions share and their users never need:
// kept out of privacy_loss_distribution.h, whose declarations are the API.
#pragma once

#include <limits>

#include "common/status.h"

namespace dpx::core::accounting::pld::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What a computation that saw ComputeControl::cancel set returns.
Status cancelledStatus();

}  // namespace dpx::core::accounting::pld::detail
