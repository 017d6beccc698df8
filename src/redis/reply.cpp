#include "redis/reply.hpp"

#include <fmt/core.h>

#include <charconv>

namespace redlockrun::redis {

std::string_view Reply::error_code() const {
    if (kind != Kind::error) {
        return {};
    }
    std::string_view code = text;
    return code.substr(0, code.find(' '));
}

std::optional<std::string_view> Reply::as_string() const {
    if (kind == Kind::string || kind == Kind::status) {
        return std::string_view(text);
    }
    return std::nullopt;
}

std::optional<long long> Reply::as_integer() const {
    if (kind == Kind::integer) {
        return integer;
    }
    // Hash fields come back as strings; accept a canonical decimal there too.
    if (kind == Kind::string) {
        long long value = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (!text.empty() && error == std::errc{} && end == text.data() + text.size()) {
            return value;
        }
    }
    return std::nullopt;
}

const Reply* Reply::at(size_t index) const {
    if (kind != Kind::array || index >= elements.size()) {
        return nullptr;
    }
    return &elements[index];
}

std::string Reply::describe() const {
    constexpr size_t max_text = 120;
    auto shorten = [](const std::string& s) {
        return s.size() <= max_text ? s : s.substr(0, max_text) + "...";
    };
    switch (kind) {
    case Kind::string:
        return fmt::format("\"{}\"", shorten(text));
    case Kind::status:
        return shorten(text);
    case Kind::error:
        return fmt::format("(error) {}", shorten(text));
    case Kind::integer:
        return fmt::format("(integer) {}", integer);
    case Kind::nil:
        return "(nil)";
    case Kind::array: {
        std::string out = "[";
        for (size_t i = 0; i < elements.size(); ++i) {
            out += (i == 0 ? "" : ", ") + elements[i].describe();
        }
        return out + "]";
    }
    }
    return "?";
}

} // namespace redlockrun::redis
