// The command line of one dpx subcommand: its options, their values after parsing, and its
// --help text. Plain C++ (dpx starts without loading a GUI toolkit: a run of an accountant is a
// few milliseconds, and loading Qt and ICU alone took over one).
//
// The grammar is the one dpx has always accepted (it was QCommandLineParser's, in its
// long-option mode): --name value, --name=value, -name value and -name=value all set an option;
// a one-letter name may be given as -n or --n; an option that takes a value takes the next
// argument whatever it starts with; "--" ends the options; a lone "-" is an argument.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dpx::cli {

// A program's arguments, UTF-8; the first is the program (or "dpx <command>").
using Arguments = std::vector<std::string>;

// One of a command's flags: --name <valueName>, or a switch when valueName is empty.
struct OptionSpec {
  std::string name;
  std::string description;
  std::string valueName;
};

class CommandLine {
 public:
  // `aliases`: further names of the same option (-h for --help). A hidden option is accepted
  // but not listed by helpText().
  void addOption(std::string name, std::string description, std::string valueName = {},
                 std::vector<std::string> aliases = {}, bool hidden = false);
  void addPositionalArgument(std::string name, std::string description);
  void setDescription(std::string description) { m_description = std::move(description); }

  // Parses args (args[0] is skipped). False on a mistake; mistake() and the accessors below say
  // which.
  bool parse(const Arguments& args);

  // After a failed parse: the kind of mistake (cli_support words the message). A mistake in a
  // value wins over unknown options, and of several mistakes in values the last is kept, as
  // QCommandLineParser did for dpx's first versions.
  enum class Mistake { kNone, kUnknownOptions, kMissingValue, kUnexpectedValue };
  Mistake mistake() const;
  // kMissingValue / kUnexpectedValue: the option as typed (before any '=').
  const std::string& mistakenOption() const { return m_valueMistakeOption; }
  // kUnknownOptions: the unknown names, dashes stripped, in the order met.
  const std::vector<std::string>& unknownOptionNames() const { return m_unknown; }
  // The first argument naming `name` (dashes and any "=value" stripped) as it was typed, or
  // "--name" when none does.
  std::string typed(std::string_view name) const;

  bool isSet(std::string_view name) const;
  // The last value given (an option given twice keeps the second); "" when not given.
  std::string value(std::string_view name) const;
  const std::vector<std::string>& positionalArguments() const { return m_positional; }
  // Every name an option answers to (aliases included; hidden ones left out), for hints.
  std::vector<std::string> optionNames() const;

  // "Usage: <usage> [options] [ARGS]", the description, the options with their descriptions
  // wrapped at 79 columns, then the positional arguments.
  std::string helpText(std::string_view usage) const;

 private:
  struct Option {
    std::vector<std::string> names;  // the first is the name values are stored under
    std::string description;
    std::string valueName;
    bool hidden = false;
    std::vector<std::string> values;
    bool set = false;
  };
  struct Positional {
    std::string name;
    std::string description;
  };
  Option* find(std::string_view name);
  const Option* find(std::string_view name) const;
  // Records an option found as `argument` (dashes stripped: `name`); reads its value from the
  // argument after '=' or from the next argument. False on a mistake, recorded for mistake().
  bool take(const std::string& name, const std::string& argument, Arguments::const_iterator& it,
            Arguments::const_iterator end);

  std::vector<Option> m_options;
  std::vector<Positional> m_positionalDefinitions;
  std::string m_description;
  Arguments m_arguments;  // as given to parse(), to name an unknown option as it was typed
  std::vector<std::string> m_positional;
  std::vector<std::string> m_unknown;  // names without dashes, in the order met
  // A mistake in an option's value: which, and the option as typed (the last one met).
  Mistake m_valueMistake = Mistake::kNone;
  std::string m_valueMistakeOption;
};

}  // namespace dpx::cli
