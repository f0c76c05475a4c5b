// The run of a privacy statement as configuration for the training libraries people run DP-SGD
// with: Opacus (PyTorch) and JAX-Privacy (Keras 3 on JAX). Plain Python text to paste, with
// comments saying which library versions it targets and where the library's run differs from
// the statement's (Opacus samples at q = 1/⌈n/m⌉ when m does not divide n). DP Explorer
// depends on neither library.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "accounting/privacy_statement.h"
#include "common/params.h"

namespace dpx::core::accounting {

enum class HandoffTarget { kOpacus, kJaxPrivacy };

std::string_view handoffName(HandoffTarget target);  // "opacus" | "jax-privacy"
std::optional<HandoffTarget> parseHandoff(std::string_view text);

// The snippet for the run; `bound` (the statement's DP-SGD ε, if any) is quoted in comments
// and, for JAX-Privacy, is the budget its config checks the noise against.
std::string handoffSnippet(HandoffTarget target, const Params& params, const std::optional<DpSgdBound>& bound);
// The same from a statement.
std::string handoffSnippet(HandoffTarget target, const PrivacyStatement& statement);

// A Python float literal that reads back to the same double ("1.0", "1e-05", "0.0019305019305019305").
std::string pythonFloat(double value);

}  // namespace dpx::core::accounting
