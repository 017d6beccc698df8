#include "base/utf8.hpp"

namespace redlockrun {

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

} // namespace redlockrun
