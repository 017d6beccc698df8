// A Redis reply as a plain value, independent of the RESP codec that produced it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun::redis {

struct Reply {
    enum class Kind { string, array, integer, nil, status, error };

    Kind kind = Kind::nil;
    std::string text; // string, status and error replies
    long long integer = 0;
    std::vector<Reply> elements;

    bool is_error() const { return kind == Kind::error; }
    bool is_nil() const { return kind == Kind::nil; }
    // The first word of an error reply ("NOSCRIPT", "WRONGPASS"...); empty for other replies.
    std::string_view error_code() const;

    // Typed access for decoding script replies: nothing when the reply is of another kind.
    std::optional<std::string_view> as_string() const;
    std::optional<long long> as_integer() const;
    // Element i of an array reply, or nullptr.
    const Reply* at(size_t index) const;

    // A short rendering for diagnostics, in the style of redis-cli: "(integer) 3", "(nil)".
    std::string describe() const;
};

} // namespace redlockrun::redis
