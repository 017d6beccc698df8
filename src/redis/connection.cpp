#include "redis/connection.hpp"

#include "base/random_seed.hpp"
#include "redis/connect.hpp"
#include "redis/error_reply.hpp"
#include "redis/redirect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <poll.h>

namespace redlockrun::redis {

namespace {

// Sentinel: replies that say the master was demoted under the request, so that it did not run
// there: a -READONLY (a write refused), or nothing but errors among which an -UNBLOCKED (a BLPOP
// that a demotion cut short; the acquire behind it was refused).
bool demoted(const std::vector<Reply>& replies) {
    bool unblocked = false;
    bool all_errors = true;
    for (const auto& reply : replies) {
        if (reply.error_code() == "READONLY") {
            return true;
        }
        unblocked = unblocked || reply.error_code() == "UNBLOCKED";
        all_errors = all_errors && reply.is_error();
    }
    return unblocked && all_errors;
}

// Sentinel: failures of a call that a failover explains, worth asking the sentinels again for.
bool failover_failure(CallFailure::Kind kind) {
    return kind == CallFailure::Kind::not_master || kind == CallFailure::Kind::connect ||
           kind == CallFailure::Kind::closed || kind == CallFailure::Kind::io;
}

// ROLE's answer starts with "master", "slave" or "sentinel".
std::string role_of(const Reply& role) {
    const Reply* first = role.at(0);
    auto name = first ? first->as_string() : std::nullopt;
    return name ? std::string(*name) : role.describe();
}

// SENTINEL get-master-addr-by-name's answer: [host, port].
std::optional<HostPort> address_of(const Reply& answer) {
    if (answer.kind != Reply::Kind::array || answer.elements.size() != 2 ||
        answer.elements[0].kind != Reply::Kind::string ||
        answer.elements[1].kind != Reply::Kind::string || answer.elements[0].text.empty()) {
        return std::nullopt;
    }
    const std::string& port = answer.elements[1].text;
    int number = 0;
    auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (error != std::errc{} || end != port.data() + port.size() || number < 1 || number > 65535) {
        return std::nullopt;
    }
    return HostPort{answer.elements[0].text, number};
}

} // namespace

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
}

CallFailure Connection::fail(CallFailure::Kind kind, std::string message) {
    close();
    return CallFailure{kind, std::move(message), {}};
}

Expected<bool, CallFailure> Connection::connect(const CallOptions& options) {
    if (settings_.endpoint.via_sentinel()) {
        std::optional<HostPort> master = std::move(next_master_);
        next_master_.reset();
        if (!master) {
            auto asked = ask_sentinels(options, settings_.endpoint.sentinels.size());
            if (!asked) {
                close();
                return unexpected(std::move(asked.error()));
            }
            master = std::move(*asked);
        }
        settings_.endpoint.host = std::move(master->host);
        settings_.endpoint.port = master->port;
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
        return unexpected(fail(failure.kind == ConnectFailure::Kind::system
                                   ? CallFailure::Kind::system
                                   : CallFailure::Kind::connect,
                               fmt::format("cannot connect to Redis at {}: {}",
                                           settings_.endpoint.display(), reason)));
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
    if (endpoint.via_sentinel()) {
        login_.push_back(Command{"ROLE"});
        checking_role_ = true;
    }
    return true;
}

Expected<HostPort, CallFailure> Connection::ask_sentinels(const CallOptions& options,
                                                          size_t tries) {
    const Endpoint& endpoint = settings_.endpoint;
    const size_t count = endpoint.sentinels.size();
    tries = std::min(tries, count);
    std::vector<std::string> answers;
    // A sentinel that answers without an address (it knows no such master, or refuses the login)
    // will not know better in a moment, unlike one that cannot be reached during a failover.
    bool answered = false;
    const size_t first = sentinel_index_;
    for (size_t i = 0; i < tries; ++i) {
        const size_t index = (first + i) % count;
        if (!sentinel_ || index != sentinel_index_) {
            ConnectionSettings settings;
            settings.endpoint.host = endpoint.sentinels[index].host;
            settings.endpoint.port = endpoint.sentinels[index].port;
            settings.endpoint.tls = endpoint.tls;
            settings.endpoint.is_sentinel = true;
            settings.endpoint.user = settings_.sentinel_user;
            settings.endpoint.password = settings_.sentinel_password;
            settings.connect_timeout = settings_.connect_timeout;
            settings.tls = settings_.tls;
            sentinel_ = std::make_unique<Connection>(std::move(settings), wakeup_);
            sentinel_index_ = index;
        }
        CallOptions asking;
        asking.abandon_on_wakeup = options.abandon_on_wakeup;
        asking.not_after = options.not_after;
        auto answer = sentinel_->call(
            {{"SENTINEL", "get-master-addr-by-name", endpoint.master_name}}, asking);
        const std::string sentinel = sentinel_->endpoint().display();
        if (!answer) {
            const auto kind = answer.error().kind;
            if (kind == CallFailure::Kind::abandoned || kind == CallFailure::Kind::system) {
                return unexpected(std::move(answer.error()));
            }
            answered = answered || kind == CallFailure::Kind::login_refused;
            answers.push_back(std::move(answer.error().message));
            sentinel_.reset();
            sentinel_index_ = (index + 1) % count; // the next question goes to the next one
            continue;
        }
        answered = true;
        const Reply& reply = answer->front();
        if (auto master = address_of(reply)) {
            named_by_ = sentinel;
            return *master;
        }
        if (reply.is_nil()) {
            answers.push_back(
                fmt::format("{} knows no master called {}", sentinel, endpoint.master_name));
        } else if (reply.is_error()) {
            answers.push_back(explain_error_reply(reply, sentinel_->endpoint()));
        } else {
            answers.push_back(
                fmt::format("{} answered {}, not an address", sentinel, reply.describe()));
        }
        sentinel_.reset();
        sentinel_index_ = (index + 1) % count;
    }
    return unexpected(
        CallFailure{answered ? CallFailure::Kind::error_reply : CallFailure::Kind::connect,
                    fmt::format("no sentinel said where master {} is: {}", endpoint.master_name,
                                fmt::join(answers, "; ")),
                    {}});
}

bool Connection::master_moved(const CallOptions& options) {
    if (!settings_.endpoint.via_sentinel()) {
        return false;
    }
    CallOptions asking = options;
    const SteadyTime now = steady_now();
    if (options.not_after) {
        const auto half = std::chrono::duration_cast<Millis>(*options.not_after - now) / 2;
        asking.not_after = now + std::max(half, Millis{0});
    }
    const HostPort connected{settings_.endpoint.host, settings_.endpoint.port};
    auto master = ask_sentinels(asking, 1);
    if (!master) {
        // The sentinels are out of reach: the master may well be fine.
        master_news_ = fmt::format("could not confirm that {} is still the master ({})",
                                   connected.display(), master.error().message);
        return false;
    }
    if (*master == connected) {
        return false;
    }
    master_news_ =
        fmt::format("{} names {} as master {} now, no longer {}", named_by_, master->display(),
                    settings_.endpoint.master_name, connected.display());
    next_master_ = std::move(*master);
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
    if (!settings_.endpoint.via_sentinel()) {
        return call_redirected(commands, options);
    }
    const SteadyTime until =
        earliest(steady_now() + settings_.connect_timeout + options.server_wait, options.not_after);
    if (options.confirm_master && stream_ && master_moved(options)) {
        close(); // the next attempt connects to the master the sentinels name now
    }
    Millis pause{100};
    for (;;) {
        auto replies = call_redirected(commands, options);
        if (replies ? !demoted(*replies) : !failover_failure(replies.error().kind)) {
            return replies;
        }
        if (!replies && (replies.error().kind == CallFailure::Kind::closed ||
                         replies.error().kind == CallFailure::Kind::io)) {
            ++resends_; // it went out: it may have run before the connection broke
        }
        close();
        const SteadyTime resume = steady_now() + pause;
        if (resume >= until) {
            return replies;
        }
        const Wakeup guarded{wakeup_ ? wakeup_->fd : -1,
                             [&] { return wakeup_->handle() && options.abandon_on_wakeup; }};
        if (wait_ready(-1, POLLIN, resume, wakeup_ ? &guarded : nullptr) == Readiness::abandoned) {
            return unexpected(CallFailure{CallFailure::Kind::abandoned, "interrupted", {}});
        }
        pause = std::min(pause * 2, Millis{1000});
    }
}

Expected<std::vector<Reply>, CallFailure>
Connection::call_redirected(const std::vector<Command>& commands, const CallOptions& options) {
    const SteadyTime started = steady_now();
    const SteadyTime until = std::max(
        earliest(started + settings_.connect_timeout + options.server_wait, options.not_after),
        options.redirects_until.value_or(started));
    std::vector<HostPort> visited{{settings_.endpoint.host, settings_.endpoint.port}};
    int followed_at_once = 0;
    std::optional<Endpoint> asking; // the node an -ASK named, for the next try only
    Millis pause = first_redirect_pause;
    for (;;) {
        const Endpoint answering = asking ? *asking : settings_.endpoint;
        auto replies = asking ? ask(*asking, commands, options) : call_here(commands, options);
        asking.reset();
        if (!replies) {
            return replies;
        }
        const auto redirect = redirect_among(*replies);
        if (!redirect) {
            return replies; // an answer, or an error the caller reports
        }
        const Endpoint named = redirected(answering, *redirect);
        const HostPort node{named.host, named.port};
        // A node this request has been sent to already sends it back: the nodes disagree about
        // the slot (a migration's end told to one of them first) until the last one is told.
        // Each round is milliseconds, so it pauses, for longer each time, rather than spend the
        // request's time on a burst of redirects.
        const bool bounced = std::find(visited.begin(), visited.end(), node) != visited.end() ||
                             followed_at_once >= redirects_without_pause;
        if (redirect->kind == Redirect::Kind::try_again || bounced) {
            const SteadyTime resume = steady_now() + jittered(pause);
            if (resume >= until) {
                const Reply* answer = nullptr;
                for (const auto& reply : *replies) {
                    if (redirect_of(reply)) {
                        answer = &reply;
                        break;
                    }
                }
                close();
                return unexpected(
                    CallFailure{CallFailure::Kind::redirected,
                                fmt::format("Redis Cluster did not serve the request within {}: {}",
                                            format_duration(until - started),
                                            explain_error_reply(*answer, answering)),
                                {}});
            }
            const Wakeup guarded{wakeup_ ? wakeup_->fd : -1,
                                 [&] { return wakeup_->handle() && options.abandon_on_wakeup; }};
            if (wait_ready(-1, POLLIN, resume, wakeup_ ? &guarded : nullptr) ==
                Readiness::abandoned) {
                return unexpected(CallFailure{CallFailure::Kind::abandoned, "interrupted", {}});
            }
            pause = std::min(pause * 2, longest_redirect_pause);
        } else {
            ++followed_at_once;
        }
        switch (redirect->kind) {
        case Redirect::Kind::moved:
            settings_.endpoint = named;
            close();
            break;
        case Redirect::Kind::ask:
            asking = named;
            break;
        case Redirect::Kind::try_again:
            break; // a slot half migrated, or a cluster that cannot serve it just now
        }
        if (redirect->kind != Redirect::Kind::try_again && !bounced) {
            visited.push_back(node);
        }
    }
}

Millis Connection::jittered(Millis pause) {
    if (!random_) {
        random_.emplace(random_seed()); // only a pause needs it: a run without one pays nothing
    }
    // Half the pause to all of it: clients redirected together do not come back together.
    std::uniform_int_distribution<Millis::rep> between(pause.count() / 2, pause.count());
    return Millis{between(*random_)};
}

Expected<std::vector<Reply>, CallFailure> Connection::ask(const Endpoint& node,
                                                          const std::vector<Command>& commands,
                                                          const CallOptions& options) {
    ConnectionSettings settings = settings_;
    settings.endpoint = node;
    Connection asked(std::move(settings), wakeup_);
    std::vector<Command> with_asking;
    for (const auto& command : commands) {
        with_asking.push_back({"ASKING"});
        with_asking.push_back(command);
    }
    // The replies to the caller's commands, without ASKING's: those of a failure too (an
    // abandoned wait's, say, which the caller reads by position).
    const auto answers_of = [](std::vector<Reply>& replies) {
        std::vector<Reply> answers;
        for (size_t i = 1; i < replies.size(); i += 2) {
            answers.push_back(std::move(replies[i]));
        }
        return answers;
    };
    auto replies = asked.call_here(with_asking, options);
    // Sent twice on the asked node's connection: it may have run there, as for one of our own.
    resends_ += asked.resends();
    last_sent_ = std::max(last_sent_, asked.last_sent());
    if (!replies) {
        replies.error().replies = answers_of(replies.error().replies);
        return replies;
    }
    return answers_of(*replies);
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
        if (received_[i].is_error()) {
            return unexpected(CallFailure{CallFailure::Kind::login_refused,
                                          explain_error_reply(received_[i], settings_.endpoint),
                                          std::move(replies)});
        }
    }
    if (role_asked && role_of(received_[login_count - 1]) != "master") {
        // What ran there (a read) is not to be trusted, and a write was refused: nothing counts.
        // The next question goes to the next sentinel: this one may be cut off from the others.
        auto failure = fail(CallFailure::Kind::not_master,
                            fmt::format("{}, as {} named it, is not a master but a {}: the "
                                        "sentinels have not caught up with a failover yet",
                                        settings_.endpoint.display(), named_by_,
                                        role_of(received_[login_count - 1])));
        sentinel_.reset();
        sentinel_index_ = (sentinel_index_ + 1) % settings_.endpoint.sentinels.size();
        return unexpected(std::move(failure));
    }
    received_.clear();
    return replies;
}

} // namespace redlockrun::redis
