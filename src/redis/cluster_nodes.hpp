// Redis Cluster's masters, read from CLUSTER NODES, for a request that must reach each of them:
// every master holds keys of its own slots only, so a SCAN of one node finds only its share.
// CLUSTER NODES is in every supported server (CLUSTER SHARDS came with Redis 7.0).
#pragma once

#include "base/expected.hpp"
#include "redis/endpoint.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace redlockrun::redis {

struct ClusterMaster {
    // Where clients reach it; an empty host is the host the answer came from (a node that has
    // not learnt its own address writes none for itself).
    HostPort address;
    bool myself = false; // the node that answered
};

// The masters that CLUSTER NODES's answer `text` describes (a line per node: id,
// ip:port@cport[,hostname], flags, master id, ...), except those that cannot be asked: failed
// (fail), without an address (noaddr) or still being introduced (handshake). Why the text cannot
// be read, if a line is not such a description.
Expected<std::vector<ClusterMaster>, std::string> cluster_masters(std::string_view text);

} // namespace redlockrun::redis
