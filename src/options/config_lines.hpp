// The lines of a config file (DESIGN.md §10), each read as `entry = value` before CLI11's reader
// sees the text: that reader takes what it cannot read for something else (a file whose lines end
// in a lone CR for one comment, "url: x" for an entry named "url: x", an entry repeated on the
// next line for a list), so every line it would misread is refused here, naming its line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun {

struct ConfigEntry {
    size_t line = 0;
    std::string name;                 // unquoted
    std::optional<std::string> value; // as written, quotes and all; none for a bare name
};

struct ConfigLines {
    std::vector<ConfigEntry> entries; // each name once, in the file's order
    // The text for CLI11's reader: the same lines, without comments and CRs, so that what it reads
    // is exactly what was checked here.
    std::string text;
};

// Accepted: lines ending in LF or CR LF (the last one may end without), blank lines, comments
// from a '#' outside quotes, `[default]` (the top level, as in CLI11), and `name = value` with
// spaces or tabs around, the name made of letters, digits, '-' and '_' (quoted or not), the value
// quoted with " or ' or not at all; a bare name, which cli.cpp refuses with a message of its own.
// Anything else is a Fatal (usage) "FILE, line N: what is wrong": a CR that does not end a line
// with LF, a byte-order mark, a NUL or another control character but tab, a line without '=', a
// name that is not one (dotted, empty, with spaces), an unclosed quote, a section, a name given
// twice.
ConfigLines read_config_lines(std::string_view text, const std::string& file);

} // namespace redlockrun
