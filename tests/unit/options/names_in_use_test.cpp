// A parse declares to CLI11 only the options its words or entries could name (options/
// names_in_use.hpp): it must come to what a parse declaring every option comes to, word for word,
// and refuse with the same message.
#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/names_in_use.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace redlockrun;

namespace {

// What a parse comes to: the command line, or its usage error's message.
struct Outcome {
    std::optional<CommandLine> line;
    std::string error;

    bool operator==(const Outcome&) const = default;
};

Outcome outcome(CommandLine (*parse_with)(int, const char* const*),
                const std::vector<const char*>& argv) {
    try {
        return {parse_with(static_cast<int>(argv.size()), argv.data()), {}};
    } catch (const Fatal& error) {
        return {std::nullopt, error.what()};
    }
}

NamesInUse in_words(std::vector<const char*> words) {
    words.insert(words.begin(), "redlockrun");
    return NamesInUse::in_words(static_cast<int>(words.size()), words.data());
}

} // namespace

TEST_CASE("names in use: the names a command line's words can name, and only those") {
    const NamesInUse plain = in_words({"-k", "job", "--", "true"});
    CHECK(plain.any_of("-k,--key"));
    CHECK_FALSE(plain.any_of("-t,--ttl"));
    CHECK_FALSE(plain.any_of("--hold"));
    CHECK_FALSE(plain.any_of("-u,--url"));
    // A short name anywhere in a word of short options; a long name up to '='.
    const NamesInUse grouped = in_words({"-nqk", "job", "--ttl=5s", "true"});
    CHECK(grouped.any_of("-n,--no-wait,--nb,--nonblock"));
    CHECK(grouped.any_of("-q,--quiet"));
    CHECK(grouped.any_of("-t,--ttl"));
    CHECK_FALSE(grouped.any_of("-v,--verbose"));
    // A long name after a '-' inside a word of short options: CLI11 reads "-q-status" so.
    CHECK(in_words({"-q-status"}).any_of("--status"));
    // Words that do not start with '-' name nothing, even in the command.
    CHECK_FALSE(in_words({"-k", "j", "ls", "key"}).any_of("--ttl"));
    CHECK(in_words({"-k", "j", "ls", "-t"}).any_of("-t,--ttl")); // generous, and harmless
    CHECK(NamesInUse::every_name().any_of("--hold"));
    const NamesInUse entries = NamesInUse::in_entries({"ttl", "timeout"});
    CHECK(entries.any_of("-t,--ttl"));
    CHECK(entries.any_of("-w,--wait,--timeout"));
    CHECK_FALSE(entries.any_of("-k,--key")); // an entry "k" is not the option -k
    CHECK_FALSE(NamesInUse::in_entries({"k"}).any_of("-k,--key"));
}

TEST_CASE("names in use: declaring only the options the words can name changes nothing CLI11 "
          "reads") {
    const std::vector<std::vector<const char*>> lines{
        {"-k", "job", "true"},
        {"-nqk", "job", "true"},
        {"-kn", "true"},
        {"-k", "-n", "true"},
        {"-k", "j", "-nqx", "true"},
        {"-vt5s", "-k", "j", "true"},
        {"--key=a=b", "true"},
        {"--key=", "true"},
        {"--key", "--", "true"},
        {"-k", "--ttl=", "true"},
        {"-k", "j", "--", "a=", "b"},
        {"-k", "j", "", "-p"},
        {"-k", "j", "-", "x"},
        {"-k", "j", "-1", "true"},
        {"-k", "j", "ls", "--help"},
        {"-hx"},
        {"-qVk"},
        {"-V", "-h"},
        {"-h", "localhost", "-p", "6380"},
        {"--help=me"},
        {"--bogus", "-k"},
        {"--bogus=1", "-k", "j", "true"},
        {"--verb", "-k", "j", "true"},
        {"--hlod", "-k", "j"},
        {"-a", "secret", "-k", "j", "true"},
        {"-n", "5", "-k", "j", "true"},
        {"--quiet=yes", "-k", "j", "true"},
        {"--no-renew=", "-k", "j", "true"},
        {"--nb=1", "-k", "j", "true"},
        {"-q", "--config"},
        {"-k", "j", "-w"},
        {"-u", "redis://:one@h", "--url=redis://:two@h", "-k", "j", "true"},
        {"-u", "localhost:6379", "-k", "j", "true"},
        {"-t", "1s", "--ttl=2s", "-k", "j", "-c", "echo hi"},
        {"-q-status", "-k", "j"},
        {"-q-on-lost", "term", "-k", "j", "true"},
        {"-nq-ttl=5s", "-k", "j", "true"},
        {"-k", "j", "-v--status", "true"},
        {"--status", "-k", "job", "--json"},
        {"--list"},
        {"--list", "a*", "--json"},
        {"--list", "--json"},
        {"--list", "--json", "a*"},
        {"--list", "--held"},
        {"--list", "--held", "--hold", "-k", "j"},
        {"--list", "-q", "a*", "b*"},
        {"--list=", "-q"},
        {"--limit", "3", "--min-hold=1s", "-k", "j", "true"},
        {"-q-limit", "2", "-k", "j", "true"},
        {"-k", "j", "--replicas=1", "--min-hold", "true"},
        {"-s", "-k", "j", "true"},
        {"-sx", "-k", "j", "true"},
        {"-k", "j", "--note", "deploy 42", "true"},
        {"-k", "j", "--note=", "true"},
        {"-k", "j", "--hold"},
        {"-k", "j", "--hold", "--owner", "none", "--max-hold", "1h"},
        {"-k", "j", "--hold", "--json", "--kill-after=3s"},
        {"--release"},
        {"--release", "/tmp/h", "-q"},
        {"--release=/tmp/h"},
        {"--release", "h"},
        {"--check", "-v"},
        {"--check", "--release"},
        {"-k", "j", "--break"},
        {"-k", "j", "--break", "true"},
        {"-k", "j", "--sentinel-user", "u", "--tls-ca-file", "ca.pem", "true"},
        {"-k", "j", "--tls-cert=c", "--tls-key=k", "--tls-server-name", "n", "true"},
        {"-k", "j", "--connect-timeout", "1s", "--on-lost", "ignore", "true"},
        {"-k", "j", "-E", "0", "--lost-exit-code", "3", "--timestamp-unit", "s", "true"},
        {"--config", "/dev/null", "-k", "j", "true"},
        {"-", "-k", "j"},
        {"--", "-k", "j"},
        {"---k", "j", "true"},
        {"-k", "j", "-c"},
        {},
    };
    int compared = 0;
    for (const auto& words : lines) {
        std::vector<const char*> argv{"redlockrun"};
        argv.insert(argv.end(), words.begin(), words.end());
        const Outcome declared_as_needed =
            outcome(parse_command_line_declaring_named_options, argv);
        const Outcome declared_all = outcome(parse_command_line_declaring_every_option, argv);
        CAPTURE(declared_as_needed.error);
        CAPTURE(declared_all.error);
        // The same command line, or a refusal from both ("did you mean" may differ: see below).
        CHECK(declared_as_needed.line == declared_all.line);
        CHECK(declared_as_needed.error.empty() == declared_all.error.empty());
        CHECK(outcome(parse_command_line, argv) == declared_all);
        ++compared;
    }
    CHECK(compared == static_cast<int>(lines.size()));
}

TEST_CASE("names in use: a refusal says what it says with every option declared") {
    // "did you mean" looks among the declared options: with only --key declared it would find none.
    std::vector<const char*> argv{"redlockrun", "-k", "j", "--hlod"};
    const Outcome named_only = outcome(parse_command_line_declaring_named_options, argv);
    REQUIRE_FALSE(named_only.line);
    CHECK(named_only.error.find("--hold") == std::string::npos);
    const Outcome refused = outcome(parse_command_line, argv);
    REQUIRE_FALSE(refused.line);
    CHECK(refused.error == "unknown option --hlod: did you mean --hold?");
}

TEST_CASE("names in use: declaring only the options a config file names changes nothing CLI11 "
          "reads") {
    const std::vector<std::string> texts{
        "",
        "ttl = 5s\nurl = \"redis://h:1\"\n",
        "ttl = 5s\nbogus = 1\n",
        "key = job\n",
        "ttl = 5s\nttl = 6s\n",
        "[section]\nttl = 5s\n",
        "k = 1\n",
        "t = 5s\n",
        "no-renew = true\n",
        "timeout = 5s\n",
        "wait = 15 m\n",
        "\"wait\" = 0\nconflict-exit-code = 3\n",
        "replicas = 1\nsentinel-user = u\ntls-ca-file = ca.pem\n",
        "hold = yes\n",
        "note = x\n",
        "++ = 1\n",
        "ttl\n",
        "= 5\n",
    };
    for (const auto& text : texts) {
        CAPTURE(text);
        std::string declared_as_needed;
        std::string declared_all;
        OptionText as_needed;
        OptionText all;
        try {
            as_needed = parse_config_text_declaring_named_options(text, "c.conf");
        } catch (const Fatal& error) {
            declared_as_needed = error.what();
        }
        try {
            all = parse_config_text_declaring_every_option(text, "c.conf");
        } catch (const Fatal& error) {
            declared_all = error.what();
        }
        CHECK(declared_as_needed == declared_all);
        CHECK(as_needed == all);
        if (declared_all.empty()) {
            CHECK(parse_config_text(text, "c.conf") == all);
        } else {
            CHECK_THROWS_WITH_AS(parse_config_text(text, "c.conf"), declared_all.c_str(), Fatal);
        }
    }
}
