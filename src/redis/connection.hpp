// One connection to Redis. It connects on first use and sends AUTH/SELECT in the same write as the
// first request, so an uncontended run costs one round trip per request. Every call is bounded by a
// deadline, and may be abandoned when the Wakeup asks (a signal while waiting).
#pragma once

#include "redis/resp.hpp"
#include "redis/settings.hpp"
#include "redis/stream.hpp"

#include <memory>
#include <string>
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
        abandoned,     // the Wakeup asked to stop
    };
    Kind kind = Kind::io;
    std::string message; // complete sentence for the user, without credentials
    // Replies to the caller's commands that arrived anyway: after login_refused the commands still
    // ran (as whatever user the connection had), and an abandoned call may have got some.
    std::vector<Reply> replies;
};

struct CallOptions {
    // Added to the reply deadline for commands that block on the server (BLPOP).
    Millis server_wait{0};
    // Give up when the Wakeup asks; otherwise the call finishes and the caller looks afterwards.
    bool abandon_on_wakeup = false;
    // An absolute bound on the whole call, connecting included, on top of the connect timeout.
    Deadline not_after;
};

class Connection {
public:
    // The wakeup, if any, must outlive the connection.
    Connection(ConnectionSettings settings, const Wakeup* wakeup);

    // Sends the commands in one write and returns their replies in order. Error replies are
    // returned as replies; only the login's are failures. After a failure other than
    // login_refused (and an abandoned call that got all its replies) the connection is closed,
    // and the next call reconnects.
    Expected<std::vector<Reply>, CallFailure> call(const std::vector<Command>& commands,
                                                   const CallOptions& options = {});

    void close();
    const Endpoint& endpoint() const { return settings_.endpoint; }

private:
    Expected<bool, CallFailure> connect(const CallOptions& options);
    CallFailure fail(CallFailure::Kind kind, std::string message);
    // Reads what the socket has now and decodes it into received_; false on EOF/error (failure_).
    bool read_available(CallFailure& failure);

    ConnectionSettings settings_;
    const Wakeup* wakeup_;
    std::unique_ptr<Stream> stream_;
    std::unique_ptr<ReplyDecoder> decoder_;
    std::vector<Command> login_; // AUTH / SELECT still to be sent with the next call
    std::vector<Reply> received_;
};

} // namespace redlockrun::redis
