#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/hold_request.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace redlockrun;

namespace {

std::string joined(const std::vector<std::string>& words) {
    std::string line;
    for (const std::string& word : words) {
        line += (line.empty() ? "'" : " '") + word + "'";
    }
    return line;
}

std::vector<const char*> argv_of(const std::vector<std::string>& words) {
    std::vector<const char*> argv{"redlockrun"};
    for (const std::string& word : words) {
        argv.push_back(word.c_str());
    }
    return argv;
}

std::optional<OptionText> read_request(const std::vector<std::string>& words) {
    const auto argv = argv_of(words);
    return read_hold_request(static_cast<int>(argv.size()), argv.data());
}

// What the full parse makes of the line; none if it refuses it.
std::optional<CommandLine> full_parse(const std::vector<std::string>& words) {
    const auto argv = argv_of(words);
    try {
        return parse_command_line(static_cast<int>(argv.size()), argv.data());
    } catch (const UsageError&) {
        return std::nullopt;
    }
}

// The lines the short cut reads must come out exactly as the full parse reads them.
void check_same_as_full_parse(const std::vector<std::string>& words) {
    INFO(joined(words));
    const auto request = read_request(words);
    REQUIRE(request.has_value());
    const auto line = full_parse(words);
    REQUIRE(line.has_value());
    CHECK(line->action == CommandLine::Action::run);
    CHECK(line->url_values.empty());
    CHECK(*request == line->options);
}

} // namespace

TEST_CASE("hold request: --release and --check read as the full parse reads them") {
    const std::string handle = "/run/user/1000/redlockrun/hold.0123456789abcdef0123456789abcdef";
    for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
             {"--release"},
             {"--check"},
             {"--release", handle},
             {"--check", handle},
             {"--release=" + handle},
             {"--check=" + handle},
             {"--release", "/not/a/handle"},
             {"-q", "--release"},
             {"--release", "-q"},
             {"--release", handle, "-q"},
             {"--quiet", "--release", handle},
             {"-v", "--check"},
             {"--check", handle, "--verbose"},
             {"--verbose", "--check=" + handle},
         }) {
        check_same_as_full_parse(words);
    }
    CHECK(read_request({"--release", handle})->release->value == handle);
    CHECK(read_request({"--check"})->check->value.empty());
    CHECK(read_request({"--release", "-q"})->quiet);
}

TEST_CASE("hold request: every other line is left to the full parse") {
    for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
             {},
             {"-q"},
             {"--version"},
             {"--help", "--release"},
             {"--release", "--check"},
             {"--release", "--release"},
             {"--release", "-q", "-v"},
             {"-q", "-q", "--release"},
             {"-qv", "--release"},
             {"--release", "--json"},
             {"--check", "--json"},
             {"--release", "--lost-exit-code", "3"},
             {"--release", "--config", "/etc/other.conf"},
             {"-k", "job", "--release"},
             {"--release", "--hold"},
             {"--release", "hold.x"},
             {"--release", ""},
             {"--release="},
             {"--release=hold.x"},
             {"--release", "-"},
             {"--release", "--", "/x"},
             {"--release", "/x", "true"},
             {"--release", "/x", "/y"},
             {"--release", "-v", "/x"},
             {"--releases"},
             {"--check-all"},
             {"--rel"},
             {"--status", "-k", "job"},
             {"-k", "job", "true"},
         }) {
        INFO(joined(words));
        CHECK_FALSE(read_request(words).has_value());
    }
}
