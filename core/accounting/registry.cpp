#include "accounting/registry.h"

#include <array>
#include <tuple>

#include "accounting/cyclic_accountant.h"
#include "accounting/deterministic_accountant.h"
#include "accounting/gdp_accountant.h"
#include "accounting/heuristic_last_iterate_accountant.h"
#include "accounting/output_perturbation_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"
#include "accounting/shuffle_accountant.h"

namespace dpx::core::accounting {
namespace {

// One instance of each accountant, made on first use (so a static initialiser elsewhere may
// already ask for them), in the order given.
template <typename... Kinds>
std::span<const Accountant* const> instances() {
  static const std::tuple<Kinds...> accountants;
  static const std::array<const Accountant*, sizeof...(Kinds)> pointers =
      std::apply([](const Kinds&... a) { return std::array<const Accountant*, sizeof...(Kinds)>{&a...}; }, accountants);
  return pointers;
}

}  // namespace

std::span<const Accountant* const> allAccountants() {
  // Display order (tables, legends, `dpx epsilon --accountant all`).
  return instances<RdpAccountant, GdpAccountant, PldAccountant, SgldAccountant, CyclicAccountant,
                   OutputPerturbationAccountant, HeuristicLastIterateAccountant, SgmcmcAccountant,
                   DeterministicAccountant, ShuffleAccountant, RandomAllocationAccountant>();
}

const Accountant* findAccountant(std::string_view id) {
  for (const Accountant* a : allAccountants()) {
    if (a->id() == id) return a;
  }
  return nullptr;
}

std::string accountantIdList() {
  std::string list;
  for (const Accountant* a : allAccountants()) {
    if (!list.empty()) list += ", ";
    list += a->id();
  }
  return list;
}

}  // namespace dpx::core::accounting
