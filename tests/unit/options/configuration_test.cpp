#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/configuration.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace redlockrun;

namespace {

std::string config_error(const std::string& text) {
    try {
        parse_config_text(text, "c.conf");
    } catch (const Fatal& error) {
        CHECK(error.status() == 64);
        return error.what();
    }
    FAIL("no error");
    return {};
}

using redlockrun::testing::TempDir;

Options configured(std::initializer_list<const char*> words, const ConfigPlaces& places) {
    std::vector<const char*> argv{"redlockrun"};
    argv.insert(argv.end(), words.begin(), words.end());
    return configure(parse_command_line(static_cast<int>(argv.size()), argv.data()).options,
                     places);
}

std::string configure_error(std::initializer_list<const char*> words, const ConfigPlaces& places) {
    try {
        configured(words, places);
    } catch (const Fatal& error) {
        CHECK(error.status() == 64);
        return error.what();
    }
    FAIL("no error");
    return {};
}

} // namespace

TEST_CASE("config text: entries, quoted or not, each with its file and line") {
    const auto text = parse_config_text("# fleet defaults\n"
                                        "\n"
                                        "url = \"rediss://cache:6380/1\"\n"
                                        "ttl=2m   # inline comment\n"
                                        "  on-lost = 'ignore'\n"
                                        "[default]\n"
                                        "wait = 0\n",
                                        "c.conf");
    REQUIRE(text.url);
    CHECK(text.url->value == "rediss://cache:6380/1");
    CHECK(text.url->origin == "c.conf, line 3: url");
    CHECK(text.ttl->value == "2m");
    CHECK(text.ttl->origin == "c.conf, line 4: ttl");
    CHECK(text.on_lost->value == "ignore");
    CHECK(text.wait->value == "0");
    CHECK_FALSE(text.key.has_value());
    CHECK(parse_config_text("", "empty.conf").url.has_value() == false);
}

TEST_CASE("config text: a '#' within quotes is part of the value (a Sentinel URL's master)") {
    const auto text = parse_config_text(
        "url = \"redis-sentinel://s1,s2:26380/2#cache\"  # the sentinels, quoted for the commas\n"
        "sentinel-password-file = '/etc/redlockrun/s#pw' # a '#' in single quotes too\n"
        "ttl = 5s#no space before the comment\n"
        "#wait = 0\n",
        "c.conf");
    REQUIRE(text.url);
    CHECK(text.url->value == "redis-sentinel://s1,s2:26380/2#cache");
    CHECK(text.url->origin == "c.conf, line 1: url");
    REQUIRE(text.sentinel_password_file);
    CHECK(text.sentinel_password_file->value == "/etc/redlockrun/s#pw");
    CHECK(text.ttl->value == "5s");
    CHECK(text.ttl->origin == "c.conf, line 3: ttl");
    CHECK_FALSE(text.wait.has_value());
    // Unquoted, the commas still make several values, which is refused.
    CHECK(config_error("url = redis-sentinel://s1,s2#m\n").find("takes one value") !=
          std::string::npos);
}

TEST_CASE("config text: mistakes are named with their file, line and entry") {
    CHECK(config_error("ttl = 1s\nkye = job\n") ==
          "c.conf, line 2: unknown entry 'kye' (see FILES in redlockrun(1))");
    CHECK(config_error("t = 1s\n") ==
          "c.conf, line 1: unknown entry 't' (see FILES in redlockrun(1))");
    CHECK(config_error("Url = redis://h\n").find("unknown entry 'Url'") != std::string::npos);
    // Only connection and lock settings belong in a file.
    for (const char* entry :
         {"key", "command", "status", "help", "version", "config", "quiet", "verbose", "no-wait",
          "no-renew", "nb", "min-hold", "limit", "json", "list"}) {
        CAPTURE(entry);
        CHECK(config_error(std::string("\n") + entry + " = x\n") ==
              std::string("c.conf, line 2: ") + entry + " can be given on the command line only");
    }
    CHECK(config_error("quiet\n") == "c.conf, line 1: quiet can be given on the command line only");
    CHECK(config_error("ttl = 1s\nwait = 1s\nttl = 2s\n") == "c.conf, line 3: ttl is set twice");
    CHECK(config_error("ttl = 1s 2s\n") ==
          "c.conf, line 1: ttl takes one value (put one with spaces or commas in quotes)");
    CHECK(config_error("[redis]\nurl = redis://h\n") ==
          "c.conf: [redis]: redlockrun's settings have no sections");
}

TEST_CASE("configure: files fill in what the command line leaves out, the user's over the "
          "system's") {
    TempDir dir;
    ConfigPlaces places;
    places.system_file = dir.write("system", "ttl = 7s\nkill-after = 3s\nwait = 9s\n");
    places.user_file = dir.write("user", "ttl = 8s\n");
    auto options = configured({"-k", "j", "true"}, places);
    CHECK(options.ttl == Millis{8000});
    CHECK(options.kill_after == Millis{3000});
    CHECK(options.wait == Millis{9000});
    CHECK(configured({"-k", "j", "-t", "1s", "true"}, places).ttl == Millis{1000});
    // -n on the command line is a wait too: the file's gives way instead of clashing.
    auto no_wait = configured({"-n", "-k", "j", "true"}, places);
    CHECK(no_wait.no_wait);
    CHECK_FALSE(no_wait.wait.has_value());
    // --config replaces both files.
    const auto named = dir.write("named", "lost-exit-code = 90\n");
    auto replaced = configured({"--config", named.c_str(), "-k", "j", "true"}, places);
    CHECK(replaced.ttl == Millis{30000});
    CHECK(replaced.lost_exit_code == 90);
    // Missing default files are fine.
    places.user_file = dir.path + "/nothing-here";
    CHECK(configured({"-k", "j", "true"}, places).ttl == Millis{7000});
}

TEST_CASE("configure: connection settings are kept per file, for redis/settings.cpp") {
    TempDir dir;
    ConfigPlaces places;
    places.system_file = dir.write("system", "url = redis://sys\ntls-ca-file = /ca.pem\n", 0644);
    places.user_file = dir.write("user", "password-file = /pw\n");
    auto options = configured({"-k", "j", "true"}, places);
    REQUIRE(options.config_files.size() == 2);
    CHECK(options.config_files[0].password_file->value == "/pw");
    CHECK_FALSE(options.config_files[0].url.has_value());
    CHECK(options.config_files[1].url->value == "redis://sys");
    CHECK(options.config_files[1].url->origin == places.system_file.value() + ", line 1: url");
    CHECK(options.config_files[1].tls.ca_file == "/ca.pem");
    CHECK_FALSE(options.url.has_value());
}

TEST_CASE("configure: a bad value names its file and line") {
    TempDir dir;
    ConfigPlaces places;
    places.user_file = dir.write("user", "\nttl = soon\n");
    CHECK(configure_error({"-k", "j", "true"}, places) ==
          places.user_file.value() +
              ", line 2: ttl: 'soon' is not a duration (examples: 1.5, 500ms, 30s, 2m, 1h)");
    places.user_file = dir.write("user", "ttl = 10ms\n");
    CHECK(configure_error({"-k", "j", "true"}, places) ==
          places.user_file.value() + ", line 1: ttl must be at least 100ms");
    // The command line's value wins, so the file's is never looked at.
    CHECK(configured({"-k", "j", "-t", "1s", "true"}, places).ttl == Millis{1000});
}

TEST_CASE("configure: a file with a password that others can read is refused") {
    TempDir dir;
    ConfigPlaces places;
    for (mode_t mode : {0640, 0604, 0644}) {
        CAPTURE(mode);
        places.user_file = dir.write("user", "url = redis://:Hunter2@h\n", mode);
        const auto message = configure_error({"-k", "j", "true"}, places);
        CHECK(message.find(places.user_file.value()) != std::string::npos);
        CHECK(message.find("can be read by other users") != std::string::npos);
        CHECK(message.find("Hunter2") == std::string::npos);
    }
    places.user_file = dir.write("user", "url = redis://Hunter2@h\n", 0644);
    CHECK(configure_error({"-k", "j", "true"}, places).find("(mode 0644)") != std::string::npos);
    places.user_file = dir.write("user", "url = redis://:Hunter2@h\n", 0600);
    CHECK(configured({"-k", "j", "true"}, places).config_files.size() == 1);
    // Without a password, any mode will do.
    places.user_file = dir.write("user", "url = redis://alice:@h\n", 0644);
    CHECK(configured({"-k", "j", "true"}, places).config_files.size() == 1);
}
