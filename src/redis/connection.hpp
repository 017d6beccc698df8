// One connection to Redis, in three parts, one file each:
//   redis/connection.cpp         one server: connect, log in, send, read, a broken idle connection
//   redis/cluster_redirects.cpp  Redis Cluster: -MOVED, -ASK, -TRYAGAIN, -CLUSTERDOWN
//   redis/sentinel_failover.cpp  Sentinel: where the master is, and riding out failovers
// call() is their sequence: through Sentinel, the failover loop; inside it (or alone), the Cluster
// redirect loop; inside that, one request to one server.
//
// It connects on first use and sends AUTH/SELECT in the same write as the
// first request, so an uncontended run costs one round trip per request. Every call is bounded by a
// deadline, and may be abandoned when the Wakeup asks (a signal while waiting).
//
// A connection that worked and then broke while it was not in use (Redis's `timeout` setting, a
// proxy's or load balancer's idle timeout) must not cost a renewal or the release: a closed one is
// noticed before anything is sent on it and replaced; one that breaks only once the request is
// sent (a reset from a middlebox that forgot it) has the request sent once more, on a new
// connection. Every lock script may run twice (lock_client.hpp says how each one reads a repeat).
// A connection that never answered is not retried: a server that accepts connections and then
// says nothing gets --connect-timeout once, not twice.
//
// On Redis Cluster (cluster_redirects.cpp), a request answered with -MOVED is sent again to the
// node named, which this connection then keeps to; -ASK sends it once, with ASKING, on a connection
// of its own to the node named; -TRYAGAIN and -CLUSTERDOWN send it again after a pause. Every
// command of a request names keys of one slot, so nothing of it ran where it was redirected from. A
// redirect back to a node the request has been to already (the nodes disagree about the slot: a
// migration's end told to the source first) is followed after a jittered pause that grows with each
// one, as are the redirects after the first few: the nodes usually agree again within seconds, and
// a burst of redirects would spend the request's time in milliseconds. All of it lasts as long as
// the request's own time (--connect-timeout and the time the server may block, or
// CallOptions::not_after), and no longer: a misconfigured cluster that sends a request round in
// circles fails it then (CallFailure::Kind::redirected).
//
// Through Sentinel (a redis-sentinel:// URL; sentinel_failover.cpp), every new connection first
// asks the sentinels, in turn from the one that answered last, where the master is, and sends ROLE
// in the same write as the login and the first request: an address that is not a master's (the
// sentinels have not caught up with a failover) fails the call, and nothing it ran there counts. A
// request answered with -READONLY (the master was demoted under it), or only with -UNBLOCKED (a
// demoted master's BLPOP), a closed connection, or a master that cannot be reached are taken for a
// failover: the sentinels are asked again, and the request sent again to the master they name,
// while the request's time lasts. A caller that asks (CallOptions::confirm_master) has a sentinel
// asked before the request too, so that it never renews, or waits, on a master that the sentinels
// have replaced but not yet demoted (it goes on taking writes for seconds).
#pragma once

#include "base/exit_status.hpp"
#include "redis/resp.hpp"
#include "redis/settings.hpp"
#include "redis/stream.hpp"

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace redlockrun::redis {

struct CallFailure {
    enum class Kind {
        connect,       // could not connect
        timed_out,     // no (complete) answer in time
        closed,        // the server closed the connection
        io,            // a socket error
        protocol,      // bytes that are not RESP
        login_refused, // AUTH or SELECT answered with an error
        error_reply,   // the request itself was answered with an error
        loading,       // the server answered LOADING: it restarted and is reading its data back
        not_master,    // Sentinel: the server named as the master is not one (any more)
        redirected,    // Cluster: redirected, or asked to try again, for as long as it had
        abandoned,     // the Wakeup asked to stop
        system,        // this machine ran out of file descriptors or memory
    };
    Kind kind = Kind::io;
    std::string message; // complete sentence for the user, without credentials
    // Replies to the caller's commands that arrived anyway: after login_refused the commands still
    // ran (as whatever user the connection had), and an abandoned call may have got some.
    std::vector<Reply> replies;
    // The connection had answered earlier calls: it broke, or stalled, after working. Only then is
    // another attempt worth making; the connection has made one already if it broke (closed, io).
    bool connection_had_worked = false;
    // connect: nothing listened at the address, or nothing answered in time, as while a server
    // restarts; not a name that does not resolve, nor a TLS handshake that failed.
    bool no_server_answered = false;
};

// The exit status for a failure that ends the run: 71 (os_error) when this machine ran out of a
// resource, 69 (unavailable) for everything Redis and the network are to blame for.
ExitStatus exit_status_of(const CallFailure& failure);

struct CallOptions {
    // Added to the reply deadline for commands that block on the server (BLPOP).
    Millis server_wait{0};
    // Give up when the Wakeup asks; otherwise the call finishes and the caller looks afterwards.
    bool abandon_on_wakeup = false;
    // An absolute bound on the whole call, connecting included, on top of the connect timeout.
    Deadline not_after;
    // Sentinel: ask a sentinel whether the master is still the one connected to, before sending.
    bool confirm_master = false;
    // Cluster: redirects are followed until then when that is later than the request's own time:
    // a release is worth trying for as long as its lock is valid, however long the nodes take to
    // agree on where the slot is. Each attempt on a node keeps its own time.
    Deadline redirects_until;
};

class Connection {
public:
    // The wakeup, if any, must outlive the connection.
    Connection(ConnectionSettings settings, const Wakeup* wakeup);

    // Sends the commands in one write and returns their replies in order. Error replies are
    // returned as replies; only the login's are failures, and a Cluster's redirects that did not
    // end within the request's time (redirected). After a failure other than
    // login_refused (and an abandoned call that got all its replies) the connection is closed,
    // and the next call reconnects. A call on a connection that had worked, and broke, is made
    // once more on a new connection (see above).
    Expected<std::vector<Reply>, CallFailure> call(const std::vector<Command>& commands,
                                                   const CallOptions& options = {});

    // How many calls so far were sent a second time because the connection broke after the first
    // had gone out: the server may have run them twice, and answered only the second.
    unsigned resends() const { return resends_; }

    // When the last request went out: the replies of the last call come from then or later, when
    // it had to be sent again (a failover, a broken connection) too.
    SteadyTime last_sent() const { return last_sent_; }

    void close();
    // The node this connection talks to: the URL's, or the one a -MOVED sent it to, or the master
    // the sentinels named.
    const Endpoint& endpoint() const { return settings_.endpoint; }

    // Sentinel: whether the sentinel that answered last now names another master than the one
    // connected to (which is then the one the next connection goes to; this one stays open until
    // closed). One question to one sentinel, given at most half the time to options.not_after:
    // the request it comes before must not miss its deadline for it. False when that sentinel
    // does not answer (the next question goes to the next sentinel), or without Sentinel.
    bool master_moved(const CallOptions& options);
    // Sentinel: what the last master_moved() found, if it was not "still the same master" (the
    // sentinel's other answer, or why none answered); empty afterwards, and without news.
    std::string take_master_news() { return std::exchange(master_news_, {}); }

    // Redirects followed at once, each to a node the request has not been to; after them, and
    // for every one back to a node already tried, the pauses below (jittered down to half).
    static constexpr int redirects_without_pause = 5;
    static constexpr Millis first_redirect_pause{20};
    static constexpr Millis longest_redirect_pause{500};

private:
    // --- one server (connection.cpp) ---
    // One request to the server connected to: a connection closed while idle is replaced first,
    // and a request broken once it had gone out is sent once more on a new connection.
    Expected<std::vector<Reply>, CallFailure> call_here(const std::vector<Command>& commands,
                                                        const CallOptions& options);
    // One try of call_here(), on the connection there is or on a new one.
    Expected<std::vector<Reply>, CallFailure> attempt(const std::vector<Command>& commands,
                                                      const CallOptions& options);
    Expected<bool, CallFailure> connect(const CallOptions& options);
    CallFailure fail(CallFailure::Kind kind, std::string message);
    // Reads what the socket has now and decodes it into received_; false on EOF/error (failure_).
    bool read_available(CallFailure& failure);

    // --- Redis Cluster (cluster_redirects.cpp) ---
    // call_here(), following the redirects its answers give, for as long as the request's time.
    Expected<std::vector<Reply>, CallFailure> call_redirected(const std::vector<Command>& commands,
                                                              const CallOptions& options);
    // The commands sent once to the node an -ASK names, each after ASKING.
    Expected<std::vector<Reply>, CallFailure>
    ask(const Endpoint& node, const std::vector<Command>& commands, const CallOptions& options);
    // Between half of `pause` and all of it.
    Millis jittered(Millis pause);

    // --- Sentinel (sentinel_failover.cpp) ---
    // call_redirected(), sent again to the master the sentinels name after anything a failover
    // explains, for as long as the request's time.
    Expected<std::vector<Reply>, CallFailure>
    call_through_failovers(const std::vector<Command>& commands, const CallOptions& options);
    // Points the endpoint at the master: the one a sentinel named last (master_moved()), or the
    // one the sentinels name now.
    Expected<bool, CallFailure> resolve_master(const CallOptions& options);
    // Asks up to `tries` sentinels in turn, from the one that answered last, where the master
    // is. The failure says what each of them answered.
    Expected<HostPort, CallFailure> ask_sentinels(const CallOptions& options, size_t tries);
    // The failure (not_master) if ROLE's answer, sent with the login, is not a master's; the
    // next question then goes to the next sentinel.
    std::optional<CallFailure> refuse_unless_master(const Reply& role);

    ConnectionSettings settings_;
    const Wakeup* wakeup_;
    std::unique_ptr<Stream> stream_;
    std::unique_ptr<ReplyDecoder> decoder_;
    std::vector<Command> login_; // AUTH / SELECT still to be sent with the next call
    std::vector<Reply> received_;
    unsigned resends_ = 0;
    SteadyTime last_sent_{};
    // Sentinel: the connection to the sentinel that answered last (kept for the next question),
    // its place in the URL's list, a master it named that the next connection is to go to, and
    // whether ROLE went out with the login.
    std::unique_ptr<Connection> sentinel_;
    size_t sentinel_index_ = 0;
    std::optional<HostPort> next_master_;
    std::string named_by_; // the sentinel that named the master last, for messages
    std::string master_news_;
    bool checking_role_ = false;
    bool describing_server_ = false;         // INFO server went out with the login, before any ROLE
    std::optional<std::minstd_rand> random_; // seeded at the first pause between redirects
};

} // namespace redlockrun::redis
