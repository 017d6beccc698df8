// Reading UTF-8 one sequence at a time, for the escaping of text from outside redlockrun (a key can
// hold any bytes): printable() for people, json_string() for programs.
#pragma once

#include <cstddef>
#include <string_view>

namespace redlockrun {

// The length of the valid UTF-8 sequence of 2 to 4 bytes that starts at `at`, with its code point
// in `code_point`; 0 if there is none there (an ASCII byte, a stray continuation byte, a truncated
// or overlong sequence, an encoded UTF-16 surrogate, a code point beyond Unicode).
size_t utf8_sequence(std::string_view text, size_t at, char32_t& code_point);

// The bidirectional embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069): a
// terminal that honours them shows the rest of the line reordered, so that a key or a note could
// make a line read other than it is ("invoice<RLO>fdp.exe" shown as "invoiceexe.pdf").
constexpr bool is_bidi_control(char32_t code_point) {
    return (code_point >= 0x202a && code_point <= 0x202e) ||
           (code_point >= 0x2066 && code_point <= 0x2069);
}

} // namespace redlockrun
