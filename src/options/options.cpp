#include "options/options.hpp"

#include "base/fatal.hpp"
#include "options/reporting.hpp"

#include <fmt/core.h>

#include <charconv>

namespace redlockrun {

namespace {

Millis duration_option(const Setting& setting) {
    auto duration = parse_duration(setting.value);
    if (!duration) {
        throw UsageError(fmt::format("{}: '{}' {}", setting.origin, setting.value,
                                     explain_bad_duration(setting.value)));
    }
    return *duration;
}

int exit_code_option(const Setting& setting) {
    const std::string& text = setting.value;
    int code = -1;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), code);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || code < 0 ||
        code > 255) {
        throw UsageError(
            fmt::format("{}: '{}' is not an exit status from 0 to 255", setting.origin, text));
    }
    return code;
}

// A whole number from `low` to `high`; `what` names it in the message ("holders").
int count_option(const Setting& setting, int low, int high, const char* what) {
    const std::string& text = setting.value;
    int count = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || count < low ||
        count > high) {
        throw UsageError(fmt::format("{}: '{}' is not a number of {} from {} to {}", setting.origin,
                                     text, what, low, high));
    }
    return count;
}

// --owner: a pid, or none.
HoldOwner owner_option(const Setting& setting) {
    if (setting.value == "none") {
        return HoldOwner{true, 0};
    }
    const std::string& text = setting.value;
    int pid = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || pid <= 1) {
        throw UsageError(
            fmt::format("{}: '{}' is neither a process id nor none", setting.origin, text));
    }
    return HoldOwner{false, pid};
}

// The first of the options given that only a holder uses, which --status and --list refuse.
const char* refused_with_a_reading(const Options& options) {
    if (options.limit != 1) {
        return "--limit";
    }
    if (options.shared) {
        return "--shared";
    }
    if (options.supersede) {
        return "--supersede";
    }
    return options.min_hold.count() > 0 ? "--min-hold" : "--note";
}

std::optional<std::string> value_of(const std::optional<Setting>& setting) {
    return setting ? std::optional(setting->value) : std::nullopt;
}

} // namespace

Options to_options(const OptionText& text) {
    Options options;
    options.key = text.key ? text.key->value : "";
    options.no_wait = text.no_wait;
    if (text.wait) {
        options.wait = duration_option(*text.wait);
    }
    if (text.ttl) {
        options.ttl = duration_option(*text.ttl);
        if (options.ttl < min_ttl) {
            throw UsageError(
                fmt::format("{} must be at least {}", text.ttl->origin, format_duration(min_ttl)));
        }
    }
    options.renew = !text.no_renew;
    options.shared = text.shared;
    options.exclusive = text.exclusive;
    options.supersede = text.supersede;
    if (text.on_lost) {
        if (text.on_lost->value == "term") {
            options.on_lost = OnLost::term;
        } else if (text.on_lost->value == "ignore") {
            options.on_lost = OnLost::ignore;
        } else {
            throw UsageError(fmt::format("{}: '{}' is neither term nor ignore",
                                         text.on_lost->origin, text.on_lost->value));
        }
    }
    if (text.kill_after) {
        options.kill_after = duration_option(*text.kill_after);
    }
    if (text.lost_exit_code) {
        options.lost_exit_code = exit_code_option(*text.lost_exit_code);
    }
    if (text.timestamp_unit) {
        auto unit = lock::parse_unit(text.timestamp_unit->value);
        if (!unit) {
            throw UsageError(fmt::format("{}: '{}' is neither ms nor s",
                                         text.timestamp_unit->origin, text.timestamp_unit->value));
        }
        options.timestamp_unit = *unit;
    }
    if (text.conflict_exit_code) {
        options.conflict_exit_code = exit_code_option(*text.conflict_exit_code);
    }
    if (text.min_hold) {
        options.min_hold = duration_option(*text.min_hold);
    }
    if (text.limit) {
        options.limit = count_option(*text.limit, 1, max_limit, "holders");
    }
    if (text.note) {
        if (text.note->value.size() > max_note_bytes) {
            throw UsageError(fmt::format("{} is {} bytes long; a note may be at most {} bytes",
                                         text.note->origin, text.note->value.size(),
                                         max_note_bytes));
        }
        options.note = text.note->value;
    }
    options.shell_command = value_of(text.shell_command);
    options.command = text.command;
    options.url = value_of(text.url);
    options.password_file = value_of(text.password_file);
    options.sentinel_user = value_of(text.sentinel_user);
    options.sentinel_password_file = value_of(text.sentinel_password_file);
    options.tls = {value_of(text.tls_ca_file), value_of(text.tls_cert), value_of(text.tls_key),
                   value_of(text.tls_server_name)};
    if (text.connect_timeout) {
        options.connect_timeout = duration_option(*text.connect_timeout);
        if (options.connect_timeout.count() <= 0) {
            throw UsageError(fmt::format("{} must be more than 0", text.connect_timeout->origin));
        }
    }
    if (text.replicas) {
        options.replicas = count_option(*text.replicas, 0, max_replicas, "replicas");
    }
    options.status = text.status;
    options.json = text.json;
    options.held = text.held;
    if (text.list) {
        if (text.list->value.empty()) {
            throw UsageError(fmt::format(
                "{}: an empty pattern matches no lock (without one, every lock is listed)",
                text.list->origin));
        }
        options.list_pattern = text.list->value;
    }
    options.hold = text.hold;
    options.break_lock = text.break_lock;
    if (text.owner) {
        options.owner = owner_option(*text.owner);
    }
    if (text.max_hold) {
        options.max_hold = duration_option(*text.max_hold);
        // A shorter hold could end before the script that took it had read its handle.
        if (*options.max_hold < min_max_hold) {
            throw UsageError(fmt::format("{} must be {} or more: a shorter hold would end before "
                                         "the script could use it",
                                         text.max_hold->origin, format_duration(min_max_hold)));
        }
    }
    options.release_handle = value_of(text.release);
    options.check_handle = value_of(text.check);
    if (text.quiet && text.verbose) {
        throw UsageError("-q and -v exclude each other");
    }
    options.verbosity =
        text.quiet ? Verbosity::quiet : (text.verbose ? Verbosity::verbose : Verbosity::normal);
    options.log = log_settings_of(text);
    options.metrics_file = value_of(text.metrics_file);
    if (options.metrics_file && options.metrics_file->empty()) {
        throw UsageError(fmt::format("{} names no file", text.metrics_file->origin));
    }
    return options;
}

namespace {

// --release and --check find the lock from the handle alone.
void validate_hold_handle_use(const Options& options) {
    const char* name = options.release_handle ? "--release" : "--check";
    if (options.release_handle && options.check_handle) {
        throw UsageError("--release and --check exclude each other");
    }
    if (!options.key.empty()) {
        throw UsageError(fmt::format("{} takes no -k: the handle names the lock", name));
    }
    if (!options.command.empty() || options.shell_command) {
        throw UsageError(fmt::format("{} takes no command", name));
    }
    if (options.hold || options.break_lock || options.status || options.list_pattern ||
        options.json || options.owner || options.max_hold || !options.note.empty()) {
        throw UsageError(fmt::format("{} goes with none of --hold, --break, --status, --list, "
                                     "--json, --owner, --max-hold and --note",
                                     name));
    }
}

// --break names one lock and does nothing else.
void validate_break(const Options& options) {
    if (options.key.empty()) {
        throw UsageError("a lock key is required: -k KEY");
    }
    if (!options.command.empty() || options.shell_command) {
        throw UsageError("--break takes no command");
    }
    if (options.status || options.list_pattern || options.json || options.limit != 1 ||
        options.shared || options.supersede || options.min_hold.count() > 0) {
        throw UsageError("--break goes with none of --status, --list, --json, --limit, --shared, "
                         "--supersede and --min-hold: it ends every holder's claim, whatever its "
                         "mode");
    }
}

void validate_hold(const Options& options) {
    if (!options.hold) {
        if (options.owner || options.max_hold) {
            throw UsageError(
                fmt::format("{} goes with --hold only", options.owner ? "--owner" : "--max-hold"));
        }
        return;
    }
    if (options.key.empty()) {
        throw UsageError("a lock key is required: -k KEY");
    }
    if (!options.command.empty() || options.shell_command) {
        throw UsageError("--hold takes no command: it holds the lock for the commands that "
                         "follow it in the script");
    }
    if (options.status || options.list_pattern || options.break_lock) {
        throw UsageError(fmt::format(
            "--hold and {} exclude each other",
            options.status ? "--status" : (options.list_pattern ? "--list" : "--break")));
    }
    if (options.json && options.conflict_exit_code == 0) {
        throw UsageError("--hold --json and -E 0 exclude each other: a lock not taken would be "
                         "reported as status 0 with no JSON to tell it from a hold");
    }
    if (options.owner && options.owner->none && !options.max_hold) {
        throw UsageError("--owner none needs --max-hold: a hold that no process owns must end "
                         "by itself");
    }
    if (options.no_wait && options.wait) {
        throw UsageError("-n and -w exclude each other (-w 0 is the same as -n)");
    }
}

// -s and -x name two modes; --limit is a third.
void validate_mode(const Options& options) {
    if (options.shared && options.exclusive) {
        throw UsageError("-s (--shared) and -x (--exclusive) exclude each other");
    }
    if (options.shared && options.limit != 1) {
        throw UsageError("--shared and --limit exclude each other: shared holders and a "
                         "semaphore's are two kinds of lock");
    }
    if (options.exclusive && options.limit != 1) {
        throw UsageError("-x (--exclusive) and --limit exclude each other: --limit lets several "
                         "holders in");
    }
}

} // namespace

void validate(const Options& options) {
    validate_mode(options);
    if (options.supersede && (options.no_wait || (options.wait && options.wait->count() == 0))) {
        throw UsageError(fmt::format("--supersede and {} exclude each other: --supersede ends "
                                     "earlier waiters when this run waits, and it never does",
                                     options.no_wait ? "-n" : "-w 0"));
    }
    // First: a --held that any other action would leave unread is refused, whatever it is.
    if (options.held && !options.list_pattern) {
        throw UsageError("--held goes with --list only");
    }
    if (options.release_handle || options.check_handle) {
        validate_hold_handle_use(options);
        return;
    }
    validate_hold(options);
    if (options.hold) {
        return;
    }
    if (options.break_lock) {
        validate_break(options);
        return;
    }
    if (options.json && !options.status && !options.list_pattern) {
        throw UsageError("--json goes with --status, --list or --hold only");
    }
    if (options.list_pattern) {
        // --list finds the keys itself, runs nothing, and is a status of many locks, not of one.
        if (!options.key.empty()) {
            throw UsageError("--list and -k exclude each other: --list finds the locks itself");
        }
        if (options.status) {
            throw UsageError("--list and --status exclude each other");
        }
        if (!options.command.empty() || options.shell_command) {
            throw UsageError("--list takes no command");
        }
        if (options.limit != 1 || options.shared || options.supersede ||
            options.min_hold.count() > 0 || !options.note.empty()) {
            throw UsageError(fmt::format("--list takes no {}: it only reads the locks",
                                         refused_with_a_reading(options)));
        }
        return;
    }
    if (options.key.empty()) {
        throw UsageError("a lock key is required: -k KEY");
    }
    if (options.status) {
        if (!options.command.empty() || options.shell_command) {
            throw UsageError("--status takes no command");
        }
        if (options.limit != 1 || options.shared || options.supersede ||
            options.min_hold.count() > 0 || !options.note.empty()) {
            throw UsageError(fmt::format("--status takes no {}: it only reads the lock",
                                         refused_with_a_reading(options)));
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
}

} // namespace redlockrun
