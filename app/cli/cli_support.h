// Parsing shared by the dpx subcommands: strict numbers, the knob flags (--n, --sigma, …) and the
// one-line error messages.
#pragma once

#include <QCommandLineParser>
#include <QString>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::cli {

struct Io {
  std::ostream& out;
  std::ostream& err;
  std::string command;  // "epsilon", used in messages: "dpx epsilon: …"
};

std::string toStd(const QString& text);

// The whole text must be a finite number ("1e-5" is fine, "1.5x", "nan", "" are not).
core::Result<double> parseNumber(const QString& flag, const QString& text);

// A parser with --help, the knob flags and the given extra options.
void addKnobOptions(QCommandLineParser& parser);
void addOption(QCommandLineParser& parser, const QString& name, const QString& description,
               const QString& valueName = {});

// Parses args; on --help prints the help and returns 0; on failure prints one line and
// returns 2; otherwise returns std::nullopt and the caller goes on.
std::optional<int> parseOrExit(QCommandLineParser& parser, const QStringList& args, Io& io, const QString& summary);

// Knob flags → Params (defaults of Params for the flags not given), validated. For training,
// n and K come from the data and --epochs, so they are neither read nor cross-checked.
enum class KnobContext { kAccounting, kTraining };
core::Result<core::Params> knobsFromParser(const QCommandLineParser& parser,
                                           KnobContext context = KnobContext::kAccounting);
// --conversion, --alphas, --alpha (fixes α), --variant.
core::Result<core::accounting::EpsilonOptions> epsilonOptionsFromParser(const QCommandLineParser& parser,
                                                                        bool withVariant = true);
// A required or optional numeric option.
core::Result<double> numberOption(const QCommandLineParser& parser, const QString& name);
core::Result<std::vector<double>> numberList(const QString& flag, const QString& text);
// --target-epsilon, required and > 0 (calibrate, stepsize, utility; train when it is given).
// A command that writes CSV by default takes --json or --csv, not both.
core::Status oneOutputFormat(const QCommandLineParser& parser);
core::Result<double> targetEpsilonOption(const QCommandLineParser& parser);

// A flag that names one of a few values (--schedule, --conversion, --vary, …): parse(text), or
// "--flag 'text': must be <accepted>".
template <typename T>
core::Result<T> parseNamed(const QString& flag, const QString& text, std::optional<T> (*parse)(std::string_view),
                           const std::string& accepted) {
  const std::string name = toStd(text);
  if (std::optional<T> value = parse(name)) return *value;
  return core::Status::invalidArgument("--" + toStd(flag) + " '" + name + "': must be " + accepted);
}

// "dpx <command>: <message>" and the exit status for the status code.
int fail(Io& io, const core::Status& status);

}  // namespace dpx::cli
