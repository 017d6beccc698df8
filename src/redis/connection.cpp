#include "redis/connection.hpp"

#include "redis/connect.hpp"
#include "redis/error_reply.hpp"
#include "redis/server_info.hpp"

#include <fmt/format.h>

#include <poll.h>

namespace redlockrun::redis {

ExitStatus exit_status_of(const CallFailure& failure) {
    return failure.kind == CallFailure::Kind::system ? ExitStatus::os_error
                                                     : ExitStatus::unavailable;
}

Connection::Connection(ConnectionSettings settings, const Wakeup* wakeup)
    : settings_(std::move(settings)), wakeup_(wakeup) {}

void Connection::close() {
    stream_.reset();
    decoder_.reset();
    login_.clear();
    received_.clear();
    checking_role_ = false;
    describing_server_ = false;
}

CallFailure Connection::fail(CallFailure::Kind kind, std::string message) {
    close();
    return CallFailure{kind, std::move(message), {}};
}

Expected<bool, CallFailure> Connection::connect(const CallOptions& options) {
    if (settings_.endpoint.via_sentinel()) {
        if (auto resolved = resolve_master(options); !resolved) {
            close();
            return unexpected(std::move(resolved.error()));
        }
    }
    const Wakeup guarded{wakeup_ ? wakeup_->fd : -1,
                         [&] { return wakeup_->handle() && options.abandon_on_wakeup; }};
    const SteadyTime started = steady_now();
    const SteadyTime deadline = earliest(started + settings_.connect_timeout, options.not_after);
    auto stream = connect_stream(settings_.endpoint, settings_.tls.get(), deadline,
                                 wakeup_ ? &guarded : nullptr);
    if (!stream) {
        const auto& failure = stream.error();
        if (failure.kind == ConnectFailure::Kind::abandoned) {
            return unexpected(fail(CallFailure::Kind::abandoned, "interrupted while connecting"));
        }
        // The time it was given, which a caller's own deadline may have made shorter than
        // --connect-timeout.
        std::string reason =
            failure.kind == ConnectFailure::Kind::timed_out
                ? fmt::format("{} within {}", failure.message, format_duration(deadline - started))
                : failure.message;
        CallFailure call_failure =
            fail(failure.kind == ConnectFailure::Kind::system ? CallFailure::Kind::system
                                                              : CallFailure::Kind::connect,
                 fmt::format("cannot connect to Redis at {} ({}): {}", settings_.endpoint.display(),
                             describe_url_source(settings_.url_source), reason));
        call_failure.no_server_answered =
            failure.refused || failure.kind == ConnectFailure::Kind::timed_out;
        return unexpected(std::move(call_failure));
    }
    stream_ = std::move(*stream);
    decoder_ = std::make_unique<ReplyDecoder>();
    login_.clear();
    const auto& endpoint = settings_.endpoint;
    if (endpoint.password) {
        login_.push_back(endpoint.user.empty()
                             ? Command{"AUTH", *endpoint.password}
                             : Command{"AUTH", endpoint.user, *endpoint.password});
    }
    if (endpoint.db != 0) {
        login_.push_back(Command{"SELECT", std::to_string(endpoint.db)});
    }
    if (settings_.on_connected) {
        login_.push_back(Command{"INFO", "server"});
        describing_server_ = true;
    }
    if (endpoint.via_sentinel()) {
        login_.push_back(Command{"ROLE"});
        checking_role_ = true;
    }
    return true;
}

bool Connection::read_available(CallFailure& failure) {
    char buffer[16384];
    bool open = true;
    for (;;) {
        IoResult result = stream_->read(buffer, sizeof buffer);
        if (result.status == IoResult::Status::done) {
            decoder_->feed(std::string_view(buffer, result.bytes));
            if (result.bytes == sizeof buffer) {
                continue;
            }
            // A short read drained the socket: asking again would only return EAGAIN. Anything
            // that arrives later makes the socket readable for the next wait.
            break;
        }
        if (result.status == IoResult::Status::closed) {
            open = false;
            failure = CallFailure{
                CallFailure::Kind::closed,
                fmt::format("Redis at {} closed the connection", settings_.endpoint.display()),
                {}};
        } else if (result.status == IoResult::Status::failed) {
            open = false;
            failure = CallFailure{CallFailure::Kind::io,
                                  fmt::format("lost the connection to Redis at {}: {}",
                                              settings_.endpoint.display(), result.error),
                                  {}};
        }
        break;
    }
    for (;;) {
        auto reply = decoder_->next();
        if (!reply) {
            failure = CallFailure{CallFailure::Kind::protocol,
                                  fmt::format("Redis at {} sent something that is not RESP: {}",
                                              settings_.endpoint.display(), reply.error()),
                                  {}};
            close();
            return false;
        }
        if (!*reply) {
            break;
        }
        received_.push_back(std::move(**reply));
    }
    if (!open) {
        // A server that refuses a client ("max number of clients reached") says why, then closes.
        for (const auto& reply : received_) {
            if (reply.is_error()) {
                failure.message = explain_error_reply(reply, settings_.endpoint);
                break;
            }
        }
        close();
    }
    return open;
}

Expected<std::vector<Reply>, CallFailure> Connection::call(const std::vector<Command>& commands,
                                                           const CallOptions& options) {
    // One server, whose Cluster redirects are followed (redis/cluster_redirects.cpp); through
    // Sentinel, whose failovers are ridden out around that (redis/sentinel_failover.cpp).
    if (settings_.endpoint.via_sentinel()) {
        return call_through_failovers(commands, options);
    }
    return call_redirected(commands, options);
}

Expected<std::vector<Reply>, CallFailure>
Connection::call_here(const std::vector<Command>& commands, const CallOptions& options) {
    if (stream_ && peer_has_closed(stream_->fd())) {
        // Closed while idle: nothing of this call has gone out, so a new connection is all it
        // takes, and the request is sent once.
        close();
    }
    const bool had_worked = stream_ != nullptr;
    auto replies = attempt(commands, options);
    if (!replies && had_worked &&
        (replies.error().kind == CallFailure::Kind::closed ||
         replies.error().kind == CallFailure::Kind::io)) {
        // Broken once the request had gone out (a reset from a proxy that forgot the connection):
        // once more, on a new connection. Its failure is that of a connection that never worked.
        ++resends_;
        return attempt(commands, options);
    }
    if (!replies) {
        replies.error().connection_had_worked = had_worked;
    }
    return replies;
}

Expected<std::vector<Reply>, CallFailure> Connection::attempt(const std::vector<Command>& commands,
                                                              const CallOptions& options) {
    if (!stream_) {
        if (auto connected = connect(options); !connected) {
            return unexpected(connected.error());
        }
    }
    std::string out;
    for (const auto& command : login_) {
        encode_command(command, out);
    }
    for (const auto& command : commands) {
        encode_command(command, out);
    }
    const size_t login_count = login_.size();
    const size_t expected = login_count + commands.size();
    const bool role_asked = checking_role_;
    checking_role_ = false;
    // INFO's answer is for -v alone: a server that refuses it (an ACL user without INFO) still
    // logged this connection in.
    const bool info_asked = describing_server_;
    const size_t info_index = login_count - 1 - (role_asked ? 1 : 0);
    describing_server_ = false;
    login_.clear();
    received_.clear();

    const Wakeup guarded{wakeup_ ? wakeup_->fd : -1,
                         [&] { return wakeup_->handle() && options.abandon_on_wakeup; }};
    const SteadyTime started = steady_now();
    last_sent_ = started;
    const Millis patience = settings_.connect_timeout + options.server_wait;
    const SteadyTime deadline = earliest(started + patience, options.not_after);
    size_t written = 0;
    while (received_.size() < expected) {
        while (written < out.size()) {
            IoResult result = stream_->write(out.data() + written, out.size() - written);
            if (result.status == IoResult::Status::done) {
                written += result.bytes;
            } else if (result.status == IoResult::Status::closed) {
                return unexpected(
                    fail(CallFailure::Kind::closed, fmt::format("Redis at {} closed the connection",
                                                                settings_.endpoint.display())));
            } else if (result.status == IoResult::Status::failed) {
                return unexpected(fail(CallFailure::Kind::io,
                                       fmt::format("lost the connection to Redis at {}: {}",
                                                   settings_.endpoint.display(), result.error)));
            } else {
                break;
            }
        }
        // No reply can be there before the server has read the request: wait, then read, rather
        // than read first and find nothing.
        const short events = static_cast<short>(POLLIN | (written < out.size() ? POLLOUT : 0));
        CallFailure failure;
        switch (wait_ready(stream_->fd(), events, deadline, wakeup_ ? &guarded : nullptr)) {
        case Readiness::ready:
            if (!read_available(failure)) {
                return unexpected(std::move(failure));
            }
            continue;
        case Readiness::timed_out:
            // The time it waited: a caller's deadline (a renewal's) may have cut it short.
            return unexpected(fail(CallFailure::Kind::timed_out,
                                   fmt::format("Redis at {} did not answer within {}",
                                               settings_.endpoint.display(),
                                               format_duration(deadline - started))));
        case Readiness::abandoned: {
            // Keep what has arrived already: a BLPOP may have taken a wake-up token that must be
            // passed on.
            read_available(failure);
            CallFailure abandoned{CallFailure::Kind::abandoned, "interrupted", {}};
            for (size_t i = login_count; i < received_.size(); ++i) {
                abandoned.replies.push_back(std::move(received_[i]));
            }
            if (received_.size() < expected) {
                close();
            }
            return unexpected(std::move(abandoned));
        }
        }
    }

    std::vector<Reply> replies(std::make_move_iterator(received_.begin() + login_count),
                               std::make_move_iterator(received_.end()));
    for (size_t i = 0; i < login_count; ++i) {
        if (received_[i].is_error() && !(info_asked && i == info_index)) {
            return unexpected(CallFailure{CallFailure::Kind::login_refused,
                                          explain_error_reply(received_[i], settings_.endpoint),
                                          std::move(replies)});
        }
    }
    if (role_asked) {
        if (auto refused = refuse_unless_master(received_[login_count - 1])) {
            return unexpected(std::move(*refused));
        }
    }
    if (info_asked) {
        settings_.on_connected(describe_connected(settings_.endpoint, received_[info_index]));
    }
    received_.clear();
    return replies;
}

} // namespace redlockrun::redis
