#pragma once
// UTF-8 as the CLI and the JSON reader meet it: well-formedness by the Unicode Standard's
// table 3-7 (no overlong forms, no surrogates, nothing above U+10FFFF), code points for counting
// columns, and Unicode's white space for trimming what a terminal may paste around a number.
#include <cstddef>
#include <string>
#include <string_view>

namespace dpx::core {

// The length of the well-formed sequence `text` starts with; 0 when it starts ill-formed (or is
// empty).
std::size_t utf8SequenceLength(std::string_view text);

// The code points of `text`; each byte of an ill-formed sequence reads as U+FFFD.
std::u32string decodeUtf8(std::string_view text);
std::string encodeUtf8(std::u32string_view points);

// White space as Unicode (and QChar::isSpace) defines it: the ASCII controls \t–\r, space, U+0085,
// no-break spaces, the U+2000 block's spaces, line and paragraph separators, U+3000.
bool isUnicodeSpace(char32_t c);

// `text` without white space at either end. The bytes in between are returned as they are: an
// ill-formed sequence is never turned into something well-formed (a stray byte before a digit
// must not vanish).
std::string_view trimmedUtf8(std::string_view text);

}  // namespace dpx::core
