// --help's text, in util-linux's layout: the usage summary, a heading per group of options, each
// option's names in a column of their own and its description beside them (broken where it has
// '\n', the lines after the first indented a little further), then durations and exit statuses.
// The options come from their declarations (options/cli.cpp); this file only lays them out.
#pragma once

#include <string>
#include <vector>

namespace redlockrun {

struct HelpEntry {
    std::string group;              // "Lock", "Connection"...
    std::string short_name;         // "n", or empty
    std::vector<std::string> names; // the long names: "no-wait", "nb"
    std::string value;              // "<duration>", or empty for a flag
    bool value_optional = false;    // "--list [<pattern>]"
    std::string description;
};

// The entries in the order given, grouped under their group's heading in the order the groups
// first appear.
std::string format_help(const std::vector<HelpEntry>& entries);

} // namespace redlockrun
