#include "base/json_writer.hpp"

#include "base/utf8.hpp"

#include <fmt/core.h>

#include <charconv>

namespace redlockrun {

namespace {

void escape_ascii(std::string& out, unsigned char byte) {
    switch (byte) {
    case '"':
        out += "\\\"";
        break;
    case '\\':
        out += "\\\\";
        break;
    case '\b':
        out += "\\b";
        break;
    case '\f':
        out += "\\f";
        break;
    case '\n':
        out += "\\n";
        break;
    case '\r':
        out += "\\r";
        break;
    case '\t':
        out += "\\t";
        break;
    default:
        if (byte < 0x20 || byte == 0x7f) {
            out += fmt::format("\\u{:04x}", byte);
        } else {
            out.push_back(static_cast<char>(byte));
        }
    }
}

} // namespace

std::string json_string(std::string_view bytes) {
    std::string out = "\"";
    out.reserve(bytes.size() + 2);
    size_t at = 0;
    while (at < bytes.size()) {
        const auto byte = static_cast<unsigned char>(bytes[at]);
        if (byte < 0x80) {
            escape_ascii(out, byte);
            ++at;
            continue;
        }
        char32_t code_point = 0;
        const size_t length = utf8_sequence(bytes, at, code_point);
        if (length == 0) {
            // Not UTF-8: the byte itself, as the low surrogate that stands for it.
            out += fmt::format("\\u{:04x}", 0xdc00u + byte);
            ++at;
        } else if (code_point <= 0x9f || is_bidi_control(code_point)) {
            // A C1 control, which some terminals obey when the output is shown on one, or a
            // bidirectional control, which reorders what they show: the same character, escaped.
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(code_point));
            at += length;
        } else {
            out.append(bytes.substr(at, length));
            at += length;
        }
    }
    out += '"';
    return out;
}

void JsonObject::name(std::string_view name) {
    if (!fields_.empty()) {
        fields_ += ',';
    }
    fields_ += json_string(name);
    fields_ += ':';
}

JsonObject& JsonObject::string(std::string_view name, const std::optional<std::string>& value) {
    this->name(name);
    fields_ += value ? json_string(*value) : "null";
    return *this;
}

JsonObject& JsonObject::number(std::string_view name, std::optional<long long> value) {
    this->name(name);
    fields_ += value ? std::to_string(*value) : "null";
    return *this;
}

JsonObject& JsonObject::json(std::string_view name, std::string_view value) {
    this->name(name);
    fields_ += value;
    return *this;
}

std::optional<long long> decimal_number(std::string_view text) {
    long long number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return number;
}

std::string json_array(const std::vector<std::string>& values) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        out += values[i];
    }
    return out + "]";
}

} // namespace redlockrun
