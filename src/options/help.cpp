#include "options/help.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string_view>

namespace redlockrun {

namespace {

constexpr std::string_view summary = R"(Usage:
 redlockrun [options] -k <key> [--] <command> [<argument>...]
 redlockrun [options] -k <key> -c <command-string>
 redlockrun [options] -k <key> --status [--json]
 redlockrun [options] --list [<pattern>] [--json]

Run a command while holding a lock in Redis, so that it never runs twice at
once, on any number of machines.)";

constexpr std::string_view footer =
    R"(Durations: 1.5 (seconds), 500ms, 30s, 1.5s, 2m, 1h, 1d, 1m30s.

Exit status: the command's own, or 128+N if signal N killed it;
 64 usage error, 65 the key is not a timestamp lock, 69 Redis unavailable,
 70 internal error, 71 system error, 75 lock not acquired, 76 lock lost,
 126 command not executable, 127 command not found.

For more details see redlockrun(1).
)";

constexpr size_t description_column = 31;
constexpr size_t continuation_column = 33;

// " -n, --no-wait, --nb", "     --ttl <duration>", "     --list [<pattern>]"
std::string names_of(const HelpEntry& entry) {
    std::string names =
        entry.short_name.empty() ? std::string(5, ' ') : fmt::format(" -{}, ", entry.short_name);
    const char* separator = "";
    for (const auto& name : entry.names) {
        names += fmt::format("{}--{}", separator, name);
        separator = ", ";
    }
    if (!entry.value.empty()) {
        names += entry.value_optional ? " [" + entry.value + "]" : " " + entry.value;
    }
    return names;
}

std::string line_of(const HelpEntry& entry) {
    std::string line = names_of(entry);
    if (line.size() + 2 > description_column) {
        line += "\n" + std::string(description_column, ' ');
    } else {
        line.resize(description_column, ' ');
    }
    std::string_view description = entry.description;
    for (bool first = true; !description.empty(); first = false) {
        const auto end = description.find('\n');
        if (!first) {
            line += std::string(continuation_column, ' ');
        }
        line += description.substr(0, end);
        line += '\n';
        description.remove_prefix(end == std::string_view::npos ? description.size() : end + 1);
    }
    return line;
}

} // namespace

std::string format_help(const std::vector<HelpEntry>& entries) {
    std::string help = fmt::format("{}\n\n", summary);
    std::vector<std::string> groups;
    for (const auto& entry : entries) {
        if (std::find(groups.begin(), groups.end(), entry.group) == groups.end()) {
            groups.push_back(entry.group);
        }
    }
    for (const auto& group : groups) {
        help += group + ":\n";
        for (const auto& entry : entries) {
            if (entry.group == group) {
                help += line_of(entry);
            }
        }
        help += "\n";
    }
    return help += footer;
}

} // namespace redlockrun
