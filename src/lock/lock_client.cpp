#include "lock/lock_client.hpp"

#include "lock/scripts.hpp"
#include "lock/token.hpp"
#include "redis/error_reply.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace redlockrun::lock {

using redis::CallFailure;

namespace {

// An acquire's reply from a pipeline, as acquire() would return it.
Expected<Attempt, CallFailure> pipelined_attempt(redis::Reply reply, SteadyTime sent,
                                                 const redis::Endpoint& endpoint) {
    auto result = redis::script_result(std::move(reply), endpoint);
    if (!result) {
        return unexpected(std::move(result.error()));
    }
    auto answer = decode_acquire(*result);
    if (!answer) {
        return unexpected(CallFailure{CallFailure::Kind::protocol, answer.error(), {}});
    }
    return Attempt{std::move(*answer), sent};
}

// Whether an acquire made use of a wake-up token taken before it: a grant took the lock, and a busy
// answer means that someone else took it first, whose release wakes the next waiter. Anything else
// (a failure, a foreign key, a refusal) leaves the token owed to the waiter behind.
bool used_wake_up(const Expected<Attempt, CallFailure>& attempt) {
    // A superseded waiter's acquire passed on what it was given itself.
    return attempt && (std::holds_alternative<Granted>(attempt->answer) ||
                       std::holds_alternative<Busy>(attempt->answer) ||
                       std::holds_alternative<Superseded>(attempt->answer));
}

// The time a token may take to pass on after `attempt`: a failure may mean Redis is unreachable.
Deadline passing_on_deadline(const Expected<Attempt, CallFailure>& attempt) {
    return attempt ? Deadline{} : Deadline{steady_now() + parting_call_limit};
}

} // namespace

LockClient::LockClient(redis::Connection& connection, LockKeys keys, Identity identity,
                       LockParams params)
    : connection_(connection), keys_(std::move(keys)), identity_(std::move(identity)),
      params_(params), db_(std::to_string(connection.endpoint().db)) {}

std::vector<std::string> LockClient::with_db(const std::vector<std::string>& args) const {
    std::vector<std::string> all{db_};
    all.insert(all.end(), args.begin(), args.end());
    return all;
}

std::vector<std::string> LockClient::acquire_args() const {
    return with_db(
        {identity_.token, std::to_string(params_.ttl.count()), std::string(unit_name(params_.unit)),
         identity_.host, identity_.pid, std::to_string(params_.min_hold.count()), limit_arg(),
         identity_.waiter_id, std::to_string(params_.queue_place.count()),
         std::to_string(params_.renew_every.count()), identity_.note, identity_.hold ? "1" : "",
         wait_left(), identity_.supersede ? "1" : "", since_us_});
}

std::string LockClient::wait_left() const {
    if (!wait_until_) {
        return "";
    }
    return std::to_string(std::max<long long>(0, (*wait_until_ - steady_now()).count()));
}

void LockClient::note_place(const Expected<Attempt, CallFailure>& attempt) {
    if (!attempt) {
        return; // the place is as the last answer left it, or lapses
    }
    if (const auto* busy = std::get_if<Busy>(&attempt->answer)) {
        if (!busy->since_us.empty()) {
            since_us_ = busy->since_us;
        }
        near_front_ =
            !params_.shared && params_.limit == 1 && busy->position > 0 && busy->position <= 2;
    } else if (const auto* granted = std::get_if<Granted>(&attempt->answer)) {
        note_server_time(granted->server_ms, attempt->valid_from);
    }
}

void LockClient::note_server_time(const std::optional<long long>& server_ms, SteadyTime sent) {
    if (!server_ms) {
        return;
    }
    // Another server (a failover, a slot that moved) has a clock of its own: compared with the
    // last one's, it would pass for a jump.
    if (std::string server = endpoint().display(); server != clock_server_) {
        server_clock_ = ServerClock{};
        clock_server_ = std::move(server);
    }
    if (auto jump = server_clock_.observe(*server_ms, sent, steady_now())) {
        clock_news_ = std::move(*jump);
    }
}

std::string waiter_id_for(int limit, bool shared) {
    const std::string mode = shared ? "s" : (limit > 1 ? fmt::format("n{}", limit) : "x");
    return mode + "-" + make_token();
}

std::vector<std::string> LockClient::wake_lists() const {
    std::vector<std::string> lists{keys_.wake + ":" + identity_.waiter_id};
    if (near_front_) {
        lists.push_back(keys_.wake);
    }
    return lists;
}

bool LockClient::took_shared_token(const redis::Reply& woken) const {
    const redis::Reply* list = woken.at(0);
    return woken.kind == redis::Reply::Kind::array && list != nullptr &&
           list->as_string() == std::string_view(keys_.wake);
}

template <typename Answer>
Expected<Answer, CallFailure>
LockClient::run(const redis::Script& script, const std::vector<std::string>& args,
                Expected<Answer, std::string> (*decode)(const redis::Reply&),
                const redis::CallOptions& options) {
    auto reply = redis::run_script(connection_, script, keys_.all(), with_db(args), options);
    if (!reply) {
        return unexpected(std::move(reply.error()));
    }
    auto answer = decode(*reply);
    if (!answer) {
        return unexpected(CallFailure{CallFailure::Kind::protocol, answer.error(), {}});
    }
    return std::move(*answer);
}

void LockClient::undo_if_granted(const CallFailure& failure, size_t acquire_index) {
    if (failure.kind != CallFailure::Kind::login_refused ||
        failure.replies.size() <= acquire_index) {
        return;
    }
    auto executed = decode_acquire(failure.replies[acquire_index]);
    if (executed && std::holds_alternative<Granted>(*executed)) {
        release();
    }
}

std::vector<redis::Command> LockClient::confirmation() const {
    if (params_.replicas == 0) {
        return {};
    }
    return {{"WAIT", std::to_string(params_.replicas),
             std::to_string(std::max<long long>(params_.replica_wait.count(), 1))}};
}

std::optional<CallFailure> LockClient::unconfirmed(const redis::Reply& wait_reply,
                                                   const char* what) const {
    if (wait_reply.is_error()) {
        return CallFailure{CallFailure::Kind::error_reply,
                           fmt::format("cannot confirm the {} of {} on replicas (WAIT): {}", what,
                                       keys_.lock,
                                       redis::explain_error_reply(wait_reply, endpoint())),
                           {}};
    }
    const auto confirmed = wait_reply.as_integer();
    if (confirmed && *confirmed >= params_.replicas) {
        return std::nullopt;
    }
    return CallFailure{
        CallFailure::Kind::error_reply,
        fmt::format("only {} of {} replicas confirmed the {} of {} within {} (--replicas)",
                    confirmed ? std::to_string(*confirmed) : std::string("?"), params_.replicas,
                    what, keys_.lock, format_duration(params_.replica_wait)),
        {}};
}

Expected<Attempt, CallFailure> LockClient::confirmed(Expected<Attempt, CallFailure> attempt,
                                                     const redis::Reply* wait_reply) {
    if (!attempt || params_.replicas == 0 || !std::holds_alternative<Granted>(attempt->answer)) {
        return attempt;
    }
    auto failure = wait_reply == nullptr
                       ? std::optional<CallFailure>(CallFailure{
                             CallFailure::Kind::protocol, "no answer to WAIT after the grant", {}})
                       : unconfirmed(*wait_reply, "grant");
    if (!failure) {
        return attempt;
    }
    release(); // undone: a grant the replicas may not have is not one to run a command on
    failure->message += "; it was released, and nothing is left locked";
    return unexpected(std::move(*failure));
}

Expected<Attempt, CallFailure> LockClient::acquire() {
    auto attempt = acquire_once();
    note_place(attempt);
    return attempt;
}

Expected<Attempt, CallFailure> LockClient::wait_then_acquire(Millis timeout) {
    auto attempt = wait_then_acquire_once(timeout);
    note_place(attempt);
    return attempt;
}

Expected<Attempt, CallFailure> LockClient::acquire_once() {
    const SteadyTime sent = steady_now();
    redis::CallOptions options;
    options.server_wait = params_.replicas > 0 ? params_.replica_wait : Millis{0};
    auto replies = redis::run_script_then(connection_, scripts::acquire, keys_.all(),
                                          acquire_args(), confirmation(), options);
    if (!replies) {
        undo_if_granted(replies.error(), 0);
        return unexpected(std::move(replies.error()));
    }
    auto answer = decode_acquire(replies->result);
    if (!answer) {
        return unexpected(CallFailure{CallFailure::Kind::protocol, answer.error(), {}});
    }
    // Sent again (Sentinel's failover, a broken connection): the answer is from the last time.
    return confirmed(Attempt{std::move(*answer), std::max(sent, connection_.last_sent())},
                     replies->after.empty() ? nullptr : &replies->after.front());
}

Expected<Attempt, CallFailure> LockClient::wait_then_acquire_once(Millis timeout) {
    // BLPOP takes seconds, with decimals since Redis 6; 0 would mean forever. Redis before 7.0.8
    // truncates the seconds times 1000, as a long double, to whole milliseconds, which makes 0.001
    // a 0 (redis#11687): a timeout of 2 ms or more stays above 0 whatever the server, and 10 ms
    // leaves room; a wait whose end is nearer than that overruns it by at most those 10 ms.
    constexpr long long shortest_blpop_ms = 10;
    const auto ms = std::max<long long>(timeout.count(), shortest_blpop_ms);
    const std::string seconds = fmt::format("{}.{:03}", ms / 1000, ms % 1000);
    redis::CallOptions options;
    options.server_wait = Millis{ms} + (params_.replicas > 0 ? params_.replica_wait : Millis{0});
    options.abandon_on_wakeup = true;
    options.confirm_master = true;
    // The acquire runs when the BLPOP returns, at some moment after this; its reply may then wait
    // unread for any time. Its validity counts from here, the one moment known to come before it.
    const SteadyTime sent = steady_now();
    const std::vector<std::string> lists = wake_lists();
    redis::Command blpop{"BLPOP"};
    blpop.insert(blpop.end(), lists.begin(), lists.end());
    blpop.push_back(seconds);
    std::vector<redis::Command> commands{
        std::move(blpop), redis::evalsha_command(scripts::acquire, keys_.all(), acquire_args())};
    for (auto& command : confirmation()) {
        commands.push_back(std::move(command));
    }
    auto replies = connection_.call(commands, options);
    if (!replies) {
        undo_if_granted(replies.error(), 1);
        return unexpected(std::move(replies.error()));
    }
    redis::Reply& woken = (*replies)[0];
    redis::Reply& acquired = (*replies)[1];
    const bool took_token = woken.kind == redis::Reply::Kind::array;
    const bool took_shared = took_shared_token(woken);
    if (acquired.error_code() == "NOSCRIPT") {
        // The server lost its scripts while we waited: the acquire did not run, and is sent again
        // in full. A token the BLPOP took is owed to the next waiter as after a pipelined acquire.
        auto attempt = acquire();
        if (took_token && !used_wake_up(attempt)) {
            leave_queue(passing_on_deadline(attempt), took_shared);
        }
        return attempt;
    }
    // The acquire ran whatever the BLPOP answered: a grant must never be dropped on the floor.
    auto attempt =
        pipelined_attempt(std::move(acquired), std::max(sent, connection_.last_sent()), endpoint());
    const bool granted = attempt && std::holds_alternative<Granted>(attempt->answer);
    if (took_token && !used_wake_up(attempt)) {
        // A token taken for a lock it will not take.
        leave_queue(passing_on_deadline(attempt), took_shared);
    }
    if (woken.is_error() && !granted) {
        return unexpected(CallFailure{
            CallFailure::Kind::error_reply,
            fmt::format("cannot wait on the wake-up {} {}: {}", lists.size() > 1 ? "lists" : "list",
                        fmt::join(lists, " and "), redis::explain_error_reply(woken, endpoint())),
            {}});
    }
    if (granted && connection_.master_moved({})) {
        // Granted by a master that the sentinels replaced while this waiter blocked on it: it may
        // take writes until it is demoted, but the holder has moved on to the new one.
        std::string was = endpoint().display();
        release();
        connection_.close();
        return unexpected(CallFailure{
            CallFailure::Kind::not_master,
            fmt::format("{} granted {}, but the sentinels have named another master since; "
                        "it was released there",
                        was, keys_.lock),
            {}});
    }
    return confirmed(std::move(attempt), replies->size() > 2 ? &(*replies)[2] : nullptr);
}

void LockClient::give_up_waiting(const CallFailure& abandoned) {
    const auto& replies = abandoned.replies;
    const bool took_shared = !replies.empty() && took_shared_token(replies[0]);
    if (replies.size() >= 2) {
        // Every reply arrived: we know what the acquire did (nothing, if it answered NOSCRIPT).
        auto answer = decode_acquire(replies[1]);
        if (answer && std::holds_alternative<Granted>(*answer)) {
            release(); // which wakes the next waiter; the grant took this run out of the queue
        } else if (!(answer && std::holds_alternative<Superseded>(*answer))) {
            // A superseded one has left the queue already, passing on what it was given; a busy
            // answer used the shared token, if this waiter took it.
            leave_queue({}, took_shared && !(answer && std::holds_alternative<Busy>(*answer)));
        }
        return;
    }
    // The abandoned connection is closed, but its acquire may have run before Redis saw that. A
    // release on a new connection is safe either way: it deletes nothing that is not ours.
    auto released = release();
    if (!(released && std::holds_alternative<Released>(*released))) {
        leave_queue({}, took_shared); // and passes on the wake-up it may have been sent
    }
}

Expected<RenewAnswer, CallFailure> LockClient::renew(const Deadline& not_after) {
    redis::CallOptions options;
    options.not_after = not_after;
    options.server_wait = params_.replicas > 0 ? params_.replica_wait : Millis{0};
    options.confirm_master = true;
    const SteadyTime sent = steady_now();
    auto replies =
        redis::run_script_then(connection_, scripts::renew, keys_.all(),
                               with_db({identity_.token, std::to_string(params_.ttl.count()),
                                        std::string(unit_name(params_.unit)), limit_arg()}),
                               confirmation(), options);
    if (!replies) {
        return unexpected(std::move(replies.error()));
    }
    auto answer = decode_renew(replies->result);
    if (!answer) {
        return unexpected(CallFailure{CallFailure::Kind::protocol, answer.error(), {}});
    }
    // Sent again (a broken connection, a failover): the answer is from the last time.
    std::visit(
        [&](const auto& renewal) {
            note_server_time(renewal.server_ms, std::max(sent, connection_.last_sent()));
        },
        *answer);
    if (params_.replicas > 0 && std::holds_alternative<Renewed>(*answer)) {
        if (replies->after.empty()) {
            return unexpected(CallFailure{
                CallFailure::Kind::protocol, "no answer to WAIT after the renewal", {}});
        }
        if (auto failure = unconfirmed(replies->after.front(), "renewal")) {
            return unexpected(std::move(*failure));
        }
    }
    return std::move(*answer);
}

Expected<ReleaseAnswer, CallFailure> LockClient::release(CommandRan command_ran,
                                                         const Deadline& valid_until) {
    const unsigned resends = connection_.resends();
    redis::CallOptions options;
    options.redirects_until = valid_until;
    auto answer = run(scripts::release,
                      {identity_.token, std::string(unit_name(params_.unit)), limit_arg(),
                       command_ran == CommandRan::yes ? "1" : "0"},
                      decode_release, options);
    if (answer && connection_.resends() != resends) {
        // Sent twice: the first may have run, deleting key and owner record together, and only
        // its answer been lost. "Gone" is then its work. The other way to "gone" is an expiry,
        // which the keeper reports itself: its deadline falls before the server's expiry. Any
        // other "not ours" is not what a release leaves behind, and stands (a waiter that takes
        // the lock between the two is thus reported as a loss: wrong, but on the safe side).
        const auto* lost = std::get_if<Lost>(&*answer);
        if (lost && lost->reason == LossReason::gone) {
            return ReleaseAnswer{Released{}};
        }
    }
    return answer;
}

Expected<StatusSnapshot, CallFailure> LockClient::status() {
    return run(scripts::status, {}, decode_status);
}

Expected<BreakAnswer, CallFailure> LockClient::break_lock(const std::string& by,
                                                          const std::string& why) {
    return run(scripts::break_lock, {by, why}, decode_break);
}

void LockClient::leave_queue(const Deadline& not_after, bool shared_token) {
    if (identity_.waiter_id.empty()) {
        return; // a run that never waits has no place
    }
    const auto args = with_db({identity_.waiter_id, limit_arg(), shared_token ? "1" : ""});
    if (!not_after) {
        redis::run_script(connection_, scripts::wake, keys_.all(), args);
        return;
    }
    // Given a moment only, on the way out after a failure: sent in full, so that one request does
    // it, on a server that lost its scripts too, and so that a server that was stalled, and runs
    // it after this run stopped waiting for the answer, has all it needs.
    redis::CallOptions options;
    options.not_after = not_after;
    connection_.call({redis::eval_command(scripts::wake, keys_.all(), args)}, options);
}

} // namespace redlockrun::lock
