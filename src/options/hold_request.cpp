#include "options/hold_request.hpp"

#include <string_view>

namespace redlockrun {

namespace {

// A handle as --hold prints it is an absolute path. Anything else (an empty word, a word that
// starts with '-', a relative path) is left to the full parse, which knows how CLI11 reads it.
bool is_handle_word(std::string_view word) {
    return word.starts_with('/');
}

} // namespace

std::optional<OptionText> read_hold_request(int argc, const char* const* argv) {
    OptionText text;
    for (int i = 1; i < argc; ++i) {
        const std::string_view word = argv[i];
        if (word == "-q" || word == "--quiet") {
            if (text.quiet || text.verbose) {
                return std::nullopt;
            }
            text.quiet = true;
            continue;
        }
        if (word == "-v" || word == "--verbose") {
            if (text.quiet || text.verbose) {
                return std::nullopt;
            }
            text.verbose = true;
            continue;
        }
        const bool release = word.starts_with("--release");
        const bool check = word.starts_with("--check");
        if (!release && !check) {
            return std::nullopt;
        }
        if (text.release || text.check) {
            return std::nullopt;
        }
        const std::string_view name = release ? "--release" : "--check";
        const std::string_view rest = word.substr(name.size());
        std::string handle;
        if (rest.starts_with('=') && is_handle_word(rest.substr(1))) {
            handle = rest.substr(1);
        } else if (!rest.empty()) {
            return std::nullopt;
        } else if (i + 1 < argc && is_handle_word(argv[i + 1])) {
            handle = argv[++i];
        } else if (i + 1 < argc && !std::string_view(argv[i + 1]).starts_with('-')) {
            return std::nullopt; // a handle that is not a path, or a command: the full parse's
        }
        (release ? text.release : text.check) = Setting{std::move(handle), std::string(name)};
    }
    if (!text.release && !text.check) {
        return std::nullopt;
    }
    return text;
}

} // namespace redlockrun
