#include "redis/connection.hpp"
#include "redis/error_reply.hpp"

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

Expected<std::vector<Reply>, CallFailure>
Connection::call_through_failovers(const std::vector<Command>& commands,
                                   const CallOptions& options) {
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

Expected<bool, CallFailure> Connection::resolve_master(const CallOptions& options) {
    std::optional<HostPort> master = std::move(next_master_);
    next_master_.reset();
    if (!master) {
        auto asked = ask_sentinels(options, settings_.endpoint.sentinels.size());
        if (!asked) {
            return unexpected(std::move(asked.error()));
        }
        master = std::move(*asked);
    }
    settings_.endpoint.host = std::move(master->host);
    settings_.endpoint.port = master->port;
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
            settings.url_source = settings_.url_source; // the sentinels are the URL's
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

std::optional<CallFailure> Connection::refuse_unless_master(const Reply& role) {
    if (role_of(role) == "master") {
        return std::nullopt;
    }
    // What ran there (a read) is not to be trusted, and a write was refused: nothing counts.
    // The next question goes to the next sentinel: this one may be cut off from the others.
    auto failure = fail(CallFailure::Kind::not_master,
                        fmt::format("{}, as {} named it, is not a master but a {}: the sentinels "
                                    "have not caught up with a failover yet",
                                    settings_.endpoint.display(), named_by_, role_of(role)));
    sentinel_.reset();
    sentinel_index_ = (sentinel_index_ + 1) % settings_.endpoint.sentinels.size();
    return failure;
}

} // namespace redlockrun::redis
