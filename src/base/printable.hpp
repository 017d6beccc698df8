// Text from outside redlockrun (keys, option values, file names, host names read back from Redis)
// made safe to echo on one line: a value must never be able to start a new line of its own or send
// a terminal control sequence. Every message passes through printable() on its way out.
#pragma once

#include <string>
#include <string_view>

namespace redlockrun {

// Control characters become C-style escapes (\n, \r, \t, \xHH), and so do bytes that are not valid
// UTF-8, the C1 controls (U+0080 to U+009F, which some terminals obey) and the bidirectional
// controls (U+202A to U+202E, U+2066 to U+2069, which reorder the rest of the line), byte by byte.
// Everything else, backslashes included, is left as it is: the result is for people to read, not
// to be parsed back.
std::string printable(std::string_view text);

} // namespace redlockrun
