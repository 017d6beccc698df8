#include "printable.hpp"

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

// The length of the valid UTF-8 sequence starting at `at` (2 to 4 bytes), or 0 if there is none.
size_t utf8_sequence(std::string_view text, size_t at, char32_t& code_point) {
    const auto lead = static_cast<unsigned char>(text[at]);
    size_t length = 0;
    char32_t minimum = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        code_point = lead & 0x1fu;
        minimum = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        code_point = lead & 0x0fu;
        minimum = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        code_point = lead & 0x07u;
        minimum = 0x10000;
    } else {
        return 0;
    }
    if (at + length > text.size()) {
        return 0;
    }
    for (size_t i = 1; i < length; ++i) {
        const auto continuation = static_cast<unsigned char>(text[at + i]);
        if ((continuation & 0xc0u) != 0x80u) {
            return 0;
        }
        code_point = (code_point << 6) | (continuation & 0x3fu);
    }
    // Overlong forms, UTF-16 surrogates and code points beyond Unicode are not valid UTF-8.
    if (code_point < minimum || (code_point >= 0xd800 && code_point <= 0xdfff) ||
        code_point > 0x10ffff) {
        return 0;
    }
    return length;
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
        if (length == 0 || code_point <= 0x9f) {
            // Not UTF-8, or a C1 control: escape the bytes one by one.
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
