// Redis Cluster's answers that send a request elsewhere or ask for it again later: -MOVED and -ASK
// name the node that serves the key's slot; -TRYAGAIN (a slot half migrated) and -CLUSTERDOWN
// (the cluster cannot serve it now) ask the client to wait a little.
#pragma once

#include "redis/endpoint.hpp"
#include "redis/reply.hpp"

#include <optional>
#include <string>
#include <vector>

namespace redlockrun::redis {

struct Redirect {
    enum class Kind { moved, ask, try_again };
    Kind kind = Kind::moved;
    std::string host; // for moved and ask; empty: the host the answer came from
    int port = 0;
};

// What `reply` asks for, if it is one of those answers; nothing for anything else (and for a
// -MOVED or -ASK whose address cannot be read, which is then reported as the error it is).
std::optional<Redirect> redirect_of(const Reply& reply);

// The first redirect among `replies`: all of a request's commands name keys of one slot, so one
// answer of that kind stands for the whole request.
std::optional<Redirect> redirect_among(const std::vector<Reply>& replies);

// `from`, pointed at the node a redirect names: the same credentials, database and TLS.
Endpoint redirected(const Endpoint& from, const Redirect& redirect);

} // namespace redlockrun::redis
