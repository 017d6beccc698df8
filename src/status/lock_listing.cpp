#include "status/lock_listing.hpp"

#include "base/fatal.hpp"
#include "base/printable.hpp"
#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/scripts.hpp"
#include "redis/cluster_nodes.hpp"
#include "redis/connection.hpp"
#include "redis/error_reply.hpp"
#include "redis/redirect.hpp"
#include "redis/script.hpp"
#include "status/glob.hpp"
#include "status/lock_state.hpp"
#include "status/status_json.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>

namespace redlockrun {

namespace {

// What every companion's name contains (lock/keys.hpp): SCAN's filter on the server.
constexpr const char* companion_match = "*:redlockrun:*";
// Keys SCAN looks at per call: few enough that each call keeps the server busy for a millisecond
// or so, enough that a large keyspace takes few round trips.
constexpr const char* scan_count = "1000";
// Status scripts sent in one write: a round trip per hundred locks, not per lock.
constexpr size_t statuses_per_round_trip = 100;

[[noreturn]] void fail(const redis::CallFailure& failure) {
    throw Fatal(redis::exit_status_of(failure), failure.message);
}

[[noreturn]] void fail_on_reply(const redis::Reply& reply, const redis::Connection& connection) {
    if (reply.is_error()) {
        throw Fatal(ExitStatus::unavailable,
                    fmt::format("cannot list the locks: {}",
                                redis::explain_error_reply(reply, connection.endpoint())));
    }
    throw Fatal(
        ExitStatus::unavailable,
        fmt::format("cannot list the locks: unexpected answer to SCAN: {}", reply.describe()));
}

// The keys of the locks whose companions SCAN finds, that match `pattern`, sorted byte by byte.
std::set<std::string> find_lock_keys(redis::Connection& connection, const std::string& pattern) {
    std::set<std::string> keys;
    std::string cursor = "0";
    // Redis never hands out a cursor twice in one iteration; a server that does would keep this
    // loop going for ever.
    std::set<std::string> cursors_seen;
    do {
        auto replies =
            connection.call({{"SCAN", cursor, "MATCH", companion_match, "COUNT", scan_count}});
        if (!replies) {
            fail(replies.error());
        }
        const redis::Reply& reply = replies->front();
        const redis::Reply* next = reply.at(0);
        const redis::Reply* names = reply.at(1);
        if (next == nullptr || !next->as_string() || names == nullptr ||
            names->kind != redis::Reply::Kind::array) {
            fail_on_reply(reply, connection);
        }
        cursor = std::string(*next->as_string());
        if (cursor != "0" && !cursors_seen.insert(cursor).second) {
            throw Fatal(ExitStatus::unavailable,
                        fmt::format("cannot list the locks: Redis at {} answered SCAN with the "
                                    "cursor {} a second time, so the scan would never end",
                                    connection.endpoint().display(), cursor));
        }
        for (const auto& name : names->elements) {
            const auto text = name.as_string();
            if (!text) {
                fail_on_reply(reply, connection);
            }
            if (auto key = lock::lock_key_of(*text); key && glob_match(pattern, *key)) {
                keys.insert(std::move(*key));
            }
        }
    } while (cursor != "0");
    return keys;
}

// The state of each lock, with the status script pipelined.
std::vector<LockState> lock_states(redis::Connection& connection,
                                   const std::vector<std::string>& keys) {
    const std::vector<std::string> args{std::to_string(connection.endpoint().db)};
    const auto companions = [](const std::string& key) { return lock::lock_keys(key)->all(); };
    std::vector<LockState> states;
    while (states.size() < keys.size()) {
        const size_t first = states.size();
        const size_t end = std::min(keys.size(), first + statuses_per_round_trip);
        std::vector<redis::Command> commands;
        for (size_t i = first; i < end; ++i) {
            commands.push_back(
                redis::evalsha_command(lock::scripts::status, companions(keys[i]), args));
        }
        auto replies = connection.call(commands);
        if (!replies) {
            fail(replies.error());
        }
        for (size_t i = first; i < end; ++i) {
            redis::Reply& reply = (*replies)[i - first];
            const bool unknown_script = reply.error_code() == "NOSCRIPT";
            // The server does not know the script yet: sending it in full for this lock makes it
            // known, and the rest of the batch is sent again.
            auto result = unknown_script
                              ? redis::run_script(connection, lock::scripts::status,
                                                  companions(keys[i]), args)
                              : redis::script_result(std::move(reply), connection.endpoint());
            if (!result) {
                fail(result.error());
            }
            auto snapshot = lock::decode_status(*result);
            if (!snapshot) {
                throw Fatal(ExitStatus::unavailable, snapshot.error());
            }
            states.push_back(interpret_status(keys[i], *snapshot));
            if (unknown_script) {
                break;
            }
        }
    }
    return states;
}

// The servers whose locks are listed: on a Redis Cluster every master (each holds the keys of its
// own slots); otherwise the one server there is. A null entry stands for `connection` (the node
// that answered, when it is a master), the others are new connections made with `settings`,
// pointed at their master. CLUSTER NODES is the question: a server that is not in a cluster
// answers it with an error, and a user who may not ask it is told so, since listing one node of
// a cluster would leave locks out without a word.
std::vector<std::unique_ptr<redis::Connection>>
servers_to_list(redis::Connection& connection, const redis::ConnectionSettings& settings) {
    std::vector<std::unique_ptr<redis::Connection>> servers;
    auto replies = connection.call({{"CLUSTER", "NODES"}});
    if (!replies) {
        fail(replies.error());
    }
    const redis::Reply& reply = replies->front();
    if (reply.error_code() == "NOPERM") {
        throw Fatal(ExitStatus::unavailable,
                    fmt::format("cannot list the locks: Redis at {} answered CLUSTER NODES, which "
                                "--list asks to find every master of a Redis Cluster, with {}; "
                                "allow the user +cluster|nodes",
                                connection.endpoint().display(), printable(reply.text)));
    }
    if (reply.is_error()) {
        servers.push_back(nullptr); // the connection there is
        return servers;
    }
    const auto text = reply.as_string();
    if (!text) {
        throw Fatal(ExitStatus::unavailable,
                    fmt::format("cannot list the locks: unexpected answer to CLUSTER NODES from "
                                "{}: {}",
                                connection.endpoint().display(), reply.describe()));
    }
    auto masters = redis::cluster_masters(*text);
    if (!masters) {
        throw Fatal(ExitStatus::unavailable,
                    fmt::format("cannot list the locks: Redis Cluster at {}: {}",
                                connection.endpoint().display(), masters.error()));
    }
    for (const redis::ClusterMaster& master : *masters) {
        if (master.myself) {
            servers.push_back(nullptr);
            continue;
        }
        redis::ConnectionSettings there = settings;
        there.endpoint = redis::redirected(
            connection.endpoint(), redis::Redirect{redis::Redirect::Kind::moved,
                                                   master.address.host, master.address.port});
        servers.push_back(std::make_unique<redis::Connection>(std::move(there), nullptr));
    }
    return servers;
}

} // namespace

int list_locks(const std::string& pattern, StatusFormat format, ListOnly only,
               const redis::ConnectionSettings& settings) {
    redis::Connection first(settings, nullptr);
    // By key, sorted byte by byte. A key found on two masters (its slot moved during the listing)
    // is listed once.
    std::map<std::string, LockState> states;
    for (const auto& server : servers_to_list(first, settings)) {
        redis::Connection& connection = server ? *server : first;
        const std::set<std::string> found = find_lock_keys(connection, pattern);
        for (LockState& state :
             lock_states(connection, std::vector<std::string>(found.begin(), found.end()))) {
            std::string key = state.key;
            states.emplace(std::move(key), std::move(state));
        }
    }
    int status = to_int(ExitStatus::ok);
    for (const auto& [key, state] : states) {
        const bool held = state.condition == LockCondition::held ||
                          state.condition == LockCondition::held_after_command;
        if (only == ListOnly::held && !held) {
            continue;
        }
        const std::string line =
            format == StatusFormat::json ? status_json(state) : printable(status_line(state));
        std::fputs((line + "\n").c_str(), stdout);
        if (held) {
            status = to_int(ExitStatus::not_acquired);
        }
    }
    std::fflush(stdout);
    return status;
}

} // namespace redlockrun
