#include "cli.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "commands.h"
#include "common/library_versions.h"

namespace dpx::cli {
namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Arguments&, Io&);
};

constexpr std::array<Command, 15> kCommands{{
    {"epsilon", "ε at δ from one accountant or all", commandEpsilon},
    {"rdp", "total Rényi DP ε_α of the run at given orders", commandRdp},  // id-literal-ok: a command name
    {"delta", "δ at a given ε", commandDelta},
    {"curve", "ε as a function of K, epochs, σ, n, m or η", commandCurve},
    {"tradeoff", "trade-off curve (type II vs type I error): G_μ or an accountant's", commandTradeoff},
    {"calibrate", "σ with ε(σ) ≤ a target ε, or attack TPR/advantage ≤ a target (conservative)", commandCalibrate},
    {"stepsize", "step-size bounds of private SGLD and smoothness limits", commandStepsize},
    {"train", "train a model with a DP mechanism and report accuracy and ε spent", commandTrain},
    {"audit", "membership-inference audit of a trained model: empirical ε lower bound", commandAudit},
    {"frontier", "privacy–utility frontier: accuracy against ε (or epochs), calibrated runs over seeds",
     commandFrontier},
    {"utility", "utility bounds: DP-SGLD excess risk, SGLD posterior-average MSE", commandUtility},
    {"check", "configuration mismatches that break a reported ε (exit 1 on an error)", commandCheck},
    {"statement", "the run's privacy statement: every accountant's verdict, re-checkable JSON", commandStatement},
    {"verify", "recompute a privacy statement and compare every field (exit 1 naming differences)", commandVerify},
    {"reproduce", "run a published experiment: its accuracy beside the measured one over seeds", commandReproduce},
}};

void printUsage(std::ostream& out) {
  out << "Usage: dpx <command> [options]\n\n"
         "DP Explorer's command line: privacy accountants, step-size bounds, a private trainer and\n"
         "a membership-inference audit. JSON (--json) is the machine interface.\n\n"
         "Commands:\n";
  for (const Command& c : kCommands) {
    out << "  " << c.name << std::string(12 - c.name.size(), ' ') << c.summary << "\n";
  }
  out << "\nRun 'dpx <command> --help' for a command's options. Knob flags shared by all commands:\n"
         "  --n --m --sigma --eta --K --epochs --alpha --delta --L --lambda --beta --w --M --D\n"
         "  --schedule constant|decreasing --sampling poisson|uniform|cyclic|shuffle|balls-in-bins --averaged\n"
         "  --selections k --steps-per-epoch t (balls-in-bins, random-allocation)\n"
         "  --optimizer sgd|momentum|adam\n"
         "Exit status: 0 ok, 1 computation not possible (message says why), 2 invalid input.\n"
         "'dpx --version' prints the version and those of the libraries it was built with.\n";
}

}  // namespace

int run(const Arguments& arguments, std::ostream& out, std::ostream& err) {
  if (arguments.size() < 2) {
    err << "dpx: no command given (commands: ";
    for (std::size_t i = 0; i < kCommands.size(); ++i) err << (i ? ", " : "") << kCommands[i].name;
    err << "; see dpx --help)\n";
    return kExitUsage;
  }
  const std::string& first = arguments.at(1);
  if (first == "--help" || first == "-h" || first == "help") {
    printUsage(out);
    return kExitOk;
  }
  if (first == "--version" || first == "-v") {
    out << "dpx " << DPX_VERSION << "\n";
    for (const core::LibraryVersion& library : core::libraryVersions()) {
      out << library.name << " " << library.version << "\n";
    }
    return kExitOk;
  }
  const std::string& name = first;
  for (const Command& c : kCommands) {
    if (c.name != name) continue;
    Io io{out, err, name};
    Arguments args(arguments.begin() + 1, arguments.end());
    args[0] = "dpx";
    return c.run(args, io);
  }
  err << "dpx: unknown command '" << name << "' (commands: ";
  for (std::size_t i = 0; i < kCommands.size(); ++i) err << (i ? ", " : "") << kCommands[i].name;
  err << "; see dpx --help)\n";
  return kExitUsage;
}

}  // namespace dpx::cli
