// The one way redlockrun talks to the user about itself: one line per message on stderr, prefixed
// "redlockrun: ", with control characters escaped (printable.hpp) so that no value quoted in it can
// forge a line. Messages never contain a password or the owner token; callers pass endpoints
// through redis::Endpoint::display(), which redacts credentials.
#pragma once

#include <fmt/core.h>

#include <string_view>

namespace redlockrun {

enum class Verbosity { quiet, normal, verbose };

class Logger {
public:
    explicit Logger(Verbosity verbosity = Verbosity::normal) : verbosity_(verbosity) {}

    void set_verbosity(Verbosity verbosity) { verbosity_ = verbosity; }

    // Always shown: a failure that decides the exit status, or a warning about safety.
    template <typename... Args>
    void error(fmt::format_string<Args...> format, Args&&... args) const {
        write(fmt::format(format, std::forward<Args>(args)...));
    }

    // Shown unless -q: "the lock is busy" and other expected, non-fatal news.
    template <typename... Args>
    void notice(fmt::format_string<Args...> format, Args&&... args) const {
        if (verbosity_ != Verbosity::quiet) {
            write(fmt::format(format, std::forward<Args>(args)...));
        }
    }

    // Shown only with -v: progress with timings.
    template <typename... Args>
    void info(fmt::format_string<Args...> format, Args&&... args) const {
        if (verbosity_ == Verbosity::verbose) {
            write(fmt::format(format, std::forward<Args>(args)...));
        }
    }

private:
    static void write(std::string_view line);

    Verbosity verbosity_;
};

} // namespace redlockrun
