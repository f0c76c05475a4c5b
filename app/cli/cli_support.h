// Parsing shared by the dpx subcommands: strict numbers, the knob flags (--n, --sigma, …) and the
// one-line error messages.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"
#include "command_line.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::cli {

struct Io {
  std::ostream& out;
  std::ostream& err;
  std::string command;  // "epsilon", used in messages: "dpx epsilon: …"
};

// The text without white space at either end (Unicode's, as a terminal may paste it); the bytes
// between are kept as given, well-formed or not.
std::string trimmed(std::string_view text);

// The whole text must be a finite number ("1e-5" is fine, "1.5x", "nan", "" are not).
core::Result<double> parseNumber(std::string_view flag, std::string_view text);

// The knob flags (--n, --sigma, …, --epochs, --schedule, --sampling, --neighbouring, --averaged).
void addKnobOptions(CommandLine& parser);

// Adds --help and parses args; on --help prints the help and returns 0; on failure prints one
// line and returns 2; otherwise returns std::nullopt and the caller goes on.
std::optional<int> parseOrExit(CommandLine& parser, const Arguments& args, Io& io, const std::string& summary);

// Knob flags → Params (defaults of Params for the flags not given), validated. For training,
// n and K come from the data and --epochs, so they are neither read nor cross-checked.
enum class KnobContext { kAccounting, kTraining };
core::Result<core::Params> knobsFromParser(const CommandLine& parser, KnobContext context = KnobContext::kAccounting);
// --conversion, --alphas, --alpha (fixes α), --variant.
core::Result<core::accounting::EpsilonOptions> epsilonOptionsFromParser(const CommandLine& parser,
                                                                        bool withVariant = true);
// A required or optional numeric option.
core::Result<double> numberOption(const CommandLine& parser, std::string_view name);
core::Result<std::vector<double>> numberList(std::string_view flag, std::string_view text);
// --target-epsilon, required and > 0 (calibrate, stepsize, utility; train when it is given).
// A command that writes CSV by default takes --json or --csv, not both.
core::Status oneOutputFormat(const CommandLine& parser);
core::Result<double> targetEpsilonOption(const CommandLine& parser);

// A flag that names one of a few values (--schedule, --conversion, --vary, …): parse(text), or
// "--flag 'text': must be <accepted>".
template <typename T>
core::Result<T> parseNamed(std::string_view flag, const std::string& text, std::optional<T> (*parse)(std::string_view),
                           const std::string& accepted) {
  if (std::optional<T> value = parse(text)) return *value;
  return core::Status::invalidArgument("--" + std::string(flag) + " '" + text + "': must be " + accepted);
}

// "dpx <command>: <message>" and the exit status for the status code.
int fail(Io& io, const core::Status& status);

}  // namespace dpx::cli
