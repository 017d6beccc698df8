#include "options.hpp"

#include "fatal.hpp"

#include <fmt/core.h>

namespace redlockrun {

void validate(const Options& options) {
    if (options.key.empty()) {
        throw UsageError("a lock key is required: -k KEY");
    }
    if (options.status) {
        if (!options.command.empty() || options.shell_command) {
            throw UsageError("--status takes no command");
        }
    } else if (options.command.empty() && !options.shell_command) {
        throw UsageError("no command to run: give one after the options, or -c STRING");
    } else if (!options.command.empty() && options.shell_command) {
        throw UsageError(fmt::format("-c STRING and a command ({}) exclude each other",
                                     options.command.front()));
    }
    if (options.no_wait && options.wait) {
        throw UsageError("-n and -w exclude each other (-w 0 is the same as -n)");
    }
    if (options.ttl < min_ttl) {
        throw UsageError(fmt::format("--ttl must be at least {}", format_duration(min_ttl)));
    }
    if (options.connect_timeout.count() <= 0) {
        throw UsageError("--connect-timeout must be more than 0");
    }
}

} // namespace redlockrun
