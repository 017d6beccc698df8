// JSON for programs that read redlockrun's output (--status --json, --list --json): one object per
// line, its fields in the order they were added. No parser and no dependency: redlockrun only
// writes JSON.
//
// A key (or a host name read back from Redis) can hold any bytes, so strings are escaped by a rule
// that loses nothing: valid UTF-8 is written as it is, except the control characters (U+0000 to
// U+001F, U+007F, the C1 controls U+0080 to U+009F and the bidirectional controls U+202A to U+202E
// and U+2066 to U+2069), which are written as \uXXXX (or \n, \t...), and every byte that is not
// part of valid UTF-8 is written as the lone surrogate \uDCXX, XX being the byte, as Python's
// "surrogateescape" error handler does. Python gets the exact bytes back with
// json.loads(line)[...].encode("utf-8", "surrogateescape"); strict parsers read such a surrogate
// as U+FFFD.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun {

// `bytes` as a JSON string, quotes included.
std::string json_string(std::string_view bytes);

// A JSON object written field by field. Names are given by the code, values come from anywhere.
class JsonObject {
public:
    // A string, or null when there is none.
    JsonObject& string(std::string_view name, const std::optional<std::string>& value);
    // An integer, or null when there is none.
    JsonObject& number(std::string_view name, std::optional<long long> value);
    // A value that is JSON already: an object or an array written by these functions.
    JsonObject& json(std::string_view name, std::string_view value);

    // The object, "{...}", on one line.
    std::string text() const { return "{" + fields_ + "}"; }

private:
    void name(std::string_view name);

    std::string fields_;
};

// A decimal integer read back from Redis (a pid, a fence), for JsonObject::number; none if the text
// is not one. Fences stay below 2^53, which every JSON reader holds exactly.
std::optional<long long> decimal_number(std::string_view text);

// An array of values that are JSON already, on one line.
std::string json_array(const std::vector<std::string>& values);

} // namespace redlockrun
