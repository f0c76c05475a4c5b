#include "training/mechanism.h"

#include <array>

namespace dpx::core::training {
namespace {

constexpr std::array<Mechanism, 6> kAll{Mechanism::kDpSgld, Mechanism::kDpSgd, Mechanism::kCyclic,
                                        Mechanism::kOutpert, Mechanism::kSgldPosterior, Mechanism::kSgd};
constexpr std::array<std::string_view, 3> kDpSgdAccountants{"rdp", "gdp", "pld"};
constexpr std::array<std::string_view, 1> kSgld{"sgld"};
constexpr std::array<std::string_view, 1> kCyclicAccountant{"cyclic"};
constexpr std::array<std::string_view, 1> kOutpertAccountant{"outpert"};
constexpr std::array<std::string_view, 1> kSgmcmc{"sgmcmc"};

}  // namespace

std::span<const Mechanism> allMechanisms() { return kAll; }

std::string_view mechanismId(Mechanism m) {
  switch (m) {
    case Mechanism::kDpSgld: return "dp-sgld";
    case Mechanism::kDpSgd: return "dp-sgd";
    case Mechanism::kCyclic: return "cyclic";
    case Mechanism::kOutpert: return "outpert";
    case Mechanism::kSgldPosterior: return "sgld-posterior";
    case Mechanism::kSgd: return "sgd";
  }
  return "sgd";
}

std::string_view mechanismName(Mechanism m) {
  switch (m) {
    case Mechanism::kDpSgld: return "DP-SGLD (Langevin, last iterate)";
    case Mechanism::kDpSgd: return "DP-SGD (Poisson, clipped)";
    case Mechanism::kCyclic: return "Cyclic DP-SGD (last iterate)";
    case Mechanism::kOutpert: return "Output perturbation";
    case Mechanism::kSgldPosterior: return "SGLD posterior sampling";
    case Mechanism::kSgd: return "SGD (not private)";
  }
  return "";
}

std::optional<Mechanism> parseMechanism(std::string_view id) {
  for (Mechanism m : kAll) {
    if (mechanismId(m) == id) return m;
  }
  return std::nullopt;
}

std::span<const std::string_view> accountantsFor(Mechanism m) {
  switch (m) {
    case Mechanism::kDpSgd: return kDpSgdAccountants;
    case Mechanism::kDpSgld: return kSgld;
    case Mechanism::kCyclic: return kCyclicAccountant;
    case Mechanism::kOutpert: return kOutpertAccountant;
    case Mechanism::kSgldPosterior: return kSgmcmc;
    case Mechanism::kSgd: return {};
  }
  return {};
}

bool clipsWithUserNorm(Mechanism m) { return m == Mechanism::kDpSgd || m == Mechanism::kSgldPosterior; }

}  // namespace dpx::core::training
