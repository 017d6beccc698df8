#include "redis/endpoint.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::redis;

TEST_CASE("URL: host, port, db, credentials") {
    auto e = parse_url("redis://alice:s3cret@cache.example:6380/2");
    REQUIRE(e);
    CHECK_FALSE(e->unix_socket);
    CHECK_FALSE(e->tls);
    CHECK(e->host == "cache.example");
    CHECK(e->port == 6380);
    CHECK(e->db == 2);
    CHECK(e->user == "alice");
    CHECK(e->password == "s3cret");
    CHECK(e->display() == "cache.example:6380 (db 2)");
}

TEST_CASE("URL: defaults") {
    auto e = parse_url("redis://localhost");
    REQUIRE(e);
    CHECK(e->port == 6379);
    CHECK(e->db == 0);
    CHECK(e->user.empty());
    CHECK_FALSE(e->password.has_value());
    CHECK(parse_url("redis://h/")->db == 0);
    auto d = parse_url(default_url);
    REQUIRE(d);
    CHECK(d->display() == "127.0.0.1:6379");
}

TEST_CASE("URL: password only, percent-encoding, '@' in the password") {
    auto e = parse_url("redis://:p%40ss%3Aw0rd@h");
    REQUIRE(e);
    CHECK(e->user.empty());
    CHECK(e->password == "p@ss:w0rd");
    auto raw_at = parse_url("redis://:a@b@h:1");
    REQUIRE(raw_at);
    CHECK(raw_at->password == "a@b");
    CHECK(raw_at->host == "h");
}

TEST_CASE("URL: user information without ':' is a password, as redis-cli reads it") {
    auto lone = parse_url("redis://S3cretPW@127.0.0.1:7301");
    REQUIRE(lone);
    CHECK(lone->user.empty());
    CHECK(lone->password == "S3cretPW");
    CHECK(parse_url("redis://p%40ss@h")->password == "p@ss");
    // "user:" names the user and leaves the password to be given elsewhere.
    auto user_only = parse_url("redis://alice:@h");
    REQUIRE(user_only);
    CHECK(user_only->user == "alice");
    CHECK_FALSE(user_only->password.has_value());
    CHECK_FALSE(parse_url("redis://@h")->password.has_value());
    CHECK(parse_url("redis://:@h")->user.empty());
}

namespace {

std::string blotted(std::string url) {
    const auto span = password_span(url);
    if (span) {
        url.replace(span->start, span->length, span->length, 'x');
    }
    return url;
}

} // namespace

TEST_CASE("URL: where the password is written, to blot it out") {
    CHECK(blotted("redis://alice:s3cret@h:1/2") == "redis://alice:xxxxxx@h:1/2");
    CHECK(blotted("redis://:s3cret@h") == "redis://:xxxxxx@h");
    CHECK(blotted("rediss://S3cretPW@h") == "rediss://xxxxxxxx@h");
    CHECK(blotted("redis://:p%40ss@h") == "redis://:xxxxxx@h");
    CHECK(blotted("redis://:a@b@h") == "redis://:xxx@h");
    // Also where parse_url() would refuse the URL.
    CHECK(blotted("redis://:pa/ss@h") == "redis://:xxxxx@h");
    CHECK(blotted("redis://:s3cret@h:99999") == "redis://:xxxxxx@h:99999");
    CHECK_FALSE(password_span("redis://alice:@h"));
    CHECK_FALSE(password_span("redis://h:1/2"));
    CHECK_FALSE(password_span("unix:///run/a@b.sock"));
    CHECK_FALSE(password_span("not a url"));
}

TEST_CASE("URL: IPv6 literals") {
    auto e = parse_url("redis://[::1]:6390/3");
    REQUIRE(e);
    CHECK(e->host == "::1");
    CHECK(e->port == 6390);
    CHECK(e->db == 3);
    CHECK(e->display() == "[::1]:6390 (db 3)");
    CHECK(parse_url("redis://[fe80::1]")->port == 6379);
}

TEST_CASE("URL: unix sockets and rediss") {
    auto e = parse_url("unix:///run/redis/redis.sock?db=4");
    REQUIRE(e);
    CHECK(e->unix_socket);
    CHECK(e->socket_path == "/run/redis/redis.sock");
    CHECK(e->db == 4);
    CHECK(e->display() == "unix:/run/redis/redis.sock (db 4)");
    CHECK(parse_url("unix:///tmp/r.sock")->db == 0);
    CHECK(parse_url("rediss://h:6380")->tls);
}

TEST_CASE("URL: bad ones are refused, and the message never repeats the password") {
    const char* bad[] = {"",
                         "http://h",
                         "redis:/h",
                         "redis://",
                         "redis://:pw@",
                         "redis://h:",
                         "redis://h:0",
                         "redis://h:65536",
                         "redis://h:port",
                         "redis://h:-1",
                         "redis://h/x",
                         "redis://h/-1",
                         "redis://h/99999999999",
                         "redis://[::1",
                         "redis://[::1]x",
                         "redis://[::1]:",
                         "redis://h?db=1",
                         "redis://:bad%zzpw@h",
                         "redis://:trailing%4@h",
                         "unix://",
                         "unix://relative.sock",
                         "unix:///s?x=1",
                         "unix:///s?db=z"};
    for (const char* url : bad) {
        CAPTURE(url);
        auto e = parse_url(url);
        REQUIRE_FALSE(e.has_value());
        CHECK_FALSE(e.error().empty());
        CHECK(e.error().find("pw") == std::string::npos);
    }
}

TEST_CASE("URL: a host without a scheme gets the redis:// form to write, unless it has a login") {
    CHECK(parse_url("localhost:6379").error().ends_with(": write redis://localhost:6379"));
    CHECK(parse_url("10.0.0.5").error().ends_with(": write redis://10.0.0.5"));
    const auto login = parse_url(":pw@10.0.0.5:6379");
    CHECK(login.error().find("pw") == std::string::npos);
    CHECK(login.error().find("write redis://") == std::string::npos);
    CHECK(parse_url("http://h").error().find("write redis://") == std::string::npos);
}

TEST_CASE("URL: Sentinel, with its sentinels in order, the master's name and the master's login") {
    auto e = parse_url("redis-sentinel://alice:s3cret@s1:26380,s2,[::1]:26381/3#orders%20db");
    REQUIRE(e);
    CHECK(e->via_sentinel());
    CHECK_FALSE(e->tls);
    CHECK(e->master_name == "orders db");
    REQUIRE(e->sentinels.size() == 3);
    CHECK(e->sentinels[0] == HostPort{"s1", 26380});
    CHECK(e->sentinels[1] == HostPort{"s2", default_sentinel_port});
    CHECK(e->sentinels[2] == HostPort{"::1", 26381});
    CHECK(e->db == 3);
    CHECK(e->user == "alice");
    CHECK(e->password == "s3cret");
    // Before the sentinels are asked, there is no master's address to show.
    CHECK(e->host.empty());
    CHECK(e->display() == "master orders db (db 3)");
    e->host = "10.0.0.5";
    e->port = 6379;
    CHECK(e->display() == "master orders db at 10.0.0.5:6379 (db 3)");

    auto tls = parse_url("rediss-sentinel://s1#m");
    REQUIRE(tls);
    CHECK(tls->tls);
    CHECK(tls->db == 0);
    CHECK_FALSE(tls->password.has_value());
    CHECK(tls->sentinels == std::vector<HostPort>{{"s1", 26379}});
    CHECK_FALSE(parse_url("redis://h")->via_sentinel());
}

TEST_CASE("URL: bad Sentinel URLs are refused, saying which sentinel is at fault") {
    const char* bad[] = {
        "redis-sentinel://s1",          "redis-sentinel://s1#",       "redis-sentinel://#m",
        "redis-sentinel://:pw@#m",      "redis-sentinel://s1,#m",     "redis-sentinel://,s2#m",
        "redis-sentinel://s1/x#m",      "redis-sentinel://s1?db=1#m", "redis-sentinel://s1#bad%zz",
        "redis-sentinel://:pw%zz@s1#m", "rediss-sentinel://s1:0#m",   "redis-sentinel//s1#m"};
    for (const char* url : bad) {
        CAPTURE(url);
        auto e = parse_url(url);
        REQUIRE_FALSE(e.has_value());
        CHECK_FALSE(e.error().empty());
        CHECK(e.error().find("pw") == std::string::npos);
    }
    auto third = parse_url("redis-sentinel://a:1,b:2,c:port#m");
    REQUIRE_FALSE(third);
    CHECK(third.error() == "sentinel 3: the port must be a number from 1 to 65535");
    auto unnamed = parse_url("redis-sentinel://a,b");
    REQUIRE_FALSE(unnamed);
    CHECK(unnamed.error().find("#MASTER") != std::string::npos);
    // The password is found to be blotted out from the command line, as in a redis:// URL, also
    // when the master's name has an '@' or a '#', and in a refused URL whose password has a '#'.
    const std::pair<std::string_view, std::string_view> written[] = {
        {"redis-sentinel://u:hunter2@a,b#m", "hunter2"},
        {"rediss-sentinel://:hunter2@a#m@x#y@z", "hunter2"},
        {"redis-sentinel://:hun#ter2@a#m", "hun#ter2"}};
    for (const auto& case_ : written) {
        const std::string_view url = case_.first;
        CAPTURE(url);
        auto span = password_span(url);
        REQUIRE(span);
        CHECK(url.substr(span->start, span->length) == case_.second);
    }
    CHECK_FALSE(password_span("redis-sentinel://a#m@x"));
    auto odd_name = parse_url("redis-sentinel://:pw@a#m@x#y");
    REQUIRE(odd_name);
    CHECK(odd_name->master_name == "m@x#y");
    CHECK(odd_name->password == "pw");
}
