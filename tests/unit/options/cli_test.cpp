#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/configuration.hpp"

#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace redlockrun;

namespace {

CommandLine parse_line(std::initializer_list<const char*> words) {
    std::vector<const char*> argv{"redlockrun"};
    argv.insert(argv.end(), words.begin(), words.end());
    return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// The command line converted and checked, with no config file.
struct Parsed {
    CommandLine::Action action;
    Options options;
};

Parsed parse(std::initializer_list<const char*> words) {
    const CommandLine line = parse_line(words);
    Parsed parsed{line.action, {}};
    if (line.action == CommandLine::Action::run) {
        parsed.options = configure(line.options, ConfigPlaces{});
    }
    return parsed;
}

std::string usage_error(std::initializer_list<const char*> words) {
    try {
        parse(words);
    } catch (const UsageError& error) {
        CHECK(error.status() == 64);
        return error.what();
    }
    FAIL("no usage error");
    return {};
}

} // namespace

TEST_CASE("cli: the command starts at the first word that is not an option") {
    auto line = parse({"-k", "job", "./script.sh", "-k", "other", "--", "x"});
    CHECK(line.action == CommandLine::Action::run);
    CHECK(line.options.key == "job");
    CHECK(line.options.command ==
          std::vector<std::string>{"./script.sh", "-k", "other", "--", "x"});

    auto dashed = parse({"--key=job", "--", "-weird-name", "--flag"});
    CHECK(dashed.options.command == std::vector<std::string>{"-weird-name", "--flag"});

    auto bundled = parse({"-nqk", "job", "true"});
    CHECK(bundled.options.no_wait);
    CHECK(bundled.options.verbosity == Verbosity::quiet);
    CHECK(bundled.options.key == "job");
}

TEST_CASE("cli: an empty word is the command, whatever follows it") {
    // Found by fuzzing: CLI11 option groups looped for ever on an empty word before an option.
    auto line = parse_line({"-k", "job", "", "-p"});
    CHECK(line.options.command == std::vector<std::string>{"", "-p"});
}

TEST_CASE("cli: values attached or in the next word, as getopt_long(3) takes them") {
    CHECK(parse({"-kjob", "true"}).options.key == "job");
    CHECK(parse({"--key", "job", "true"}).options.key == "job");
    CHECK(parse({"--key=a=b", "true"}).options.key == "a=b");
    CHECK(parse({"-vt5s", "-k", "j", "true"}).options.ttl == Millis{5000});
    CHECK(parse({"-qw5s", "-k", "j", "true"}).options.wait == Millis{5000});
    // The word after an option that takes a value is that value, even if it looks like an option.
    CHECK(parse({"-k", "-n", "true"}).options.key == "-n");
    CHECK_FALSE(parse({"-k", "-n", "true"}).options.no_wait);
    CHECK(parse({"-c", "--status", "-k", "j"}).options.shell_command == "--status");
    // "-" alone is a word, not an option: it starts the command.
    CHECK(parse({"-k", "j", "-", "x"}).options.command == std::vector<std::string>{"-", "x"});
}

TEST_CASE("cli: every option") {
    auto line = parse({"-k", "job", "-w", "1.5s", "-t", "2m", "--timestamp-unit", "s", "-E", "0",
                       "-u", "redis://h:1/2", "--password-file", "/p", "--connect-timeout", "250ms",
                       "-v", "-c", "echo hi"});
    const Options& o = line.options;
    CHECK(o.wait == Millis{1500});
    CHECK(o.ttl == Millis{120000});
    CHECK(o.timestamp_unit == lock::TimestampUnit::seconds);
    CHECK(o.conflict_exit_code == 0);
    CHECK(o.url == "redis://h:1/2");
    CHECK(o.password_file == "/p");
    CHECK(o.connect_timeout == Millis{250});
    CHECK(o.verbosity == Verbosity::verbose);
    CHECK(o.shell_command == "echo hi");
    CHECK(o.command.empty());

    auto status = parse({"--status", "-k", "job"});
    CHECK(status.options.status);
    CHECK(parse({"--nb", "-k", "j", "true"}).options.no_wait);
    CHECK(parse({"--no-wait", "-k", "j", "true"}).options.no_wait);
    CHECK(parse({"-k", "a", "-k", "b", "true"}).options.key == "b");

    auto fleet = parse({"-k", "job", "--min-hold", "1m30s", "--limit", "100", "true"});
    CHECK(fleet.options.min_hold == Millis{90000});
    CHECK(fleet.options.limit == 100);
    CHECK(parse({"-k", "job", "--limit=1", "true"}).options.limit == 1);
    CHECK(parse({"-k", "job", "--replicas", "2", "true"}).options.replicas == 2);
}

TEST_CASE("cli: --note is kept as it was written, up to 256 bytes, and an empty note is none") {
    CHECK(parse({"-k", "j", "true"}).options.note.empty());
    CHECK(parse({"-k", "j", "--note", "deploy 42", "true"}).options.note == "deploy 42");
    CHECK(parse({"-k", "j", "--note=", "true"}).options.note.empty());
    CHECK(parse({"--note", "a\nb\x1b\xff", "-k", "j", "true"}).options.note == "a\nb\x1b\xff");
    const std::string longest(256, 'x');
    CHECK(parse({"-k", "j", "--note", longest.c_str(), "true"}).options.note == longest);
    const std::string too_long(257, 'x');
    CHECK(usage_error({"-k", "j", "--note", too_long.c_str(), "true"}) ==
          "--note is 257 bytes long; a note may be at most 256 bytes");
    // Bytes, not characters: 129 two-byte characters are 258 bytes.
    std::string accented;
    for (int i = 0; i < 129; ++i) {
        accented += "\xc3\xa9";
    }
    CHECK(usage_error({"-k", "j", "--note", accented.c_str(), "true"}) ==
          "--note is 258 bytes long; a note may be at most 256 bytes");
    CHECK(usage_error({"-k", "j", "--note"}) == "--note needs a value");
    // A note is a holder's: reading the lock takes none.
    CHECK(usage_error({"-k", "j", "--status", "--note", "x"}) ==
          "--status takes no --note: it only reads the lock");
    CHECK(usage_error({"--list", "--note", "x"}) ==
          "--list takes no --note: it only reads the locks");
}

TEST_CASE("cli: the names users of flock(1) and timeout(1) type") {
    CHECK(parse({"--nonblock", "-k", "j", "true"}).options.no_wait);
    CHECK(parse({"--timeout", "10m", "-k", "j", "true"}).options.wait == Millis{600'000});
    CHECK(parse({"--timeout=1.5", "-k", "j", "true"}).options.wait == Millis{1500});
    CHECK(usage_error({"--nonblock", "--timeout", "1", "-k", "j", "true"})
              .find("exclude each other") != std::string::npos);
    // -x is what every lock is already: accepted alone, bundled or long, and changes nothing.
    const Options plain = parse({"-k", "j", "true"}).options;
    for (auto words : {std::initializer_list<const char*>{"-x", "-k", "j", "true"},
                       {"--exclusive", "-k", "j", "true"},
                       {"-xnk", "j", "true"}}) {
        const Options exclusive = parse(words).options;
        CHECK(exclusive.key == plain.key);
        CHECK(exclusive.limit == plain.limit);
        CHECK(exclusive.command == plain.command);
    }
    CHECK(parse({"-xnk", "j", "true"}).options.no_wait);
    CHECK(usage_error({"--exclusive=yes", "-k", "j", "true"}) == "--exclusive takes no value");
    // The d unit, as timeout(1) takes it.
    CHECK(parse({"-w", "1d", "-k", "j", "true"}).options.wait == Millis{86'400'000});
    CHECK(parse({"--ttl=1d12h", "-k", "j", "true"}).options.ttl == Millis{129'600'000});
    // A config file knows each entry by one name.
    CHECK(parse_config_text("wait = 1d\n", "f").wait->value == "1d");
    try {
        parse_config_text("timeout = 5s\n", "f");
        FAIL("timeout accepted in a config file");
    } catch (const Fatal& error) {
        CHECK(error.status() == 64);
        CHECK(std::string(error.what()) == "f, line 1: unknown entry 'timeout': write wait = ...");
    }
}

TEST_CASE("cli: a bad duration is answered with the spelling that works, or the largest allowed") {
    CHECK(usage_error({"-k", "j", "-t", "5min", "true"}) ==
          "--ttl: '5min' is not a duration: did you mean 5m?");
    CHECK(usage_error({"-k", "j", "-w", "5 m", "true"}) ==
          "--wait: '5 m' is not a duration: write 5m");
    CHECK(usage_error({"-k", "j", "--timeout", "2hours", "true"}) ==
          "--wait: '2hours' is not a duration: did you mean 2h?");
    CHECK(usage_error({"-k", "j", "--kill-after", "500msec", "true"}) ==
          "--kill-after: '500msec' is not a duration: did you mean 500ms?");
    CHECK(usage_error({"-k", "j", "--min-hold", "1day", "true"}) ==
          "--min-hold: '1day' is not a duration: did you mean 1d?");
    // Every duration option takes up to the same largest duration, and says so beyond it.
    for (const char* option :
         {"--ttl", "--wait", "--min-hold", "--kill-after", "--connect-timeout"}) {
        CAPTURE(option);
        CHECK(parse({"-k", "j", option, "1000000000s", "true"}).action == CommandLine::Action::run);
        CHECK(usage_error({"-k", "j", option, "99999999999", "true"}) ==
              fmt::format("{}: '99999999999' is too large (at most 1000000000s, about 31 years)",
                          option));
    }
}

TEST_CASE("cli: defaults") {
    const Options o = parse({"-k", "job", "true"}).options;
    CHECK_FALSE(o.no_wait);
    CHECK_FALSE(o.wait.has_value());
    CHECK(o.ttl == Millis{30000});
    CHECK(o.timestamp_unit == lock::TimestampUnit::milliseconds);
    CHECK(o.conflict_exit_code == 75);
    CHECK(o.connect_timeout == Millis{5000});
    CHECK(o.verbosity == Verbosity::normal);
    CHECK_FALSE(o.url.has_value());
    CHECK(o.min_hold == Millis{0});
    CHECK(o.limit == 1);
    CHECK(o.replicas == 0);
}

// The usage error (64) that `words` make, of any kind: its message.
static std::string refused(std::initializer_list<const char*> words) {
    try {
        parse(words);
    } catch (const Fatal& error) {
        CHECK(error.status() == 64);
        return error.what();
    }
    FAIL("no usage error");
    return {};
}

TEST_CASE("cli: help and version alone, and a usage error with anything else") {
    CHECK(parse({"--help"}).action == CommandLine::Action::help);
    CHECK(parse({"-hx"}).action == CommandLine::Action::help); // one word: -h stops the parse
    CHECK(parse({"-qVk"}).action == CommandLine::Action::version);
    CHECK(parse({"-V"}).action == CommandLine::Action::version);
    // A job written with redis-cli's -h HOST must not exit 0 without running.
    CHECK(refused({"-h", "10.0.0.5", "-k", "job", "--", "true"}) ==
          "-h is --help here, and it runs nothing: to name a Redis server, write -u "
          "redis://10.0.0.5:6379");
    CHECK(refused({"-h", "-k", "job"}).starts_with("--help takes nothing else"));
    CHECK(refused({"-h", "--bogus"}).starts_with("--help takes nothing else"));
    CHECK(refused({"-k", "j", "-w", "soon", "--help"}).starts_with("--help takes nothing else"));
    CHECK(refused({"-V", "-h"}).starts_with("--version takes nothing else"));
    // -n, flock's no-wait, before a database number.
    CHECK(refused({"-n", "2", "-k", "job", "--", "true"}).find("-u redis://HOST:PORT/2") !=
          std::string::npos);
    CHECK(parse({"-n", "-k", "job", "--", "true"}).action == CommandLine::Action::run);
    CHECK(version_text().rfind("redlockrun ", 0) == 0);
    // After the command starts, --help belongs to the command.
    CHECK(parse({"-k", "j", "ls", "--help"}).action == CommandLine::Action::run);
}

TEST_CASE("cli: usage errors say what is wrong") {
    CHECK(usage_error({}) == "a lock key is required: -k KEY");
    CHECK(usage_error({"true"}) == "a lock key is required: -k KEY");
    CHECK(usage_error({"-k", "job"}).find("no command to run") == 0);
    CHECK(usage_error({"-k"}) == "--key needs a value");
    CHECK(usage_error({"-k", "job", "--bogus", "true"}) == "unknown option --bogus");
    CHECK(usage_error({"--bogus"}) == "unknown option --bogus");
    CHECK(usage_error({"--bogus=1", "-k", "j", "true"}) == "unknown option --bogus");
    CHECK(usage_error({"-k", "j", "-Z", "true"}) == "unknown option -Z");
    CHECK(usage_error({"-nqZ", "-k", "j", "true"}) == "unknown option -Z");
    // Long names are never abbreviated: a later option must not change what a script meant.
    CHECK(usage_error({"--verb", "-k", "j", "true"}) == "unknown option --verb");
    CHECK(usage_error({"--quiet=yes", "-k", "j", "true"}) == "--quiet takes no value");
    CHECK(usage_error({"-k", "j", "--wait"}) == "--wait needs a value");
    CHECK(usage_error({"-k", "j", "-w"}) == "--wait needs a value");
    CHECK(usage_error({"--bogus", "-h"}) == "unknown option --bogus");
    CHECK(usage_error({"-k", "j", "-w", "soon", "true"}).find("--wait: 'soon' is not a duration") ==
          0);
    CHECK(usage_error({"-k", "j", "-t", "-1", "true"}).find("--ttl") == 0);
    CHECK(usage_error({"-k", "j", "-t", "50ms", "true"}) == "--ttl must be at least 100ms");
    CHECK(usage_error({"-k", "j", "--connect-timeout", "0", "true"}).find("--connect-timeout") ==
          0);
    CHECK(usage_error({"-k", "j", "-E", "256", "true"}).find("--conflict-exit-code") == 0);
    CHECK(usage_error({"-k", "j", "-E", "x", "true"}).find("--conflict-exit-code") == 0);
    CHECK(usage_error({"-k", "j", "--timestamp-unit", "us", "true"}).find("--timestamp-unit") == 0);
    CHECK(usage_error({"-k", "j", "-n", "-w", "1", "true"}).find("exclude each other") !=
          std::string::npos);
    CHECK(usage_error({"-k", "j", "-q", "-v", "true"}) == "-q and -v exclude each other");
    CHECK(usage_error({"-k", "j", "-c", "x", "true"}).find("exclude each other") !=
          std::string::npos);
    CHECK(usage_error({"-k", "j", "--status", "true"}) == "--status takes no command");
    for (const char* limit : {"0", "101", "-1", "x", "2.5", "", "1e2"}) {
        CAPTURE(limit);
        CHECK(usage_error({"-k", "j", "--limit", limit, "true"}) ==
              fmt::format("--limit: '{}' is not a number of holders from 1 to 100", limit));
    }
    CHECK(usage_error({"-k", "j", "--min-hold", "soon", "true"}).find("--min-hold: 'soon'") == 0);
    CHECK(usage_error({"-k", "j", "--replicas", "101", "true"}) ==
          "--replicas: '101' is not a number of replicas from 0 to 100");
    CHECK(usage_error({"-k", "j", "--status", "--limit", "2"}) ==
          "--status takes no --limit: it only reads the lock");
    CHECK(usage_error({"-k", "j", "--status", "--min-hold", "2s"}) ==
          "--status takes no --min-hold: it only reads the lock");
    CHECK(usage_error({"--list", "--limit", "2"}) ==
          "--list takes no --limit: it only reads the locks");
    CHECK(usage_error({"-k", "j", "--status", "-c", "x"}) == "--status takes no command");
    CHECK(usage_error({"-k", "", "true"}) == "a lock key is required: -k KEY");
}

TEST_CASE("cli: --help lists every option the parser accepts, and no other") {
    const std::string help = help_text();
    for (const auto& name : accepted_option_names()) {
        CAPTURE(name);
        CHECK(help.find(" " + name) != std::string::npos);
    }
    // The other direction: every option word in the help text is accepted.
    const auto accepted = accepted_option_names();
    const std::regex option_word("(^|[ (])(--?[A-Za-z][A-Za-z-]*)");
    size_t words = 0;
    for (auto it = std::sregex_iterator(help.begin(), help.end(), option_word);
         it != std::sregex_iterator(); ++it) {
        const std::string word = (*it)[2];
        CAPTURE(word);
        CHECK(std::find(accepted.begin(), accepted.end(), word) != accepted.end());
        ++words;
    }
    CHECK(words >= accepted.size());
}

TEST_CASE("cli: where CLI11's defaults differ from getopt_long, getopt_long's behaviour holds") {
    // A value may begin with '-', and may hold what CLI11 would otherwise split or unpack.
    CHECK(parse({"-k", "-weird", "true"}).options.key == "-weird");
    CHECK(parse({"--key", "--", "true"}).options.key == "--");
    CHECK(parse({"-k", "a,b", "true"}).options.key == "a,b");
    CHECK(parse({"-k", "j", "-c", "[ -e /tmp/x ]"}).options.shell_command == "[ -e /tmp/x ]");
    CHECK(parse({"-k", "[a,b]", "true"}).options.key == "[a,b]");
    CHECK(parse({"-k", "j", "-c", ""}).options.shell_command == "");
    // "--name=" is an empty value, not "--name" with the next word.
    CHECK(usage_error({"--key=", "true"}) == "a lock key is required: -k KEY");
    CHECK(parse_line({"--key=", "true"}).options.key->value.empty());
    CHECK(parse_line({"--key=", "true"}).options.command == std::vector<std::string>{"true"});
    CHECK(parse_line({"-k", "--ttl=", "true"}).options.key->value == "--ttl=");
    CHECK(parse_line({"-k", "j", "--", "a=", "b"}).options.command ==
          std::vector<std::string>{"a=", "b"});
    CHECK(usage_error({"--no-renew=", "-k", "j", "true"}) == "--no-renew takes no value");
    CHECK(usage_error({"--bogus=", "-k", "j", "true"}) == "unknown option --bogus");
    // The last of a repeated option wins.
    CHECK(parse({"-t", "1s", "--ttl=2s", "-k", "j", "true"}).options.ttl == Millis{2000});
    CHECK(parse({"-u", "redis://a", "-u", "redis://b", "-k", "j", "true"}).options.url ==
          "redis://b");
    // Flags take no value, whatever CLI11 would make of one.
    CHECK(usage_error({"--no-renew=yes", "-k", "j", "true"}) == "--no-renew takes no value");
    CHECK(usage_error({"--no-renew=false", "-k", "j", "true"}) == "--no-renew takes no value");
    CHECK(usage_error({"--nb=1", "-k", "j", "true"}) == "--nb takes no value");
    CHECK(usage_error({"--help=me"}) == "--help takes no value");
    // A dash and a digit is an unknown option, not the command.
    CHECK(usage_error({"-k", "j", "-1", "true"}) == "unknown option -1");
    CHECK(usage_error({"-k", "j", "-Zq", "true"}) == "unknown option -Z");
    // An unknown option before a bad one is reported first, as getopt_long would.
    CHECK(usage_error({"--bogus", "-k"}) == "unknown option --bogus");
    CHECK(usage_error({"-q", "--config"}) == "--config needs a value");
}

TEST_CASE("cli: --list takes its pattern if one follows, and --json goes with it or --status") {
    CHECK(parse({"--list"}).options.list_pattern == "*");
    CHECK(parse({"--list", "backup:*"}).options.list_pattern == "backup:*");
    CHECK(parse({"--list=backup:*"}).options.list_pattern == "backup:*");
    CHECK(parse({"--list=-odd"}).options.list_pattern == "-odd");
    // A word that starts with '-' after --list is the next option, not a pattern.
    auto json = parse({"--list", "--json"});
    CHECK(json.options.list_pattern == "*");
    CHECK(json.options.json);
    CHECK(parse({"--json", "--list", "a*"}).options.list_pattern == "a*");
    CHECK(parse({"--list", "a*", "--list", "b*"}).options.list_pattern == "b*");
    CHECK_FALSE(parse({"-k", "j", "true"}).options.list_pattern.has_value());
    CHECK(parse({"--status", "--json", "-k", "j"}).options.json);

    CHECK(usage_error({"--json", "-k", "j", "true"}) ==
          "--json goes with --status, --list or --hold only");
    CHECK(usage_error({"--json"}) == "--json goes with --status, --list or --hold only");
    CHECK(usage_error({"--list", "-k", "j"}).starts_with("--list and -k exclude each other"));
    CHECK(usage_error({"--list", "--status"}) == "--list and --status exclude each other");
    CHECK(usage_error({"--list", "a*", "true"}) == "--list takes no command");
    CHECK(usage_error({"--list", "--", "true"}) == "--list takes no command");
    CHECK(usage_error({"--list", "-c", "true"}) == "--list takes no command");
    CHECK(usage_error({"--list="}).starts_with("--list: an empty pattern matches no lock"));
    CHECK(usage_error({"--list", ""}).starts_with("--list: an empty pattern matches no lock"));
    CHECK(usage_error({"--json=yes", "--list"}) == "--json takes no value");
}

TEST_CASE("cli: --list's pattern may follow other options, in any order with --json") {
    for (const auto& words : std::vector<std::vector<const char*>>{
             {"--list", "--json", "held*"},
             {"--json", "--list", "held*"},
             {"--list", "held*", "--json"},
             {"--list=held*", "--json"},
             {"--list", "-q", "--json", "held*"},
             {"--list", "-u", "redis://h", "held*"},
             {"--list", "--json", "--list", "held*"},
         }) {
        std::vector<const char*> argv{"redlockrun"};
        argv.insert(argv.end(), words.begin(), words.end());
        std::string line;
        for (const char* word : words) {
            line += std::string(word) + " ";
        }
        CAPTURE(line);
        const Options options = configure(
            parse_command_line(static_cast<int>(argv.size()), argv.data()).options, ConfigPlaces{});
        CHECK(options.list_pattern == "held*");
        CHECK(options.command.empty());
        const bool json_given = std::any_of(words.begin(), words.end(), [](const char* word) {
            return std::string_view(word) == "--json";
        });
        CHECK(options.json == json_given);
    }
    // Still one pattern, and no command.
    CHECK(usage_error({"--list", "--json", "a*", "b*"}) == "--list takes no command");
    CHECK(usage_error({"--list", "a*", "--json", "b*"}) == "--list takes no command");
    CHECK(usage_error({"--list", "--json", "--", "a*"}) == "--list takes no command");
    CHECK(usage_error({"--list", "--json", "a*", "--json"}) == "--list takes no command");
    CHECK(usage_error({"--list", "--json", ""}).starts_with("--list: an empty pattern"));
    CHECK(usage_error({"--list", "-k", "j", "a*"}).starts_with("--list and -k exclude each other"));
    CHECK(usage_error({"--status", "-k", "j", "--json", "a*"}) == "--status takes no command");
}

TEST_CASE("cli: every --url given is kept, for hiding its password") {
    const auto line =
        parse_line({"-u", "redis://:one@h", "--url=redis://:two@h", "-k", "j", "true"});
    CHECK(line.url_values == std::vector<std::string>{"redis://:one@h", "redis://:two@h"});
    CHECK(line.options.url->origin == "--url");
    CHECK_FALSE(line.options.config.has_value());
    CHECK(parse_line({"--config", "/x", "-k", "j", "true"}).options.config->value == "/x");
}

TEST_CASE("cli: --help is laid out as util-linux's, from the declarations") {
    const std::string help = help_text();
    CHECK(help.starts_with(
        "Usage:\n redlockrun [options] -k <key> [--] <command> [<argument>...]\n"));
    CHECK(help.find("\nLock:\n -k, --key <key>               name of the lock (a Redis key)\n"
                    " -n, --no-wait, --nb, --nonblock\n"
                    "                               fail at once if the lock is held\n") !=
          std::string::npos);
    CHECK(help.find("\n     --connect-timeout <duration>\n"
                    "                               give up connecting, or waiting for a reply,\n"
                    "                                 after this long (default 5s)\n") !=
          std::string::npos);
    CHECK(
        help.find(
            "\n -x, --exclusive               an exclusive lock: the default, as in flock(1)\n") !=
        std::string::npos);
    CHECK(help.find("\nDurations: 1.5 (seconds), 500ms, 30s, 1.5s, 2m, 1h, 1d, 1m30s.\n") !=
          std::string::npos);
    CHECK(help.find("\n\nCommand:\n") != std::string::npos);
    CHECK(help.find("\n\nRedis:\n") != std::string::npos);
    CHECK(help.find("\n\nOther:\n") != std::string::npos);
    CHECK(help.find("\n     --list [<pattern>]        list the locks") != std::string::npos);
    CHECK(help.ends_with("For more details see redlockrun(1).\n"));
    // No line is wider than a terminal's 80 columns.
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
        CAPTURE(line);
        CHECK(line.size() <= 80);
    }
}

TEST_CASE("cli: what a config file may hold") {
    const auto names = config_entry_names();
    const std::vector<std::string> expected{"wait",
                                            "ttl",
                                            "timestamp-unit",
                                            "conflict-exit-code",
                                            "on-lost",
                                            "kill-after",
                                            "lost-exit-code",
                                            "url",
                                            "password-file",
                                            "sentinel-user",
                                            "sentinel-password-file",
                                            "tls-ca-file",
                                            "tls-cert",
                                            "tls-key",
                                            "tls-server-name",
                                            "connect-timeout",
                                            "replicas",
                                            "metrics-file",
                                            "syslog",
                                            "syslog-facility",
                                            "log-format"};
    CHECK(names == expected);
}

TEST_CASE("cli: the reporting options, on the command line and in a config file") {
    const Parsed plain = parse({"-k", "j", "true"});
    CHECK(plain.options.log.format == LogFormat::text);
    CHECK_FALSE(plain.options.log.syslog);
    CHECK(plain.options.log.syslog_facility == (1 << 3)); // LOG_USER
    CHECK_FALSE(plain.options.metrics_file);
    const Parsed all = parse({"--log-format", "json", "--syslog", "--syslog-facility", "local3",
                              "--metrics-file", "/var/lib/m.prom", "-k", "j", "true"});
    CHECK(all.options.log.format == LogFormat::json);
    CHECK(all.options.log.syslog);
    CHECK(all.options.log.syslog_facility == (19 << 3)); // LOG_LOCAL3
    CHECK(all.options.metrics_file == "/var/lib/m.prom");
    CHECK_FALSE(parse({"--syslog=no", "-k", "j", "true"}).options.log.syslog);
    CHECK(usage_error({"--syslog=maybe", "-k", "j", "true"}) ==
          "--syslog: 'maybe' is neither yes nor no");
    CHECK(usage_error({"--log-format", "xml", "-k", "j", "true"}) ==
          "--log-format: 'xml' is neither text nor json");
    CHECK(usage_error({"--syslog-facility", "kern", "-k", "j", "true"}) ==
          "--syslog-facility: 'kern' is not user, daemon, cron or local0 to local7");
    CHECK(usage_error({"--metrics-file=", "-k", "j", "true"}) == "--metrics-file names no file");
    for (const char* yes : {"yes", "true", "on", "1"}) {
        CAPTURE(yes);
        CHECK(parse_config_text(std::string("syslog = ") + yes + "\n", "c.conf").syslog->value ==
              yes);
    }
    const OptionText file = parse_config_text(
        "syslog = no\nsyslog-facility = cron\nlog-format = json\nmetrics-file = m.prom\n",
        "c.conf");
    CHECK(file.syslog->value == "no");
    CHECK(file.syslog->origin == "c.conf, line 1: syslog");
    CHECK(file.syslog_facility->value == "cron");
    CHECK(file.log_format->value == "json");
    CHECK(file.metrics_file->value == "m.prom");
}

namespace redlockrun {

TEST_CASE("cli: --hold, --owner, --max-hold, --release and --check") {
    auto hold = parse({"-k", "deploy", "--hold", "--owner", "none", "--max-hold", "30m"}).options;
    CHECK(hold.hold);
    REQUIRE(hold.owner.has_value());
    CHECK(hold.owner->none);
    CHECK(hold.max_hold == Millis{30 * 60 * 1000});
    auto owned = parse({"-k", "deploy", "--hold", "--owner", "4242", "--json"}).options;
    REQUIRE(owned.owner.has_value());
    CHECK(owned.owner->pid == 4242);
    CHECK(owned.json);
    CHECK(parse({"--release"}).options.release_handle == "");
    CHECK(parse({"--release", "/run/h/hold.x"}).options.release_handle == "/run/h/hold.x");
    CHECK(parse({"--check=/run/h/hold.x"}).options.check_handle == "/run/h/hold.x");
    CHECK(parse({"--check", "-v"}).options.check_handle == "");

    CHECK(usage_error({"-k", "d", "--hold", "--owner", "none"})
              .starts_with("--owner none needs --max-hold"));
    CHECK(usage_error({"-k", "d", "--hold", "true"}).starts_with("--hold takes no command"));
    CHECK(usage_error({"--hold"}) == "a lock key is required: -k KEY");
    CHECK(usage_error({"-k", "d", "--hold", "--status"}) ==
          "--hold and --status exclude each other");
    CHECK(
        usage_error({"-k", "d", "--hold", "--owner", "1"}).find("neither a process id nor none") !=
        std::string::npos);
    CHECK(
        usage_error({"-k", "d", "--hold", "--owner", "x"}).find("neither a process id nor none") !=
        std::string::npos);
    CHECK(usage_error({"-k", "d", "--hold", "--max-hold", "0"}) ==
          "--max-hold must be 1s or more: a shorter hold would end before the script could use it");
    CHECK(usage_error({"-k", "d", "--hold", "--max-hold", "999ms"})
              .starts_with("--max-hold must be 1s or more"));
    CHECK(usage_error({"-k", "d", "--hold", "--json", "-E", "0"})
              .starts_with("--hold --json and -E 0 exclude each other"));
    CHECK(usage_error({"-k", "d", "--owner", "none", "true"}) == "--owner goes with --hold only");
    CHECK(usage_error({"-k", "d", "--max-hold", "1m", "true"}) ==
          "--max-hold goes with --hold only");
    CHECK(usage_error({"--release", "--check"}) == "--release and --check exclude each other");
    CHECK(usage_error({"-k", "d", "--release"}) ==
          "--release takes no -k: the handle names the lock");
    CHECK(usage_error({"--check", "--", "true"}) == "--check takes no command");
    CHECK(usage_error({"--release", "--hold"}).starts_with("--release goes with none of"));
}

} // namespace redlockrun
