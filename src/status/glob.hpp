// Glob patterns as Redis matches them (SCAN's MATCH, KEYS), for --list's PATTERN: matched here, on
// the lock keys redlockrun derives from the names it scans, because the pattern is about the lock's
// key and the scan finds its companions.
//
//   *        any run of bytes, also an empty one      ?     any one byte
//   [abc]    one of these bytes; [a-z] a range (either way round), [^abc] any byte but these
//   \x       the byte x itself, also inside [...]
//
// Byte by byte and case-sensitive. Unlike fnmatch(3), '*' and '?' match '/' and a leading '.',
// only '^' negates a class ("[!a]" is '!' or 'a'), and a class that is not closed ends with the
// pattern.
#pragma once

#include <string_view>

namespace redlockrun {

bool glob_match(std::string_view pattern, std::string_view text);

} // namespace redlockrun
