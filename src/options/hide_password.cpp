#include "options/hide_password.hpp"

#include "redis/endpoint.hpp"

#include <cstring>
#include <optional>
#include <string_view>

namespace redlockrun {

namespace {

// What a password becomes: one character, whatever its length, so that what ps shows says nothing
// of it. One, because a password may be one character long, and the words cannot grow.
constexpr char mask = '*';

// Where in `word` the password is, if `word` is one of `urls` as an option's value: "URL",
// "--url=URL", "-uURL".
std::optional<redis::TextSpan> password_in(std::string_view word,
                                           const std::vector<std::string>& urls) {
    for (const auto& url : urls) {
        if (!word.ends_with(url) || (word.size() != url.size() && !word.starts_with('-'))) {
            continue;
        }
        if (const auto span = redis::password_span(url)) {
            return redis::TextSpan{word.size() - url.size() + span->start, span->length};
        }
    }
    return std::nullopt;
}

// Whether the words are one block, each right after the one before it, as the kernel lays argv out
// (and /proc/PID/cmdline reads it).
bool one_block(int argc, char** argv) {
    for (int i = 0; i + 1 < argc; ++i) {
        if (argv[i] + std::strlen(argv[i]) + 1 != argv[i + 1]) {
            return false;
        }
    }
    return true;
}

// Copies `word` to `out` (which is not after it), its password replaced by the mask; returns
// where the copy ends, after its NUL.
char* copy_blotted(char* out, const char* word, const std::optional<redis::TextSpan>& password) {
    const size_t size = std::strlen(word);
    if (!password) {
        std::memmove(out, word, size + 1);
        return out + size + 1;
    }
    const size_t after = password->start + password->length;
    std::memmove(out, word, password->start);
    out[password->start] = mask;
    std::memmove(out + password->start + 1, word + after, size - after + 1);
    return out + size - password->length + 2;
}

} // namespace

void hide_url_passwords(int argc, char** argv, const std::vector<std::string>& urls) {
    std::vector<std::optional<redis::TextSpan>> passwords(static_cast<size_t>(argc));
    int first = 0;
    for (int i = argc - 1; i >= 1; --i) {
        passwords[i] = password_in(argv[i], urls);
        first = passwords[i] ? i : first;
    }
    if (first == 0) {
        return;
    }
    if (!one_block(argc, argv)) {
        // Each word where it is, NULs after it: they would show as empty words.
        for (int i = first; i < argc; ++i) {
            if (passwords[i]) {
                const size_t size = std::strlen(argv[i]);
                char* end = copy_blotted(argv[i], argv[i], passwords[i]);
                std::memset(end, '\0', static_cast<size_t>(argv[i] + size + 1 - end));
            }
        }
        return;
    }
    // The words from the first password on move up behind the masks, and argv follows them; the
    // block keeps its size (the kernel's bounds of argv) and ends in the NULs that are left over,
    // which neither ps nor a reader of /proc/PID/cmdline that drops them shows.
    char* const end = argv[argc - 1] + std::strlen(argv[argc - 1]) + 1;
    char* out = argv[first];
    for (int i = first; i < argc; ++i) {
        char* const word = argv[i];
        argv[i] = out;
        out = copy_blotted(out, word, passwords[i]);
    }
    std::memset(out, '\0', static_cast<size_t>(end - out));
}

} // namespace redlockrun
