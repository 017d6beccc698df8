#include "cli.hpp"

#include "fatal.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <charconv>

namespace redlockrun {

namespace {

constexpr const char* help = R"(Usage:
 redlockrun [options] -k <key> [--] <command> [<argument>...]
 redlockrun [options] -k <key> -c <command-string>
 redlockrun [options] -k <key> --status

Run a command while holding a lock in Redis, so that it never runs twice at
once, on any number of machines.

Lock:
 -k, --key <key>               name of the lock (a Redis key)
 -n, --no-wait, --nb           fail at once if the lock is held
 -w, --wait <duration>         give up after waiting this long
                                 (0: same as -n; default: wait forever)
 -t, --ttl <duration>          how long the lock stays valid (default 30s);
                                 renewed every ttl/3 while the command runs
     --no-renew                let the lock lapse after the TTL: with
                                 --on-lost term, the TTL bounds the run
     --timestamp-unit <unit>   write the key's timestamp in ms (default) or s
 -E, --conflict-exit-code <n>  exit status when the lock is not acquired
                                 (default 75)

Command:
 -c, --command <string>        run <string> with /bin/sh -c
     --on-lost <action>        if the lock is lost while the command runs:
                                 term (default) stops the command,
                                 ignore lets it run on with a warning
     --kill-after <duration>   send SIGKILL this long after SIGTERM
                                 (default 10s)
     --lost-exit-code <n>      exit status when the lock was lost (default 76)

Redis:
 -u, --url <url>               redis://[user[:password]@]host[:port][/db]
                                 or unix:///path[?db=N]; default: $REDLOCKRUN_URL,
                                 then $REDIS_URL, then redis://127.0.0.1:6379
     --password-file <file>    read the password from <file> (or set
                                 $REDISCLI_AUTH); never put one on the command line
     --connect-timeout <duration>
                               give up connecting, or waiting for a reply,
                                 after this long (default 5s)

Other:
     --status                  show who holds the lock and exit:
                                 0 if free, 75 if held
 -q, --quiet                   no message when the lock is busy
 -v, --verbose                 report waiting, acquiring, renewing, releasing
                                 and forwarded signals, with timings
 -h, --help                    display this help
 -V, --version                 display version

Durations: 1.5 (seconds), 500ms, 30s, 1.5s, 2m, 1h, 1m30s.

Exit status: the command's own, or 128+N if signal N killed it;
 64 usage error, 65 the key is not a timestamp lock, 69 Redis unavailable,
 70 internal error, 71 system error, 75 lock not acquired, 76 lock lost,
 126 command not executable, 127 command not found.

For more details see redlockrun(1).
)";

// Values are taken as text and converted here, so every message is ours and names the option.
struct RawOptions {
    std::string key;
    bool no_wait = false;
    std::optional<std::string> wait;
    std::optional<std::string> ttl;
    bool no_renew = false;
    std::optional<std::string> on_lost;
    std::optional<std::string> kill_after;
    std::optional<std::string> lost_exit_code;
    std::optional<std::string> timestamp_unit;
    std::optional<std::string> conflict_exit_code;
    std::optional<std::string> shell_command;
    std::optional<std::string> url;
    std::optional<std::string> password_file;
    std::optional<std::string> connect_timeout;
    bool status = false;
    bool quiet = false;
    bool verbose = false;
    bool help = false;
    bool version = false;
};

void define_options(CLI::App& app, RawOptions& raw) {
    app.set_help_flag();
    app.prefix_command();
    auto value = [&](const char* names, std::optional<std::string>& target) {
        app.add_option(names, target)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    };
    app.add_option("-k,--key", raw.key)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_flag("-n,--no-wait,--nb", raw.no_wait);
    value("-w,--wait", raw.wait);
    value("-t,--ttl", raw.ttl);
    app.add_flag("--no-renew", raw.no_renew);
    value("--on-lost", raw.on_lost);
    value("--kill-after", raw.kill_after);
    value("--lost-exit-code", raw.lost_exit_code);
    value("--timestamp-unit", raw.timestamp_unit);
    value("-E,--conflict-exit-code", raw.conflict_exit_code);
    value("-c,--command", raw.shell_command);
    value("-u,--url", raw.url);
    value("--password-file", raw.password_file);
    value("--connect-timeout", raw.connect_timeout);
    app.add_flag("--status", raw.status);
    app.add_flag("-q,--quiet", raw.quiet);
    app.add_flag("-v,--verbose", raw.verbose);
    app.add_flag("-h,--help", raw.help);
    app.add_flag("-V,--version", raw.version);
}

Millis duration_option(const char* name, const std::string& text) {
    auto duration = parse_duration(text);
    if (!duration) {
        throw UsageError(fmt::format(
            "{}: '{}' is not a duration (examples: 1.5, 500ms, 30s, 2m, 1h)", name, text));
    }
    return *duration;
}

int exit_code_option(const char* name, const std::string& text) {
    int code = -1;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), code);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || code < 0 ||
        code > 255) {
        throw UsageError(fmt::format("{}: '{}' is not an exit status from 0 to 255", name, text));
    }
    return code;
}

Options convert(const RawOptions& raw, std::vector<std::string> rest) {
    Options options;
    options.key = raw.key;
    options.no_wait = raw.no_wait;
    if (raw.wait) {
        options.wait = duration_option("--wait", *raw.wait);
    }
    if (raw.ttl) {
        options.ttl = duration_option("--ttl", *raw.ttl);
    }
    options.renew = !raw.no_renew;
    if (raw.on_lost) {
        if (*raw.on_lost == "term") {
            options.on_lost = OnLost::term;
        } else if (*raw.on_lost == "ignore") {
            options.on_lost = OnLost::ignore;
        } else {
            throw UsageError(
                fmt::format("--on-lost: '{}' is neither term nor ignore", *raw.on_lost));
        }
    }
    if (raw.kill_after) {
        options.kill_after = duration_option("--kill-after", *raw.kill_after);
    }
    if (raw.lost_exit_code) {
        options.lost_exit_code = exit_code_option("--lost-exit-code", *raw.lost_exit_code);
    }
    if (raw.timestamp_unit) {
        auto unit = lock::parse_unit(*raw.timestamp_unit);
        if (!unit) {
            throw UsageError(
                fmt::format("--timestamp-unit: '{}' is neither ms nor s", *raw.timestamp_unit));
        }
        options.timestamp_unit = *unit;
    }
    if (raw.conflict_exit_code) {
        options.conflict_exit_code =
            exit_code_option("--conflict-exit-code", *raw.conflict_exit_code);
    }
    options.shell_command = raw.shell_command;
    options.url = raw.url;
    options.password_file = raw.password_file;
    if (raw.connect_timeout) {
        options.connect_timeout = duration_option("--connect-timeout", *raw.connect_timeout);
    }
    options.status = raw.status;
    if (raw.quiet && raw.verbose) {
        throw UsageError("-q and -v exclude each other");
    }
    options.verbosity =
        raw.quiet ? Verbosity::quiet : (raw.verbose ? Verbosity::verbose : Verbosity::normal);

    // CLI11 leaves "--" and unknown options at the front of what it did not parse.
    if (!rest.empty() && rest.front() == "--") {
        rest.erase(rest.begin());
    } else if (!rest.empty() && rest.front().size() > 1 && rest.front().front() == '-') {
        throw UsageError(fmt::format("unknown option {}", rest.front()));
    }
    options.command = std::move(rest);
    return options;
}

// CLI11's messages name its own types ("1 required TEXT missing"); say it in the user's terms.
std::string usage_message(const CLI::ParseError& error) {
    std::string text = error.what();
    const auto colon = text.find(':');
    const std::string option = colon == std::string::npos ? "" : text.substr(0, colon);
    if (text.find("required") != std::string::npos && text.find("missing") != std::string::npos) {
        return fmt::format("{} needs a value", option);
    }
    if (text.find("does not take any arguments") != std::string::npos ||
        text.find("Unexpected argument") != std::string::npos) {
        return fmt::format("{} takes no value", option.empty() ? text : option);
    }
    return text;
}

} // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
    CLI::App app{"redlockrun"};
    RawOptions raw;
    define_options(app, raw);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        throw UsageError(usage_message(error));
    }
    CommandLine line;
    if (raw.help) {
        line.action = CommandLine::Action::help;
        return line;
    }
    if (raw.version) {
        line.action = CommandLine::Action::version;
        return line;
    }
    line.options = convert(raw, app.remaining());
    validate(line.options);
    return line;
}

std::string help_text() {
    return help;
}

std::string version_text() {
    return fmt::format("redlockrun {}\n", version);
}

std::vector<std::string> accepted_option_names() {
    CLI::App app{"redlockrun"};
    RawOptions raw;
    define_options(app, raw);
    std::vector<std::string> names;
    for (const CLI::Option* option : app.get_options()) {
        for (const auto& name : option->get_snames()) {
            names.push_back("-" + name);
        }
        for (const auto& name : option->get_lnames()) {
            names.push_back("--" + name);
        }
    }
    return names;
}

} // namespace redlockrun
