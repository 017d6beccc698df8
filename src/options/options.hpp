// Everything a run is asked to do, as plain data: read by cli.cpp from the command line and the
// config files, converted by to_options(), checked by validate(), then acted on. No option lives
// anywhere else.
#pragma once

#include "base/duration.hpp"
#include "base/exit_status.hpp"
#include "base/log.hpp"
#include "lock/timestamp.hpp"
#include "options/option_text.hpp"
#include "redis/settings.hpp"
#include "redis/tls.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace redlockrun {

// What to do when the lock is lost while the command runs.
enum class OnLost { term, ignore };

// Whose hold it is (--owner): the keeper releases the lock when that process exits.
struct HoldOwner {
    bool none = false; // --owner none: only --release or --max-hold ends the hold
    int pid = 0;       // otherwise, the owner's pid
};

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
    Millis min_hold{0};     // --min-hold; 0: released at once when the command ends
    int limit = 1;          // --limit; 1: an exclusive lock
    bool shared = false;    // -s: a shared lock
    bool exclusive = false; // -x was given: the default, said out loud (as in flock(1))
    bool supersede = false; // --supersede: a newer waiter ends earlier ones that asked for it too
    std::string note;       // --note; empty: none
    int conflict_exit_code = to_int(ExitStatus::not_acquired); // -E
    std::optional<std::string> shell_command;                  // -c
    std::vector<std::string> command;                          // after the options
    std::optional<std::string> url;                            // -u
    std::optional<std::string> password_file;
    std::optional<std::string> sentinel_user;          // --sentinel-user
    std::optional<std::string> sentinel_password_file; // --sentinel-password-file
    redis::TlsOptions tls;                             // --tls-*
    // What the config files say about the connection, the file that wins first: it comes after
    // the environment, so redis/settings.cpp puts it in its place.
    std::vector<redis::FileConnection> config_files;
    Millis connect_timeout{5000};
    int replicas = 0;    // --replicas: WAIT for this many after every grant and renewal
    bool status = false; // --status
    bool json = false;   // --json
    std::optional<std::string> list_pattern; // --list
    bool held = false;                       // --held: --list shows the held locks only
    bool hold = false;                       // --hold
    bool break_lock = false;                 // --break
    std::optional<HoldOwner> owner;          // --owner; none: the script that ran --hold
    std::optional<Millis> max_hold;          // --max-hold
    // --release and --check: the handle given, "" for $REDLOCKRUN_HOLD's.
    std::optional<std::string> release_handle;
    std::optional<std::string> check_handle;
    Verbosity verbosity = Verbosity::normal; // -q / -v
    LogSettings log;                         // --log-format, --syslog, --syslog-facility
    std::optional<std::string> metrics_file; // --metrics-file
};

inline constexpr Millis min_ttl{100};
// The shortest --max-hold: a hold must outlast the moment its handle is printed.
inline constexpr Millis min_max_hold{1000};
// Every script call of a semaphore reads all its holders' records, so N stays small.
inline constexpr int max_limit = 100;
inline constexpr int max_replicas = 100;
// A note is a line for people (a deploy id, a CI job's URL), and every holder's is read with each
// --status and --list.
inline constexpr std::size_t max_note_bytes = 256;

// Converts every value, or throws UsageError naming where the bad one was written (a TTL below
// min_ttl is one). The connection settings of config files are not in `text`: configuration.cpp
// adds them.
Options to_options(const OptionText& text);

// Throws UsageError for combinations that make no sense: no key, no command, both a command and
// -c, a command with --status, -n with -w, -s with -x or --limit, --limit, -s, --min-hold or
// --note with --status, --json
// without --status, --list or --hold, --list with a key, a command or --status; a command with
// --hold, --owner none without --max-hold, --owner or --max-hold without --hold; --release and
// --check with anything that names a lock or a command.
void validate(const Options& options);

} // namespace redlockrun
