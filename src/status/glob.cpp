#include "status/glob.hpp"

#include <utility>

namespace redlockrun {

namespace {

// Whether the class starting after the '[' at `at` matches `byte`; `at` moves past its ']' (or to
// the end of a pattern that does not close it).
bool class_matches(std::string_view pattern, size_t& at, unsigned char byte) {
    bool negated = false;
    if (at < pattern.size() && pattern[at] == '^') {
        negated = true;
        ++at;
    }
    bool matched = false;
    while (at < pattern.size() && pattern[at] != ']') {
        if (pattern[at] == '\\' && at + 1 < pattern.size()) {
            matched |= static_cast<unsigned char>(pattern[at + 1]) == byte;
            at += 2;
        } else if (at + 2 < pattern.size() && pattern[at + 1] == '-') {
            auto low = static_cast<unsigned char>(pattern[at]);
            auto high = static_cast<unsigned char>(pattern[at + 2]);
            if (low > high) {
                std::swap(low, high);
            }
            matched |= byte >= low && byte <= high;
            at += 3;
        } else {
            matched |= static_cast<unsigned char>(pattern[at]) == byte;
            ++at;
        }
    }
    if (at < pattern.size()) {
        ++at; // the ']'
    }
    return matched != negated;
}

// Whether the element of the pattern at `at` (anything but '*') matches `byte`; `at` moves past it.
bool element_matches(std::string_view pattern, size_t& at, unsigned char byte) {
    const char element = pattern[at++];
    switch (element) {
    case '?':
        return true;
    case '[':
        return class_matches(pattern, at, byte);
    case '\\':
        if (at < pattern.size()) {
            return static_cast<unsigned char>(pattern[at++]) == byte;
        }
        return byte == '\\'; // a backslash at the end stands for itself
    default:
        return static_cast<unsigned char>(element) == byte;
    }
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
    // Each element but '*' takes one byte, so only the last '*' needs to be tried again, one byte
    // further each time: no backtracking beyond it, and no exponential cost on "*a*a*a*b".
    size_t at = 0;
    size_t position = 0;
    size_t after_star = std::string_view::npos;
    size_t star_position = 0;
    while (position < text.size()) {
        if (at < pattern.size() && pattern[at] == '*') {
            while (at < pattern.size() && pattern[at] == '*') {
                ++at;
            }
            after_star = at;
            star_position = position;
            continue;
        }
        if (at < pattern.size() &&
            element_matches(pattern, at, static_cast<unsigned char>(text[position]))) {
            ++position;
            continue;
        }
        if (after_star == std::string_view::npos) {
            return false;
        }
        at = after_star;
        position = ++star_position;
    }
    while (at < pattern.size() && pattern[at] == '*') {
        ++at;
    }
    return at == pattern.size();
}

} // namespace redlockrun
