#include "accounting/registry.h"

#include <array>
#include <string>

#include "accounting/cyclic_accountant.h"
#include "accounting/gdp_accountant.h"
#include "accounting/output_perturbation_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"

namespace dpx::core::accounting {
namespace {

const RdpAccountant kRdp;
const GdpAccountant kGdp;
const PldAccountant kPld;
const SgldAccountant kSgld;
const CyclicAccountant kCyclic;
const OutputPerturbationAccountant kOutpert;
const SgmcmcAccountant kSgmcmc;

const std::array<const Accountant*, 7> kAll{&kRdp, &kGdp, &kPld, &kSgld, &kCyclic, &kOutpert, &kSgmcmc};

}  // namespace

std::span<const Accountant* const> allAccountants() { return kAll; }

const Accountant* findAccountant(std::string_view id) {
  for (const Accountant* a : kAll) {
    if (a->id() == id) return a;
  }
  return nullptr;
}

std::string accountantIdList() {
  std::string list;
  for (const Accountant* a : kAll) {
    if (!list.empty()) list += ", ";
    list += a->id();
  }
  return list;
}

}  // namespace dpx::core::accounting
