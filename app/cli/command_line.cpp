#include "command_line.h"

#include <algorithm>
#include <cstdint>

#include "common/utf8.h"

namespace dpx::cli {

using core::decodeUtf8;
using core::encodeUtf8;
using core::isUnicodeSpace;

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The part of an argument before its first '=' (all of it when there is none).
std::string_view beforeAssign(std::string_view argument) { return argument.substr(0, argument.find('=')); }

}  // namespace

namespace {

std::u32string padded(std::u32string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), U' ');
  return s;
}

// One option's help lines: its names in a column of `nameWidth` (wrapped if longer), the
// description wrapped at 79 columns. The rules are QCommandLineParser's, which laid out dpx's
// help before, kept to the letter so that the help stays byte for byte what scripts and docs
// quote: among them, after a break the loop resumes one character past the new line's start
// (`i = lineStart`, then the loop's ++i), and columns count characters (Qt counted UTF-16
// units: the same for every character dpx's help uses).
std::string wrapped(const std::u32string& names, std::size_t nameWidth, const std::u32string& description) {
  std::size_t nameIndex = 0;
  auto nextNameSection = [&] {
    std::u32string section = names.substr(std::min(nameIndex, names.size()), nameWidth);
    nameIndex += section.size();
    return section;
  };
  std::u32string text;
  std::size_t lineStart = 0;
  std::int64_t lastBreakable = -1;
  const auto max = static_cast<std::int64_t>(79 - (2 + nameWidth + 1));
  std::int64_t x = 0;
  const std::size_t len = description.size();
  for (std::size_t i = 0; i < len; ++i) {
    ++x;
    const char32_t c = description[i];
    if (isUnicodeSpace(c)) lastBreakable = static_cast<std::int64_t>(i);
    std::int64_t breakAt = -1;
    std::int64_t nextLineStart = -1;
    if (x > max && lastBreakable != -1) {
      breakAt = lastBreakable;
      nextLineStart = lastBreakable + 1;
    } else if ((x > max - 1 && lastBreakable == -1) || i == len - 1) {
      breakAt = static_cast<std::int64_t>(i) + 1;
      nextLineStart = breakAt;
    } else if (c == U'\n') {
      breakAt = static_cast<std::int64_t>(i);
      nextLineStart = breakAt + 1;
    }
    if (breakAt != -1) {
      const auto count = static_cast<std::size_t>(breakAt) - lineStart;
      text += U"  " + padded(nextNameSection(), nameWidth) + U' ';
      text += description.substr(lineStart, count);
      text += U'\n';
      x = 0;
      lastBreakable = -1;
      lineStart = static_cast<std::size_t>(nextLineStart);
      if (lineStart < len && isUnicodeSpace(description[lineStart])) ++lineStart;  // no line starts with a space
      i = lineStart;
    }
  }
  while (nameIndex < names.size()) text += U"  " + nextNameSection() + U'\n';
  return encodeUtf8(text);
}

}  // namespace

void CommandLine::addOption(std::string name, std::string description, std::string valueName,
                            std::vector<std::string> aliases, bool hidden) {
  Option o;
  o.names = std::move(aliases);
  o.names.insert(o.names.begin(), std::move(name));
  o.description = std::move(description);
  o.valueName = std::move(valueName);
  o.hidden = hidden;
  m_options.push_back(std::move(o));
}

void CommandLine::addPositionalArgument(std::string name, std::string description) {
  m_positionalDefinitions.push_back({std::move(name), std::move(description)});
}

CommandLine::Option* CommandLine::find(std::string_view name) {
  for (Option& o : m_options) {
    if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
  }
  return nullptr;
}

const CommandLine::Option* CommandLine::find(std::string_view name) const {
  return const_cast<CommandLine*>(this)->find(name);
}

bool CommandLine::take(const std::string& name, const std::string& argument, Arguments::const_iterator& it,
                       Arguments::const_iterator end) {
  Option* o = find(name);
  if (!o) {
    m_unknown.push_back(name);
    return false;
  }
  o->set = true;
  const std::size_t assign = argument.find('=');
  if (!o->valueName.empty()) {
    if (assign == std::string::npos) {
      ++it;
      if (it == end) {
        m_valueMistake = Mistake::kMissingValue;
        m_valueMistakeOption = argument;
        return false;
      }
      o->values.push_back(*it);
    } else {
      o->values.push_back(argument.substr(assign + 1));
    }
  } else if (assign != std::string::npos) {
    m_valueMistake = Mistake::kUnexpectedValue;
    m_valueMistakeOption = argument.substr(0, assign);
    return false;
  }
  return true;
}

bool CommandLine::parse(const Arguments& args) {
  m_arguments = args;
  m_positional.clear();
  m_unknown.clear();
  m_valueMistake = Mistake::kNone;
  m_valueMistakeOption.clear();
  for (Option& o : m_options) {
    o.values.clear();
    o.set = false;
  }
  bool ok = true;
  bool optionsEnded = false;
  const auto end = args.end();
  for (auto it = args.begin() + (args.empty() ? 0 : 1); it != end; ++it) {
    const std::string& argument = *it;
    if (optionsEnded) {
      m_positional.push_back(argument);
    } else if (startsWith(argument, "--")) {
      if (argument.size() > 2) {
        ok = take(std::string(beforeAssign(std::string_view(argument).substr(2))), argument, it, end) && ok;
      } else {
        optionsEnded = true;
      }
    } else if (startsWith(argument, "-") && argument.size() > 1) {
      ok = take(std::string(beforeAssign(std::string_view(argument).substr(1))), argument, it, end) && ok;
    } else {
      m_positional.push_back(argument);
    }
    if (it == end) break;
  }
  return ok;
}

CommandLine::Mistake CommandLine::mistake() const {
  if (m_valueMistake != Mistake::kNone) return m_valueMistake;
  return m_unknown.empty() ? Mistake::kNone : Mistake::kUnknownOptions;
}

std::string CommandLine::typed(std::string_view name) const {
  for (const std::string& argument : m_arguments) {
    const std::string_view asTyped = beforeAssign(argument);
    if (!startsWith(asTyped, "-")) continue;
    const std::size_t bare = std::min(asTyped.find_first_not_of('-'), asTyped.size());
    if (asTyped.substr(bare) == name) return std::string(asTyped);
  }
  return "--" + std::string(name);
}

bool CommandLine::isSet(std::string_view name) const {
  const Option* o = find(name);
  return o && o->set;
}

std::string CommandLine::value(std::string_view name) const {
  const Option* o = find(name);
  return o && !o->values.empty() ? o->values.back() : std::string();
}

std::string CommandLine::helpText(std::string_view usage) const {
  std::string text = "Usage: " + std::string(usage);
  if (!m_options.empty()) text += " [options]";
  for (const Positional& p : m_positionalDefinitions) text += " " + p.name;
  text += "\n";
  if (!m_description.empty()) text += m_description + "\n";
  text += "\n";
  if (!m_options.empty()) text += "Options:\n";
  std::vector<std::u32string> names;
  std::size_t longest = 0;
  for (const Option& o : m_options) {
    if (o.hidden) continue;
    std::string joined;
    for (const std::string& n : o.names)
      joined += (joined.empty() ? "" : ", ") + std::string(n.size() == 1 ? "-" : "--") + n;
    if (!o.valueName.empty()) joined += " <" + o.valueName + ">";
    names.push_back(decodeUtf8(joined));
    longest = std::max(longest, names.back().size());
  }
  const std::size_t width = std::min<std::size_t>(50, longest + 1);
  std::size_t k = 0;
  for (const Option& o : m_options) {
    if (o.hidden) continue;
    text += wrapped(names[k++], width, decodeUtf8(o.description));
  }
  if (!m_positionalDefinitions.empty()) {
    if (!m_options.empty()) text += "\n";
    text += "Arguments:\n";
    for (const Positional& p : m_positionalDefinitions)
      text += wrapped(decodeUtf8(p.name), width, decodeUtf8(p.description));
  }
  return text;
}

std::vector<std::string> CommandLine::optionNames() const {
  std::vector<std::string> names;
  for (const Option& option : m_options) {
    if (option.hidden) continue;
    names.insert(names.end(), option.names.begin(), option.names.end());
  }
  return names;
}

}  // namespace dpx::cli
