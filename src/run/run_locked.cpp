#include "run/run_locked.hpp"

#include "base/clock.hpp"
#include "base/fatal.hpp"
#include "run/child.hpp"
#include "run/lock_attempt.hpp"
#include "run/lock_keeper.hpp"
#include "run/supervisor.hpp"
#include "run/wait_status.hpp"

#include <fmt/core.h>

#include <unistd.h>

extern char** environ;

namespace redlockrun {

namespace {

using run::release;

// The command to run, found before the lock is taken: a mistyped name must not cost a wait. Its
// environment is completed once the fence is known.
run::ChildSpec find_child(const Options& options) {
    run::ChildSpec spec;
    if (options.shell_command) {
        spec.path = "/bin/sh";
        spec.argv = {"sh", "-c", *options.shell_command};
        return spec;
    }
    auto path = run::find_command(options.command.front(), ::getenv("PATH"));
    if (!path) {
        throw Fatal(path.error().status, path.error().message);
    }
    spec.path = *path;
    spec.argv = options.command;
    return spec;
}

// A word of a command as a shell would read it back: in single quotes if it holds anything but
// the characters that never need them.
std::string quoted_word(const std::string& word) {
    const bool plain =
        !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
        return word;
    }
    std::string quoted = "'";
    for (char c : word) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

// The command as a reader of the message would type it, shortened if very long: "./report.sh
// --full", "'my job' x". The logger escapes what is not printable.
std::string command_for_message(const Options& options) {
    constexpr size_t longest = 160;
    std::string text;
    if (options.shell_command) {
        text = "sh -c " + quoted_word(*options.shell_command);
    } else {
        for (const auto& word : options.command) {
            text += (text.empty() ? "" : " ") + quoted_word(word);
        }
    }
    if (text.size() > longest) {
        text.resize(longest - 3);
        text += "...";
    }
    return text;
}

// Runs `start_command` (everything between the grant and the running command); if it throws (out
// of memory, above all), releases the lock before the failure ends the run: a lock taken for a
// command that never started must not stay held for its whole TTL. Past this point the command
// runs, and a failure that ends redlockrun kills it (PR_SET_PDEATHSIG) but leaves the lock to
// expire: releasing it first would let the next holder start beside a command not yet dead.
template <typename StartCommand>
auto release_if_it_throws(lock::LockClient& lock, const Logger& log, SteadyTime acquired_at,
                          StartCommand start_command) {
    try {
        return start_command();
    } catch (...) {
        try {
            release(lock, log, acquired_at);
        } catch (...) {
            // Too little memory even for that: the lock expires by itself. The first failure is
            // the one to report.
        }
        throw;
    }
}

} // namespace

int run_locked(const Options& options, const redis::ConnectionSettings& settings, const Logger& log,
               telemetry::RunFigures& figures) {
    run::LockAttempt attempt(options, settings, log, std::to_string(::getpid()));
    run::ChildSpec spec = find_child(options);
    auto outcome = attempt.acquire("not running " + command_for_message(options));
    figures.waited_ms = attempt.waited().count();
    if (const int* status = std::get_if<int>(&outcome)) {
        figures.outcome = attempt.was_busy() ? telemetry::Outcome::busy : telemetry::Outcome::error;
        return *status;
    }
    const auto& acquired = std::get<lock::Acquired>(outcome);
    auto& lock = attempt.lock;
    const SteadyTime acquired_at = steady_now();
    figures.held_ms = 0; // until the release says more
    const run::Terminal terminal = run::Terminal::foreground();
    auto child = release_if_it_throws(lock, log, acquired_at, [&] {
        run::say_acquired(options.key, options.note, acquired, attempt.policy, log);
        spec.inherited_environment = environ;
        spec.environment_overrides = {"REDLOCKRUN_KEY=" + options.key,
                                      "REDLOCKRUN_FENCE=" + acquired.grant.fence};
        if (acquired.grant.slot) {
            spec.environment_overrides.push_back("REDLOCKRUN_SLOT=" +
                                                 std::to_string(*acquired.grant.slot));
        }
        return run::spawn_child(spec, attempt.signals, terminal);
    });
    if (!child) {
        release(lock, log, acquired_at);
        throw Fatal(child.error().status, child.error().message);
    }
    run::Supervisor supervisor(*child, terminal, log);
    attempt.router.supervise(&supervisor);
    LockKeeper keeper(lock,
                      KeepPolicy{options.ttl, options.renew, options.on_lost, options.kill_after},
                      acquired.valid_from, acquired.grant.validity, log);
    const int wait_status = supervisor.wait(attempt.signals, &keeper);
    log.with(LogEvent("command_ended").exit_status(run::exit_status_from_wait(wait_status)))
        .info("the command {} after running for {}", run::describe_wait_status(wait_status),
              format_duration(steady_now() - acquired_at));

    const bool found_lost =
        release(lock, log, acquired_at, lock::CommandRan::yes, keeper.lost(), keeper.valid_until());
    figures.held_ms = (steady_now() - acquired_at).count();
    figures.outcome =
        keeper.lost() || found_lost ? telemetry::Outcome::lost : telemetry::Outcome::ran;
    if ((keeper.lost() || found_lost) && options.on_lost == OnLost::term) {
        return options.lost_exit_code;
    }
    return run::exit_status_from_wait(wait_status);
}

} // namespace redlockrun
