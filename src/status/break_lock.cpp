#include "status/break_lock.hpp"

#include "base/fatal.hpp"
#include "base/printable.hpp"
#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/lock_client.hpp"
#include "redis/connection.hpp"

#include <fmt/core.h>

#include <climits>
#include <cstdio>
#include <pwd.h>
#include <unistd.h>

namespace redlockrun {

namespace {

// "alice@ops1 pid 4242": who broke the lock, for the broken holders' messages.
std::string breaker() {
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) != 0) {
        host[0] = '\0';
    }
    const passwd* user = ::getpwuid(::getuid());
    const std::string name = user != nullptr ? user->pw_name : std::to_string(::getuid());
    return fmt::format("{}@{} pid {}", name, host, ::getpid());
}

std::string describe_broken(const std::string& key, const lock::BrokenHolder& broken) {
    if (!broken.holder) {
        return fmt::format("{}: broke the lock of a client of the classic algorithm", key);
    }
    std::string line = fmt::format("{}: broke the claim of {}, fence {}", key,
                                   lock::describe(*broken.holder), broken.fence);
    if (!broken.note.empty()) {
        line += fmt::format(" (note: {})", broken.note);
    }
    return line;
}

} // namespace

int break_lock(const std::string& key, const std::string& reason,
               const redis::ConnectionSettings& settings, const Logger& log) {
    auto keys = lock::lock_keys(key);
    if (!keys) {
        throw Fatal(ExitStatus::usage, keys.error());
    }
    redis::Connection connection(settings, nullptr);
    lock::LockClient client(connection, std::move(*keys), lock::Identity{}, lock::LockParams{});
    auto answer = client.break_lock(breaker(), reason);
    if (!answer) {
        throw Fatal(redis::exit_status_of(answer.error()), answer.error().message);
    }
    if (const auto* foreign = std::get_if<lock::Foreign>(&*answer)) {
        log.error("{}", lock::describe_foreign(key, *foreign));
        return to_int(ExitStatus::foreign_value);
    }
    const auto& broken = std::get<lock::Broken>(*answer);
    if (broken.holders.empty()) {
        std::fputs(printable(fmt::format("{}: free; nothing to break", key)).append("\n").c_str(),
                   stdout);
    }
    for (const auto& holder : broken.holders) {
        std::fputs(printable(describe_broken(key, holder)).append("\n").c_str(), stdout);
    }
    std::fflush(stdout);
    return 0;
}

} // namespace redlockrun
