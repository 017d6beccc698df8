#include "app.hpp"

#include "base/fatal.hpp"
#include "base/log.hpp"
#include "base/version.hpp"
#include "hold/hold.hpp"
#include "options/cli.hpp"
#include "options/configuration.hpp"
#include "options/hide_password.hpp"
#include "options/hold_request.hpp"
#include "redis/settings.hpp"
#include "run/run_locked.hpp"
#include "run/standard_fds.hpp"
#include "status/break_lock.hpp"
#include "status/lock_listing.hpp"
#include "status/status_report.hpp"
#include "telemetry/metrics_file.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string_view>
#include <unistd.h>
#include <utility>

namespace redlockrun {

namespace {

// A --release or --check alone skips CLI11: the parse would cost more than the rest of the
// release, which a waiting run waits for (options/hold_request.hpp).
CommandLine read_command_line(int argc, char** argv) {
    if (auto request = read_hold_request(argc, argv)) {
        CommandLine line;
        line.options = std::move(*request);
        return line;
    }
    return parse_command_line(argc, argv);
}

int act(int argc, char** argv, const ConfigPlaces& places, Logger& log) {
    const CommandLine line = read_command_line(argc, argv);
    hide_url_passwords(argc, argv, line.url_values);
    switch (line.action) {
    case CommandLine::Action::help:
        std::fputs(help_text().c_str(), stdout);
        return 0;
    case CommandLine::Action::version:
        std::fputs(version_text().c_str(), stdout);
        return 0;
    case CommandLine::Action::run:
        break;
    }
    const Options options = configure(line.options, places);
    log.set_verbosity(options.verbosity);
    log.set_settings(options.log);
    if (!options.key.empty()) {
        log.set_lock(options.key, options.note.empty() ? std::nullopt
                                                       : std::optional<std::string>(options.note));
    }
    const auto getenv = [](const char* name) -> const char* { return std::getenv(name); };
    const auto find_settings = [&] {
        return redis::resolve_settings(
            redis::ConnectionRequest{options.url, options.password_file, options.connect_timeout,
                                     options.tls, options.config_files, options.sentinel_user,
                                     options.sentinel_password_file},
            getenv);
    };
    if (options.release_handle || options.check_handle) {
        // The keeper has the connection: nothing here talks to Redis, unless the keeper does not
        // answer a --release.
        return hold::end_or_check_hold(options, log, getenv, find_settings);
    }
    auto settings = find_settings();
    if (!settings) {
        // Not a UsageError: the message names the file or variable at fault, not the syntax.
        throw Fatal(ExitStatus::usage, settings.error());
    }
    if (settings->password_from_command_line) {
        log.notice("a password in --url is visible to every user of this machine; use "
                   "--password-file or $REDISCLI_AUTH instead");
    }
    for (const auto& warning : settings->warnings) {
        log.notice("{}", warning);
    }
    log.info("{}", redis::describe_connection(*settings));
    if (options.verbosity == Verbosity::verbose) {
        settings->on_connected = [&log](const std::string& connected) {
            log.info("{}", connected);
        };
    }
    const auto format = options.json ? StatusFormat::json : StatusFormat::text;
    if (options.list_pattern) {
        return list_locks(*options.list_pattern, format,
                          options.held ? ListOnly::held : ListOnly::every_lock, *settings);
    }
    if (options.status) {
        return show_status(options.key, format, *settings, log);
    }
    if (options.break_lock) {
        return break_lock(options.key, options.note, *settings, log);
    }
    telemetry::RunFigures figures;
    figures.key = options.key;
    figures.hold = options.hold;
    figures.started_ms = telemetry::now_ms();
    const auto count = [&](telemetry::Outcome outcome, int status) {
        if (!options.metrics_file || figures.keeper_counts) {
            return;
        }
        figures.outcome = outcome;
        figures.exit_status = status;
        if (auto failed = telemetry::update_metrics_file(*options.metrics_file, figures)) {
            log.notice("--metrics-file: {}", *failed);
        }
    };
    try {
        const int status = options.hold ? hold::take_hold(options, *settings, log, getenv, figures)
                                        : run_locked(options, *settings, log, figures);
        count(figures.outcome, status);
        return status;
    } catch (const Fatal& error) {
        count(telemetry::Outcome::error, error.status());
        throw;
    }
}

// Whether the command line asks for --hold's assignments (not its JSON), read from the words
// themselves: a usage error may come before the parse could say so.
bool prints_for_eval(int argc, char** argv) {
    bool hold = false;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view word = argv[i];
        if (word == "--") {
            break;
        }
        hold = hold || word == "--hold";
        json = json || word == "--json";
    }
    return hold && !json;
}

int run_and_report(int argc, char** argv, const ConfigPlaces& places, Logger& log) {
    try {
        return act(argc, argv, places, log);
    } catch (const UsageError& error) {
        log.with(LogEvent("error").exit_status(error.status()))
            .error("{} (see redlockrun --help)", error.what());
        return error.status();
    } catch (const Fatal& error) {
        log.with(LogEvent("error").exit_status(error.status())).error("{}", error.what());
        return error.status();
    } catch (const std::bad_alloc&) {
        log.with(LogEvent("error").exit_status(to_int(ExitStatus::os_error)))
            .error("out of memory");
        return to_int(ExitStatus::os_error);
    } catch (const std::exception& error) {
        log.with(LogEvent("error").exit_status(to_int(ExitStatus::internal)))
            .error("internal error: {}", error.what());
        return to_int(ExitStatus::internal);
    }
}

} // namespace

namespace {

// The C++ runtime ends the program with std::terminate when it cannot allocate even the exception
// that would report a failure (a tight `ulimit -v`); its own line, "terminate called without an
// active exception", does not say why. Nothing here calls std::terminate or keeps a std::thread,
// so no exception in flight means that. Written without allocating, then abort() as before (134).
[[noreturn]] void report_terminate() {
    constexpr std::string_view out_of_memory =
        "redlockrun: out of memory: the C++ runtime could not allocate an exception\n";
    constexpr std::string_view escaped = "redlockrun: internal error: an exception escaped\n";
    const std::string_view line = std::current_exception() ? escaped : out_of_memory;
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    std::abort();
}

// Before the program's own static objects are built, which may already allocate: first among its
// initializers (priority 101, the earliest a program may use).
__attribute__((constructor(101))) void install_terminate_report() {
    std::set_terminate(report_terminate);
}

} // namespace

int main_entry(int argc, char** argv, const ConfigPlaces& places) {
    // Before anything opens a descriptor, the logger's stderr above all.
    if (!run::open_closed_standard_fds()) {
        return to_int(ExitStatus::os_error);
    }
    Logger log;
    const int status = run_and_report(argc, argv, places, log);
    // `eval ""` succeeds: a --hold that took no lock must not let `eval "$(redlockrun --hold)"
    // || exit` go on as if it had. Its stdout makes eval fail with its own status instead.
    if (status != 0 && prints_for_eval(argc, argv)) {
        std::printf("(exit %d)\n", status);
        std::fflush(stdout);
    }
    return status;
}

ConfigPlaces installed_config_places() {
    return config_places(system_config_file, [](const char* name) { return std::getenv(name); });
}

} // namespace redlockrun
