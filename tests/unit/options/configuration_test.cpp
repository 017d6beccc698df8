#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/configuration.hpp"
#include "redis/settings.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
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
          "no-renew", "nb", "min-hold", "limit", "json", "list", "note"}) {
        CAPTURE(entry);
        CHECK(config_error(std::string("\n") + entry + " = x\n") ==
              std::string("c.conf, line 2: ") + entry + " can be given on the command line only");
    }
    CHECK(config_error("quiet\n") == "c.conf, line 1: quiet can be given on the command line only");
    CHECK(config_error("ttl = 1s\nwait = 1s\nttl = 2s\n") ==
          "c.conf, line 3: ttl is set twice (also on line 1)");
    CHECK(config_error("ttl = 1s 2s\n") ==
          "c.conf, line 1: ttl takes one value (put one with spaces or commas in quotes)");
    CHECK(config_error("[redis]\nurl = redis://h\n") ==
          "c.conf, line 1: [redis]: redlockrun's settings have no sections");
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

// From the files to the server used: what configure() keeps of each file, resolved with the
// environment as a run resolves it.
TEST_CASE("configure: a file's url wins over $REDIS_URL, not over $REDLOCKRUN_URL or --url") {
    TempDir dir;
    ConfigPlaces places;
    places.system_file = dir.write("system", "ttl = 9s\nurl = redis://fleet:6379\n", 0644);
    std::map<std::string, std::string> variables{{"REDIS_URL", "redis://application:6379"}};
    const redis::Environment environment = [&variables](const char* name) -> const char* {
        auto found = variables.find(name);
        return found == variables.end() ? nullptr : found->second.c_str();
    };
    auto server_for = [&](std::initializer_list<const char*> words) {
        const Options options = configured(words, places);
        redis::ConnectionRequest request;
        request.url = options.url;
        request.files = options.config_files;
        auto settings = redis::resolve_settings(request, environment);
        REQUIRE(settings);
        return std::pair{settings->endpoint.host, settings->url_source};
    };
    CHECK(
        server_for({"-k", "j", "true"}) ==
        std::pair<std::string, std::string>{"fleet", places.system_file.value() + ", line 2: url"});
    variables["REDLOCKRUN_URL"] = "redis://chosen:6379";
    CHECK(server_for({"-k", "j", "true"}) ==
          std::pair<std::string, std::string>{"chosen", "$REDLOCKRUN_URL"});
    CHECK(server_for({"-u", "redis://given", "-k", "j", "true"}) ==
          std::pair<std::string, std::string>{"given", "--url"});
    // Without a file that names one, $REDIS_URL still gives the server.
    variables.erase("REDLOCKRUN_URL");
    places.system_file = dir.write("system", "ttl = 9s\n", 0644);
    CHECK(server_for({"-k", "j", "true"}) ==
          std::pair<std::string, std::string>{"application", "$REDIS_URL"});
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

TEST_CASE("config text: every line that is not `entry = value` is an error naming its line") {
    // Old Mac line ends: the whole file would be one comment line, read as no settings at all.
    CHECK(config_error("# hi\rurl = redis://h:7000\r") ==
          "c.conf, line 1: a carriage return (CR) ends a line where a newline (LF) should: save "
          "the file with LF (or CR LF) line ends");
    CHECK(config_error("ttl = 1s\nwait = 2s\rurl = redis://h\n") ==
          "c.conf, line 2: a carriage return (CR) ends a line where a newline (LF) should: save "
          "the file with LF (or CR LF) line ends");
    CHECK(config_error("\xEF\xBB\xBFurl = redis://h\n") ==
          "c.conf, line 1: the file starts with a byte-order mark (U+FEFF): save it as UTF-8 "
          "without one");
    CHECK(config_error(std::string("ttl = 1s\nurl = redis://h\0st\n", 25)) ==
          "c.conf, line 2: holds a NUL byte: a config file is text");
    CHECK(config_error("ttl = 1s\nwait = 1\x1b[2Js\n") ==
          "c.conf, line 2: holds the control character \\x1b");
    CHECK(config_error("url: redis://h:7000\n") == "c.conf, line 1: no '=': write entry = value");
    CHECK(config_error("ttl 10s\n") == "c.conf, line 1: no '=': write entry = value");
    CHECK(config_error("\nurl: redis://h/?x=1\n") ==
          "c.conf, line 2: 'url: redis://h/?x' is not an entry's name: write entry = value");
    CHECK(config_error("= 10s\n") == "c.conf, line 1: no entry's name before '='");
    CHECK(config_error("redis.url = redis://h\n") ==
          "c.conf, line 1: 'redis.url' is a dotted name: redlockrun's entries have no sections, "
          "write url = value");
    CHECK(config_error("ttl\n") == "c.conf, line 1: ttl has no value: write ttl = value");
    CHECK(config_error("url = \"redis://h\n") ==
          "c.conf, line 1: the quote that opens url's value is not closed");
    // Repeated, on the very next line (which CLI11's reader takes as a list) or further down.
    CHECK(config_error("ttl = 1s\nttl = 2s\n") ==
          "c.conf, line 2: ttl is set twice (also on line 1)");
    CHECK(config_error("url = redis://a\nttl = 1s\n\nurl = redis://b\n") ==
          "c.conf, line 4: url is set twice (also on line 1)");
    CHECK(config_error("ttl = 1s\n[redis]\nurl = redis://h\n") ==
          "c.conf, line 2: [redis]: redlockrun's settings have no sections");
    CHECK(config_error("[[redis]]\n") ==
          "c.conf, line 1: [[redis]]: redlockrun's settings have no sections");
}

TEST_CASE("config text: what CLI11's reader accepted and still is") {
    // CR LF line ends (a file written on Windows), blank lines and lines of spaces, comments,
    // quotes of both kinds, spaces and tabs around '=', [default] (the top level), no final
    // newline.
    const auto text = parse_config_text("# written on Windows\r\n"
                                        "\r\n"
                                        "   \t\r\n"
                                        "[default]\r\n"
                                        "url = \"redis://h:7000\"   # quoted\r\n"
                                        "\tttl\t=\t2m\r\n"
                                        "on-lost='ignore'\r\n"
                                        "password-file = '/etc/pw file'\r\n"
                                        "wait = 3s",
                                        "c.conf");
    REQUIRE(text.url);
    CHECK(text.url->value == "redis://h:7000");
    CHECK(text.url->origin == "c.conf, line 5: url");
    CHECK(text.ttl->value == "2m");
    CHECK(text.ttl->origin == "c.conf, line 6: ttl");
    CHECK(text.on_lost->value == "ignore");
    CHECK(text.password_file->value == "/etc/pw file");
    CHECK(text.wait->value == "3s");
    CHECK(text.wait->origin == "c.conf, line 9: wait");
    // A CR within quotes is still a lone CR; a '#' within quotes is not a comment.
    CHECK(config_error("url = \"redis://h\r#x\"\n").find("line 1: a carriage return") !=
          std::string::npos);
    CHECK(parse_config_text("url = 'redis-sentinel://a,b#m' # c\n", "c.conf").url->value ==
          "redis-sentinel://a,b#m");
}

TEST_CASE("configure: a relative path in a file is relative to the file's folder") {
    TempDir dir;
    ConfigPlaces places;
    places.user_file = dir.write("user", "password-file = secrets/pw\ntls-ca-file = ca.pem\n"
                                         "tls-cert = ../c.pem\ntls-key = /abs/k.pem\n"
                                         "sentinel-password-file = s/pw\n");
    auto options = configured({"-k", "j", "true"}, places);
    REQUIRE(options.config_files.size() == 1);
    const auto& file = options.config_files[0];
    CHECK(file.password_file->value == dir.path + "/secrets/pw");
    CHECK(file.password_file->origin == places.user_file.value() + ", line 1: password-file");
    CHECK(file.tls.ca_file == dir.path + "/ca.pem");
    CHECK(file.tls.cert_file == dir.path + "/../c.pem");
    CHECK(file.tls.key_file == "/abs/k.pem");
    CHECK(file.sentinel_password_file->value == dir.path + "/s/pw");
    // The command line's stay relative to the working directory.
    auto given =
        configured({"--password-file", "pw", "--tls-ca-file", "ca.pem", "-k", "j", "true"}, places);
    CHECK(given.password_file == "pw");
    CHECK(given.tls.ca_file == "ca.pem");
}
