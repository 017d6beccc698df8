#include "redis/server_info.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace redlockrun::redis;

namespace {

Reply bulk(std::string text) {
    Reply reply;
    reply.kind = Reply::Kind::string;
    reply.text = std::move(text);
    return reply;
}

} // namespace

TEST_CASE("server info: Redis is named by redis_version, which it has had since 6.0") {
    CHECK(describe_server(bulk("# Server\r\nredis_version:6.0.20\r\nredis_git_sha1:00000000\r\n"
                               "redis_mode:standalone\r\n")) == "Redis 6.0.20");
    CHECK(describe_server(bulk("# Server\r\nredis_version:7.0.15\r\n")) == "Redis 7.0.15");
}

TEST_CASE("server info: Valkey by its own name and version, not the Redis version it reports") {
    const std::string valkey = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n"
                               "valkey_version:8.0.1\r\nredis_git_sha1:00000000\r\n";
    CHECK(describe_server(bulk(valkey)) == "Valkey 8.0.1");
    // A server_name without its version field: the Redis version is all there is.
    CHECK(describe_server(bulk("redis_version:7.2.4\r\nserver_name:valkey\r\n")) == "Redis 7.2.4");
}

TEST_CASE("server info: a field is matched whole, at the start of a line") {
    // redis_version_x and a value naming redis_version are not redis_version.
    CHECK(describe_server(bulk("redis_version_x:1\r\nexecutable:redis_version:9\r\n"
                               "redis_version:7.2.6\r\n")) == "Redis 7.2.6");
    CHECK(describe_server(bulk("redis_version:7.2.6")) == "Redis 7.2.6"); // no CRLF at the end
    CHECK(describe_server(bulk("redis_mode:standalone\r\n")) == "INFO named no version");
}

TEST_CASE("server info: a refused INFO, or an answer of another kind, says so") {
    Reply refused;
    refused.kind = Reply::Kind::error;
    refused.text = "NOPERM User no-info has no permissions to run the 'info' command";
    CHECK(describe_server(refused) ==
          "INFO refused: NOPERM User no-info has no permissions to run the 'info' command");
    Reply number;
    number.kind = Reply::Kind::integer;
    number.integer = 3;
    CHECK(describe_server(number) == "INFO answered (integer) 3");
}

TEST_CASE("server info: -v's line names the address, the server and a database other than 0") {
    Endpoint endpoint;
    endpoint.port = 7000;
    const Reply info = bulk("redis_version:7.0.15\r\n");
    CHECK(describe_connected(endpoint, info) == "connected to 127.0.0.1:7000 (Redis 7.0.15)");
    endpoint.db = 5;
    CHECK(describe_connected(endpoint, info) == "connected to 127.0.0.1:7000 (Redis 7.0.15, db 5)");
}
