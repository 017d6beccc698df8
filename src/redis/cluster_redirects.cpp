#include "base/random_seed.hpp"
#include "redis/connection.hpp"
#include "redis/error_reply.hpp"
#include "redis/redirect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <poll.h>

namespace redlockrun::redis {

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

} // namespace redlockrun::redis
