// Names the server a connection reached, for -v: "Redis 7.0.15", "Valkey 8.0.1". The name comes
// from INFO server, which a connection asks only when its settings say so (ConnectionSettings::
// on_connected), in the same write as its login and first request: no round trip of its own, and
// nothing at all without -v.
#pragma once

#include "redis/endpoint.hpp"
#include "redis/reply.hpp"

#include <string>

namespace redlockrun::redis {

// The server's name and version from its reply to INFO server. Valkey reports the Redis version it
// is compatible with as redis_version (7.2.4 in Valkey 7.2 and 8.0) and its own as valkey_version,
// under server_name:valkey; Redis (6.0 to 7.2) has no server_name, and is named by redis_version.
// An error reply (an ACL user without INFO) or a reply without a version says so instead.
std::string describe_server(const Reply& info);

// The line -v prints for a new connection: "connected to 127.0.0.1:6379 (Redis 7.0.15)", with the
// database after the server ("(Valkey 8.0.1, db 5)").
std::string describe_connected(const Endpoint& endpoint, const Reply& info);

} // namespace redlockrun::redis
