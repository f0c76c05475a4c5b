// The accountants DP Explorer knows, in display order. Each one's AccountantInfo (id, name,
// citation, assumptions, variants, native keys, colour) is what every consumer reads.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

std::span<const Accountant* const> allAccountants();
const Accountant* findAccountant(std::string_view id);
// "rdp, gdp, pld, …" for messages.
std::string accountantIdList();

}  // namespace dpx::core::accounting
