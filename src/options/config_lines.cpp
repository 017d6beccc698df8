#include "options/config_lines.hpp"

#include "base/fatal.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

namespace redlockrun {

namespace {

constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";

Fatal line_error(const std::string& file, size_t line, const std::string& what) {
    return Fatal(ExitStatus::usage, fmt::format("{}, line {}: {}", file, line, what));
}

// Byte by byte, before lines are split: a lone CR would otherwise hide the line ends it stands
// for, and a NUL would cut every message that repeats the line.
void check_characters(std::string_view text, const std::string& file) {
    if (text.starts_with(byte_order_mark)) {
        throw line_error(file, 1,
                         "the file starts with a byte-order mark (U+FEFF): save it as UTF-8 "
                         "without one");
    }
    size_t line = 1;
    for (size_t at = 0; at < text.size(); ++at) {
        const auto byte = static_cast<unsigned char>(text[at]);
        if (byte == '\n') {
            ++line;
        } else if (byte == '\r') {
            if (at + 1 == text.size() || text[at + 1] != '\n') {
                throw line_error(file, line,
                                 "a carriage return (CR) ends a line where a newline (LF) should: "
                                 "save the file with LF (or CR LF) line ends");
            }
        } else if (byte == '\0') {
            throw line_error(file, line, "holds a NUL byte: a config file is text");
        } else if ((byte < 0x20 && byte != '\t') || byte == 0x7f) {
            throw line_error(file, line,
                             fmt::format("holds the control character \\x{:02x}", byte));
        }
    }
}

// The line up to a '#' outside quotes (a Sentinel URL in quotes ends in #MASTER).
std::string_view without_comment(std::string_view line) {
    char quote = 0;
    for (size_t at = 0; at < line.size(); ++at) {
        const char c = line[at];
        if (quote != 0) {
            quote = c == quote ? 0 : quote;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '#') {
            return line.substr(0, at);
        }
    }
    return line;
}

std::string_view trimmed(std::string_view text) {
    const auto start = text.find_first_not_of(" \t");
    if (start == std::string_view::npos) {
        return {};
    }
    return text.substr(start, text.find_last_not_of(" \t") - start + 1);
}

bool is_quoted(std::string_view text) {
    return text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
           text.back() == text.front();
}

bool is_name(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_';
    });
}

// "redis.url": a TOML table and an entry in it, which CLI11 would read as a section.
bool is_dotted_name(std::string_view text) {
    if (text.find('.') == std::string_view::npos) {
        return false;
    }
    while (!text.empty()) {
        const auto dot = text.find('.');
        if (!is_name(trimmed(text.substr(0, dot)))) {
            return false;
        }
        text = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
    }
    return true;
}

// One line, without its comment and line end: none for a line that says nothing.
std::optional<ConfigEntry> read_line(std::string_view line, size_t number,
                                     const std::string& file) {
    line = trimmed(without_comment(line));
    if (line.empty() || line == "[default]") {
        return std::nullopt;
    }
    if (line.front() == '[') {
        throw line_error(file, number,
                         fmt::format("{}: redlockrun's settings have no sections", line));
    }
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) {
        if (is_name(line)) {
            return ConfigEntry{number, std::string(line), std::nullopt};
        }
        throw line_error(file, number, "no '=': write entry = value");
    }
    std::string_view name = trimmed(line.substr(0, equals));
    if (name.empty()) {
        throw line_error(file, number, "no entry's name before '='");
    }
    if (is_quoted(name)) {
        name = name.substr(1, name.size() - 2);
    }
    if (is_dotted_name(name)) {
        throw line_error(file, number,
                         fmt::format("'{}' is a dotted name: redlockrun's entries have no "
                                     "sections, write {} = value",
                                     name, trimmed(name.substr(name.rfind('.') + 1))));
    }
    if (!is_name(name)) {
        throw line_error(file, number,
                         fmt::format("'{}' is not an entry's name: write entry = value", name));
    }
    const std::string_view value = trimmed(line.substr(equals + 1));
    if (!value.empty() && (value.front() == '"' || value.front() == '\'') && !is_quoted(value)) {
        throw line_error(file, number,
                         fmt::format("the quote that opens {}'s value is not closed", name));
    }
    return ConfigEntry{number, std::string(name), std::string(value)};
}

} // namespace

ConfigLines read_config_lines(std::string_view text, const std::string& file) {
    check_characters(text, file);
    ConfigLines lines;
    std::map<std::string, size_t, std::less<>> first_line;
    size_t number = 0;
    while (!text.empty()) {
        ++number;
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (line.ends_with('\r')) {
            line.remove_suffix(1);
        }
        auto entry = read_line(line, number, file);
        if (!entry) {
            lines.text += '\n'; // keeps CLI11's reader on the same line numbers
            continue;
        }
        if (const auto [earlier, first] = first_line.emplace(entry->name, number); !first) {
            throw line_error(
                file, number,
                fmt::format("{} is set twice (also on line {})", entry->name, earlier->second));
        }
        lines.text += entry->value ? fmt::format("{} = {}\n", entry->name, *entry->value)
                                   : entry->name + '\n';
        lines.entries.push_back(std::move(*entry));
    }
    return lines;
}

} // namespace redlockrun
