#include "hold/keeperless_release.hpp"

#include "base/exit_status.hpp"
#include "lock/lock_client.hpp"

#include <charconv>

namespace redlockrun::hold {

namespace {

lock::LockParams params_of(const HoldRecord& record) {
    lock::LockParams params;
    params.unit = lock::parse_unit(record.unit).value_or(lock::TimestampUnit::milliseconds);
    if (record.mode == "shared") {
        params.shared = true;
    } else {
        int limit = 1;
        std::from_chars(record.mode.data(), record.mode.data() + record.mode.size(), limit);
        params.limit = limit;
    }
    return params;
}

} // namespace

int release_without_keeper(const HoldRecord& record, const redis::ConnectionSettings& settings,
                           int lost_exit_code, const Logger& log) {
    auto keys = lock::lock_keys(record.key);
    if (!keys) {
        log.error("cannot release {}: {}", record.key, keys.error());
        return to_int(ExitStatus::internal);
    }
    redis::Connection connection(settings, nullptr);
    lock::Identity identity;
    identity.token = record.token;
    identity.hold = true;
    lock::LockClient lock(connection, std::move(*keys), identity, params_of(record));
    auto answer = lock.release(lock::CommandRan::yes);
    if (!answer) {
        log.error("could not release {} in its keeper's stead: {}; it expires by itself within the "
                  "TTL",
                  record.key, answer.error().message);
        return to_int(ExitStatus::unavailable);
    }
    if (const auto* lost = std::get_if<lock::Lost>(&*answer)) {
        log.error("the hold on {} was lost while its keeper did not answer: {}", record.key,
                  lock::describe(*lost));
        return lost_exit_code;
    }
    log.notice("released {} in its keeper's stead: the keeper (pid {}) did not answer within 10s "
               "(was it stopped?) and was ended; Redis still held the lock for the hold",
               record.key, record.keeper);
    return 0;
}

} // namespace redlockrun::hold
