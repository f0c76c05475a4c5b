// The accountants DP Explorer knows, in display order. Each one's AccountantInfo (id, name,
// citation, assumptions, variants, native keys, colour) is what every consumer reads.
#pragma once

#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "accounting/accountant.h"

namespace dpx::core::accounting {

std::span<const Accountant* const> allAccountants();
const Accountant* findAccountant(std::string_view id);
// "rdp, gdp, pld, …" for messages.
std::string accountantIdList();

// The registry's instance of the accountant class A, for code that means one analysis in
// particular: it names the class, and the id is read from it (accountantOf<PldAccountant>().id()),
// so an id is written only in its accountant's AccountantInfo. A must be registered in
// allAccountants() (include its header to call it).
template <class A>
const A& accountantOf() {
  static_assert(std::is_base_of_v<Accountant, A> && std::is_final_v<A>, "accountantOf<A>: A is one accountant");
  static const A* const instance = [] {
    for (const Accountant* a : allAccountants()) {
      if (const auto* match = dynamic_cast<const A*>(a)) return match;
    }
    return static_cast<const A*>(nullptr);
  }();
  if (instance == nullptr) std::abort();  // A is not in allAccountants()
  return *instance;
}

}  // namespace dpx::core::accounting
