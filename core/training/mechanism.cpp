#include "training/mechanism.h"

#include <algorithm>
#include <array>
#include <string>

#include "accounting/cyclic_accountant.h"
#include "accounting/gdp_accountant.h"
#include "accounting/output_perturbation_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/sgmcmc_accountant.h"

namespace dpx::core::training {
namespace {

// The ids of accountants, read from the registry on first use.
template <class... Kinds>
std::span<const std::string_view> idsOf() {
  static const std::array<std::string_view, sizeof...(Kinds)> ids{accounting::accountantOf<Kinds>().id()...};
  return ids;
}

// Display order = the order of the enum. Made on first use, like the registry it reads.
const std::array<MechanismInfo, 6>& infos() {
  using namespace accounting;
  static const std::array<MechanismInfo, 6> table{{
      {Mechanism::kDpSgld, "dp-sgld", "DP-SGLD (Langevin, last iterate)", Sampling::kUniform, false, false,
       idsOf<SgldAccountant>(), Optimizer::kSgd, "Ryffel, Bach & Pointcheval 2022, Alg. 1"},
      {Mechanism::kDpSgd, "dp-sgd", "DP-SGD (Poisson, clipped)", Sampling::kPoisson, true, false,
       idsOf<RdpAccountant, GdpAccountant, PldAccountant, RandomAllocationAccountant>(), Optimizer::kSgd,
       "Abadi et al. 2016; Bu, Dong, Long & Su 2020, NoisySGD"},
      {Mechanism::kCyclic, "cyclic", "Cyclic DP-SGD (last iterate)", Sampling::kCyclic, false, true,
       idsOf<CyclicAccountant>(), Optimizer::kSgd, "Kong & Ribero 2024"},
      {Mechanism::kOutpert, "outpert", "Output perturbation", Sampling::kShuffle, false, true,
       idsOf<OutputPerturbationAccountant>(), Optimizer::kSgd, "Chen, Lee & Kifer 2019, Prop. 2 and 3"},
      {Mechanism::kSgldPosterior, "sgld-posterior", "SGLD posterior sampling", Sampling::kPoisson, true, false,
       idsOf<SgmcmcAccountant>(), Optimizer::kSgd, "Li, Chen, Liu & Carin 2019, Alg. 1"},
      {Mechanism::kSgd,
       "sgd",
       "SGD (not private)",
       Sampling::kShuffle,
       false,
       true,
       {},
       Optimizer::kMomentum,
       "non-private baseline"},
  }};
  return table;
}

constexpr std::array<Mechanism, 6> kAll{Mechanism::kDpSgld,  Mechanism::kDpSgd,         Mechanism::kCyclic,
                                        Mechanism::kOutpert, Mechanism::kSgldPosterior, Mechanism::kSgd};

}  // namespace

std::span<const MechanismInfo> mechanismInfos() { return infos(); }

const MechanismInfo& mechanismInfo(Mechanism m) {
  for (const MechanismInfo& info : infos()) {
    if (info.mechanism == m) return info;
  }
  return infos().back();
}

std::span<const Mechanism> allMechanisms() { return kAll; }
std::string_view mechanismId(Mechanism m) { return mechanismInfo(m).id; }
std::string_view mechanismName(Mechanism m) { return mechanismInfo(m).name; }

std::optional<Mechanism> parseMechanism(std::string_view id) {
  for (const MechanismInfo& info : infos()) {
    if (info.id == id) return info.mechanism;
  }
  return std::nullopt;
}

std::string mechanismIdList(bool privateOnly) {
  std::string list;
  for (const MechanismInfo& info : infos()) {
    if (privateOnly && info.accountants.empty()) continue;
    if (!list.empty()) list += ", ";
    list += info.id;
  }
  return list;
}

std::span<const std::string_view> accountantsFor(Mechanism m) { return mechanismInfo(m).accountants; }
bool clipsWithUserNorm(Mechanism m) { return mechanismInfo(m).clipsWithUserNorm; }
bool isPrivate(Mechanism m) { return !mechanismInfo(m).accountants.empty(); }
Optimizer defaultOptimizer(Mechanism m) { return mechanismInfo(m).optimizer; }

Result<std::string> resolveAccountant(Mechanism mechanism, const std::string& requested,
                                      std::optional<Sampling> sampling) {
  const auto accountants = accountantsFor(mechanism);
  if (accountants.empty()) return std::string();
  if (requested.empty()) {
    // The first analysis of the batching the run uses (balls-in-bins DP-SGD: random allocation),
    // else the mechanism's first.
    if (sampling && *sampling != mechanismInfo(mechanism).sampling) {
      for (std::string_view id : accountants) {
        const accounting::Accountant* a = accounting::findAccountant(id);
        if (a && a->assumptions().sampling == *sampling) return std::string(id);
      }
    }
    return std::string(accountants.front());
  }
  const std::string& id = requested;
  if (std::find(accountants.begin(), accountants.end(), id) != accountants.end()) return id;
  std::string allowed;
  for (std::string_view a : accountants) allowed += (allowed.empty() ? "" : ", ") + std::string(a);
  return Status::invalidArgument("accountant '" + id + "' does not analyse " + std::string(mechanismId(mechanism)) +
                                 ": use " + allowed);
}

}  // namespace dpx::core::training
