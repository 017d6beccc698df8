#include "lock/lock_client.hpp"

#include "lock/scripts.hpp"
#include "redis/error_reply.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace redlockrun::lock {

using redis::CallFailure;

LockClient::LockClient(redis::Connection& connection, LockKeys keys, Identity identity,
                       LockParams params)
    : connection_(connection), keys_(std::move(keys)), identity_(std::move(identity)),
      params_(params), db_(std::to_string(connection.endpoint().db)) {}

template <typename Answer>
Expected<Answer, CallFailure>
LockClient::run(const redis::Script& script, const std::vector<std::string>& args,
                Expected<Answer, std::string> (*decode)(const redis::Reply&),
                const redis::CallOptions& options) {
    std::vector<std::string> all_args{db_};
    all_args.insert(all_args.end(), args.begin(), args.end());
    auto reply = redis::run_script(connection_, script, keys_.all(), all_args, options);
    if (!reply) {
        return unexpected(std::move(reply.error()));
    }
    auto answer = decode(*reply);
    if (!answer) {
        return unexpected(CallFailure{CallFailure::Kind::protocol, answer.error(), {}});
    }
    return std::move(*answer);
}

Expected<AcquireAnswer, CallFailure> LockClient::acquire() {
    auto answer = run(scripts::acquire,
                      {identity_.token, std::to_string(params_.ttl.count()),
                       std::string(unit_name(params_.unit)), identity_.host, identity_.pid},
                      decode_acquire);
    if (!answer && answer.error().kind == CallFailure::Kind::login_refused &&
        !answer.error().replies.empty()) {
        auto executed = decode_acquire(answer.error().replies.front());
        if (executed && std::holds_alternative<Granted>(*executed)) {
            release();
        }
    }
    return answer;
}

Expected<RenewAnswer, CallFailure> LockClient::renew(const Deadline& not_after) {
    redis::CallOptions options;
    options.not_after = not_after;
    return run(scripts::renew,
               {identity_.token, std::to_string(params_.ttl.count()),
                std::string(unit_name(params_.unit))},
               decode_renew, options);
}

Expected<ReleaseAnswer, CallFailure> LockClient::release() {
    return run(scripts::release, {identity_.token}, decode_release);
}

Expected<StatusSnapshot, CallFailure> LockClient::status() {
    return run(scripts::status, {}, decode_status);
}

Expected<bool, CallFailure> LockClient::wait_for_wake(Millis timeout) {
    // BLPOP takes seconds, with decimals since Redis 6; 0 would mean forever.
    const auto ms = std::max<long long>(timeout.count(), 1);
    const std::string seconds = fmt::format("{}.{:03}", ms / 1000, ms % 1000);
    redis::CallOptions options;
    options.server_wait = Millis{ms};
    options.abandon_on_wakeup = true;
    auto replies = connection_.call({{"BLPOP", keys_.wake, seconds}}, options);
    if (!replies) {
        return unexpected(std::move(replies.error()));
    }
    const auto& reply = replies->front();
    if (reply.is_error()) {
        return unexpected(CallFailure{
            CallFailure::Kind::error_reply, redis::explain_error_reply(reply, endpoint()), {}});
    }
    return !reply.is_nil();
}

bool LockClient::abandoned_with_token(const CallFailure& failure) {
    return failure.kind == CallFailure::Kind::abandoned && !failure.replies.empty() &&
           failure.replies.front().kind == redis::Reply::Kind::array;
}

Expected<bool, CallFailure> LockClient::pass_on_wake() {
    auto reply = redis::run_script(connection_, scripts::wake, keys_.all(), {db_});
    if (!reply) {
        return unexpected(std::move(reply.error()));
    }
    return true;
}

} // namespace redlockrun::lock
