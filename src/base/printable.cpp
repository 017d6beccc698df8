#include "base/printable.hpp"

#include "base/utf8.hpp"

#include <fmt/core.h>

namespace redlockrun {

namespace {

void escape_byte(std::string& out, unsigned char byte) {
    switch (byte) {
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
        out += fmt::format("\\x{:02x}", byte);
    }
}

} // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t at = 0;
    while (at < text.size()) {
        const auto byte = static_cast<unsigned char>(text[at]);
        if (byte < 0x80) {
            if (byte < 0x20 || byte == 0x7f) {
                escape_byte(out, byte);
            } else {
                out.push_back(static_cast<char>(byte));
            }
            ++at;
            continue;
        }
        char32_t code_point = 0;
        const size_t length = utf8_sequence(text, at, code_point);
        if (length == 0 || code_point <= 0x9f || is_bidi_control(code_point)) {
            // Not UTF-8, a C1 control or a bidirectional control: escape the bytes one by one.
            const size_t count = length == 0 ? 1 : length;
            for (size_t i = 0; i < count; ++i) {
                escape_byte(out, static_cast<unsigned char>(text[at + i]));
            }
            at += count;
            continue;
        }
        out.append(text.substr(at, length));
        at += length;
    }
    return out;
}

} // namespace redlockrun
