#include "common/utf8.h"

namespace dpx::core {

std::size_t utf8SequenceLength(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](std::size_t i, unsigned char low = 0x80, unsigned char high = 0xBF) {
    return i < text.size() && byte(i) >= low && byte(i) <= high;
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned char low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned char high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned char low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned char high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

namespace {

// The code point of the well-formed sequence of `length` bytes at the start of `text`.
char32_t codePoint(std::string_view text, std::size_t length) {
  const auto lead = static_cast<unsigned char>(text[0]);
  char32_t cp = length == 1 ? lead : length == 2 ? (lead & 0x1Fu) : length == 3 ? (lead & 0x0Fu) : (lead & 0x07u);
  for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[k]) & 0x3Fu);
  return cp;
}

}  // namespace

std::u32string decodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8SequenceLength(text.substr(i));
    out.push_back(length == 0 ? U'\uFFFD' : codePoint(text.substr(i), length));
    i += length == 0 ? 1 : length;
  }
  return out;
}

std::string encodeUtf8(std::u32string_view points) {
  std::string out;
  for (char32_t cp : points) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

bool isUnicodeSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string_view trimmedUtf8(std::string_view text) {
  std::size_t first = 0;
  std::size_t last = text.size();
  while (first < last) {
    const std::size_t length = utf8SequenceLength(text.substr(first, last - first));
    if (length == 0 || !isUnicodeSpace(codePoint(text.substr(first), length))) break;
    first += length;
  }
  while (last > first) {
    // The last sequence starts at most three continuation bytes back.
    std::size_t start = last - 1;
    while (start > first && last - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const std::size_t length = utf8SequenceLength(text.substr(start, last - start));
    if (length != last - start || !isUnicodeSpace(codePoint(text.substr(start), length))) break;
    last = start;
  }
  return text.substr(first, last - first);
}

}  // namespace dpx::core
