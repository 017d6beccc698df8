// Everything the command line asks for, as plain data: parsed by cli.cpp, checked by validate(),
// then acted on. No option lives anywhere else.
#pragma once

#include "duration.hpp"
#include "exit_status.hpp"
#include "lock/timestamp.hpp"
#include "log.hpp"
#include "redis/tls.hpp"

#include <optional>
#include <string>
#include <vector>

namespace redlockrun {

// What to do when the lock is lost while the command runs.
enum class OnLost { term, ignore };

struct Options {
    std::string key;                                    // -k
    bool no_wait = false;                               // -n
    std::optional<Millis> wait;                         // -w; none: forever
    Millis ttl{30000};                                  // -t
    bool renew = true;                                  // --no-renew turns it off
    OnLost on_lost = OnLost::term;                      // --on-lost
    Millis kill_after{10000};                           // --kill-after
    int lost_exit_code = to_int(ExitStatus::lock_lost); // --lost-exit-code
    lock::TimestampUnit timestamp_unit = lock::TimestampUnit::milliseconds;
    int conflict_exit_code = to_int(ExitStatus::not_acquired); // -E
    std::optional<std::string> shell_command;                  // -c
    std::vector<std::string> command;                          // after the options
    std::optional<std::string> url;                            // -u
    std::optional<std::string> password_file;
    redis::TlsOptions tls; // --tls-*
    Millis connect_timeout{5000};
    bool status = false;                     // --status
    Verbosity verbosity = Verbosity::normal; // -q / -v
};

inline constexpr Millis min_ttl{100};

// Throws UsageError for combinations that make no sense: no key, no command, both a command and
// -c, a command with --status, -n with -w, a TTL below min_ttl.
void validate(const Options& options);

} // namespace redlockrun
