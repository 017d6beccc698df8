#include "cli.hpp"

#include "fatal.hpp"
#include "version.hpp"

#include <fmt/core.h>

#include <charconv>
#include <optional>
#include <string_view>

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
 -u, --url <url>               redis://[user[:password]@]host[:port][/db],
                                 rediss://... (TLS) or unix:///path[?db=N];
                                 default: $REDLOCKRUN_URL, then $REDIS_URL,
                                 then redis://127.0.0.1:6379
     --password-file <file>    read the password from <file> (or set
                                 $REDISCLI_AUTH); never put one on the command line
     --tls-ca-file <file>      trust the CA certificates in <file> (PEM)
                                 instead of the system's
     --tls-cert <file>         present the client certificate in <file> (PEM)
     --tls-key <file>          the client certificate's private key (PEM)
     --tls-server-name <name>  the name the server's certificate must be
                                 issued for (default: the URL's host)
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

// Values are taken as text and converted after scanning, so every message is ours and names the
// option.
struct RawOptions {
    std::optional<std::string> key;
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
    std::optional<std::string> tls_ca_file;
    std::optional<std::string> tls_cert;
    std::optional<std::string> tls_key;
    std::optional<std::string> tls_server_name;
    std::optional<std::string> connect_timeout;
    bool status = false;
    bool quiet = false;
    bool verbose = false;
    bool help = false;
    bool version = false;
};

// One row per spelling. An option sets either a flag or a value; a repeated value replaces the
// earlier one.
struct OptionSpec {
    char short_name; // '\0': long form only
    std::string_view long_name;
    bool RawOptions::*flag;
    std::optional<std::string> RawOptions::*value;
};

constexpr OptionSpec option_specs[] = {
    {'k', "key", nullptr, &RawOptions::key},
    {'n', "no-wait", &RawOptions::no_wait, nullptr},
    {'\0', "nb", &RawOptions::no_wait, nullptr},
    {'w', "wait", nullptr, &RawOptions::wait},
    {'t', "ttl", nullptr, &RawOptions::ttl},
    {'\0', "no-renew", &RawOptions::no_renew, nullptr},
    {'\0', "timestamp-unit", nullptr, &RawOptions::timestamp_unit},
    {'E', "conflict-exit-code", nullptr, &RawOptions::conflict_exit_code},
    {'c', "command", nullptr, &RawOptions::shell_command},
    {'\0', "on-lost", nullptr, &RawOptions::on_lost},
    {'\0', "kill-after", nullptr, &RawOptions::kill_after},
    {'\0', "lost-exit-code", nullptr, &RawOptions::lost_exit_code},
    {'u', "url", nullptr, &RawOptions::url},
    {'\0', "password-file", nullptr, &RawOptions::password_file},
    {'\0', "tls-ca-file", nullptr, &RawOptions::tls_ca_file},
    {'\0', "tls-cert", nullptr, &RawOptions::tls_cert},
    {'\0', "tls-key", nullptr, &RawOptions::tls_key},
    {'\0', "tls-server-name", nullptr, &RawOptions::tls_server_name},
    {'\0', "connect-timeout", nullptr, &RawOptions::connect_timeout},
    {'\0', "status", &RawOptions::status, nullptr},
    {'q', "quiet", &RawOptions::quiet, nullptr},
    {'v', "verbose", &RawOptions::verbose, nullptr},
    {'h', "help", &RawOptions::help, nullptr},
    {'V', "version", &RawOptions::version, nullptr},
};

const OptionSpec* find_long(std::string_view name) {
    for (const auto& spec : option_specs) {
        if (spec.long_name == name) {
            return &spec;
        }
    }
    return nullptr;
}

const OptionSpec* find_short(char name) {
    for (const auto& spec : option_specs) {
        if (spec.short_name == name) {
            return &spec;
        }
    }
    return nullptr;
}

// getopt_long(3) syntax with its "+" mode, as in flock(1): -nq groups flags, -kjob and -k job give
// a value, --key=job and --key job too, and options end at "--" or at the first word that is not an
// option ("-" alone is not one). Unlike getopt_long, a long name must be written in full, so that a
// new option can never change what an existing abbreviation meant.
//
// Scanning stops at --help or --version, which win over whatever follows. Returns the index of the
// command's first word (argc if there is none).
int scan(int argc, const char* const* argv, RawOptions& raw) {
    int index = 1;
    auto take_value = [&](const OptionSpec& spec, std::optional<std::string_view> attached) {
        if (attached) {
            raw.*spec.value = std::string(*attached);
        } else if (index < argc) {
            raw.*spec.value = argv[index++];
        } else {
            throw UsageError(fmt::format("--{} needs a value", spec.long_name));
        }
    };
    while (index < argc && !raw.help && !raw.version) {
        const std::string_view word = argv[index];
        if (word == "--") {
            return index + 1;
        }
        if (word.size() < 2 || word.front() != '-') {
            return index;
        }
        ++index;
        if (word[1] == '-') {
            const auto equals = word.find('=');
            const auto name =
                word.substr(2, equals == std::string_view::npos ? word.npos : equals - 2);
            const OptionSpec* spec = find_long(name);
            if (spec == nullptr) {
                throw UsageError(fmt::format("unknown option --{}", name));
            }
            if (spec->flag != nullptr) {
                if (equals != std::string_view::npos) {
                    throw UsageError(fmt::format("--{} takes no value", spec->long_name));
                }
                raw.*spec->flag = true;
            } else {
                take_value(*spec, equals == std::string_view::npos
                                      ? std::nullopt
                                      : std::optional(word.substr(equals + 1)));
            }
            continue;
        }
        for (size_t at = 1; at < word.size() && !raw.help && !raw.version; ++at) {
            const OptionSpec* spec = find_short(word[at]);
            if (spec == nullptr) {
                throw UsageError(fmt::format("unknown option -{}", word[at]));
            }
            if (spec->flag != nullptr) {
                raw.*spec->flag = true;
                continue;
            }
            take_value(*spec,
                       at + 1 < word.size() ? std::optional(word.substr(at + 1)) : std::nullopt);
            break;
        }
    }
    return index;
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

Options convert(const RawOptions& raw, std::vector<std::string> command) {
    Options options;
    options.key = raw.key.value_or("");
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
    options.tls = {raw.tls_ca_file, raw.tls_cert, raw.tls_key, raw.tls_server_name};
    if (raw.connect_timeout) {
        options.connect_timeout = duration_option("--connect-timeout", *raw.connect_timeout);
    }
    options.status = raw.status;
    if (raw.quiet && raw.verbose) {
        throw UsageError("-q and -v exclude each other");
    }
    options.verbosity =
        raw.quiet ? Verbosity::quiet : (raw.verbose ? Verbosity::verbose : Verbosity::normal);

    options.command = std::move(command);
    return options;
}

} // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
    RawOptions raw;
    const int command_start = scan(argc, argv, raw);
    CommandLine line;
    if (raw.help) {
        line.action = CommandLine::Action::help;
        return line;
    }
    if (raw.version) {
        line.action = CommandLine::Action::version;
        return line;
    }
    line.options = convert(raw, std::vector<std::string>(argv + command_start, argv + argc));
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
    std::vector<std::string> names;
    for (const auto& spec : option_specs) {
        if (spec.short_name != '\0') {
            names.push_back(std::string{'-', spec.short_name});
        }
        names.push_back(fmt::format("--{}", spec.long_name));
    }
    return names;
}

} // namespace redlockrun
