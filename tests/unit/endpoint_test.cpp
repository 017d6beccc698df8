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
