#include "base/fatal.hpp"
#include "base/log.hpp"
#include "full_descriptor_table.hpp"
#include "redis/endpoint.hpp"
#include "redis/settings.hpp"
#include "status/status_report.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace redlockrun;
using lock::StatusSnapshot;

namespace {

constexpr long long now = 1763812345000;

StatusSnapshot snapshot(std::string type, std::string value, std::string owner_value = "") {
    StatusSnapshot s;
    s.now_ms = now;
    s.type = std::move(type);
    s.value = std::move(value);
    s.owner_value = std::move(owner_value);
    if (!s.owner_value.empty()) {
        s.holders.push_back({{"web1", "4242"},
                             "17",
                             now - 3000,
                             std::nullopt,
                             std::nullopt,
                             std::nullopt,
                             10000,
                             {},
                             false,
                             {}});
    }
    s.last_fence = "17";
    return s;
}

} // namespace

TEST_CASE("status: free") {
    auto never = snapshot("none", "");
    never.last_fence = "";
    CHECK(describe_status("job", never).line == "job: free");
    CHECK(describe_status("job", never).exit_status == 0);
    CHECK(describe_status("job", snapshot("none", "")).line == "job: free (last fence 17)");

    auto stale = describe_status("job", snapshot("string", std::to_string(now - 2500)));
    CHECK(stale.exit_status == 0);
    CHECK(stale.line == "job: free (the timestamp 1763812342500 ms expired 2.5s ago)");
    auto stale_seconds = describe_status("job", snapshot("string", "1763812340"));
    CHECK(stale_seconds.line == "job: free (the timestamp 1763812340 s expired 5s ago)");
}

TEST_CASE("status: held by redlockrun or by a classic client") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    auto ours = describe_status("job", held);
    CHECK(ours.exit_status == 75);
    // A renewed lock: how long it has been held, and that it is renewed; its lease until the next
    // renewal is no time a reader could use.
    CHECK(ours.line == "job: held by web1 pid 4242 since 3s ago, renewed every 10s, fence 17");

    // --no-renew: when it expires.
    held.holders.front().renew_ms = 0;
    const std::string not_renewed = describe_status("job", held).line;
    CHECK(not_renewed.find("since 3s ago") != std::string::npos);
    CHECK(not_renewed.find("expires in 12s") != std::string::npos);
    CHECK(not_renewed.find("renewed every") == std::string::npos);

    // A record that does not say (an older redlockrun): the lease, as a lease.
    held.holders.front().renew_ms.reset();
    CHECK(describe_status("job", held).line.find("another 12s unless renewed") !=
          std::string::npos);

    auto classic = describe_status("job", snapshot("string", "1763812375", "other"));
    CHECK(classic.exit_status == 75);
    CHECK(classic.line.find("held by a client of the classic algorithm") != std::string::npos);
    CHECK(classic.line.find("expires in 30s") != std::string::npos);
    CHECK(classic.line.find("(timestamp 1763812375 s)") != std::string::npos);
}

static lock::HolderRecord record(std::string host, std::string pid, std::string fence,
                                 long long acquired, long long expires) {
    return {{std::move(host), std::move(pid)},
            std::move(fence),
            acquired,
            expires,
            std::nullopt,
            std::nullopt,
            10000,
            {},
            false,
            {}};
}

TEST_CASE("status: held after its command ended, for --min-hold") {
    const std::string value = std::to_string(now + 55000);
    auto kept = snapshot("string", value, value);
    kept.holders.front().hold_until_ms = now + 55000;
    kept.holders.front().ended_ms = now - 5000;
    auto report = describe_status("job", kept);
    CHECK(report.exit_status == 75);
    CHECK(report.line.find("web1 pid 4242, whose command ended 5s ago") != std::string::npos);
    CHECK(report.line.find("lets the lock go in 55s") != std::string::npos);
    CHECK(report.line.find("renewed") == std::string::npos);
    CHECK(interpret_status("job", kept).condition == LockCondition::held_after_command);

    // Kept until then, but its command still runs: held as any lock.
    kept.holders.front().ended_ms.reset();
    CHECK(interpret_status("job", kept).condition == LockCondition::held);
    CHECK(describe_status("job", kept).line ==
          "job: held by web1 pid 4242 since 3s ago, renewed every 10s, fence 17");
}

TEST_CASE("status: a semaphore lists every holder, earliest first, with the limit") {
    const std::string value = std::to_string(now + 28000);
    auto semaphore = snapshot("string", value, value);
    semaphore.limit = 3;
    semaphore.holders = {record("web2", "43", "18", now - 1000, now + 28000),
                         record("web1", "42", "17", now - 3000, now + 27000)};
    auto report = describe_status("job", semaphore);
    CHECK(report.exit_status == 75);
    CHECK(report.line == "job: held by 2 of 3 holders: web1 pid 42 since 3s ago, renewed every "
                         "10s, fence 17; web2 pid 43 since 1s ago, renewed every 10s, fence 18");
    CHECK(interpret_status("job", semaphore).condition == LockCondition::held);

    // Held after the command only when every holder's command has ended.
    semaphore.holders[0].ended_ms = now - 500;
    CHECK(interpret_status("job", semaphore).condition == LockCondition::held);
    semaphore.holders[1].ended_ms = now - 2000;
    CHECK(interpret_status("job", semaphore).condition == LockCondition::held_after_command);
    CHECK(describe_status("job", semaphore).exit_status == 75);
    CHECK(describe_status("job", semaphore)
              .line.find("web1 pid 42, whose command ended 2s ago; --min-hold lets the lock go in "
                         "27s") != std::string::npos);

    // The key outlives its holders' records: still held, by no one redlockrun knows.
    semaphore.holders.clear();
    CHECK(describe_status("job", semaphore).line == "job: held by 0 of 3 holders for another 28s");
    CHECK(describe_status("job", semaphore).exit_status == 75);
}

TEST_CASE("status: each holder's note follows its name") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    held.holders.front().note = "deploy 42";
    CHECK(describe_status("job", held).line ==
          "job: held by web1 pid 4242 (note: deploy 42) since 3s ago, renewed every 10s, fence 17");

    auto semaphore = snapshot("string", value, value);
    semaphore.limit = 3;
    semaphore.holders = {record("web2", "43", "18", now - 1000, now + 12000),
                         record("web1", "42", "17", now - 3000, now + 11000)};
    semaphore.holders[0].note = "second";
    CHECK(describe_status("job", semaphore).line ==
          "job: held by 2 of 3 holders: web1 pid 42 since 3s ago, renewed every 10s, fence 17; "
          "web2 pid 43 (note: second) since 1s ago, renewed every 10s, fence 18");
}

TEST_CASE("status: a hold is marked as one, its pid its owner's") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    held.holders.front().hold = true;
    CHECK(describe_status("job", held).line ==
          "job: held by web1 pid 4242 (a hold) since 3s ago, renewed every 10s, fence 17");
    held.holders.front().note = "deploy 42";
    CHECK(describe_status("job", held).line ==
          "job: held by web1 pid 4242 (a hold) (note: deploy 42) "
          "since 3s ago, renewed every 10s, fence 17");
}

TEST_CASE("status: a record's fence that is not a fence number is shown as it is") {
    const std::string value = std::to_string(now + 28000);
    auto semaphore = snapshot("string", value, value);
    semaphore.limit = 3;
    for (const char* fence : {"1e400", "-3", "1.5", "9007199254740992", "99999999999999999999"}) {
        CAPTURE(fence);
        semaphore.holders = {record("web1", "42", fence, now - 3000, now + 27000)};
        const LockState state = interpret_status("job", semaphore);
        REQUIRE(state.holders.size() == 1);
        CHECK(state.holders[0].fence.empty());
        CHECK(state.holders[0].not_a_fence == fence);
        CHECK(status_line(state) == "job: held by 1 of 3 holders: web1 pid 42 since 3s ago, "
                                    "renewed every 10s, fence " +
                                        std::string(fence) + " (not a fence number)");
    }
    semaphore.holders = {record("web1", "42", "9007199254740991", now - 3000, now + 27000)};
    CHECK(interpret_status("job", semaphore).holders[0].fence == "9007199254740991");
}

TEST_CASE("status: a key overwritten by a classic client is not its old owner's") {
    const std::string value = std::to_string(now + 9000);
    auto overwritten = snapshot("string", value, "1763812999999");
    overwritten.holders.push_back(record("web1", "42", "17", now - 3000, now + 30000));
    auto state = interpret_status("job", overwritten);
    REQUIRE(state.holders.size() == 1);
    CHECK(state.holders.front().classic);
    CHECK(state.holders.front().remaining_ms == 9000);
    CHECK(describe_status("job", overwritten)
              .line.starts_with("job: held by a client of the classic algorithm, until it expires "
                                "in 9s"));
}

TEST_CASE("status: times from Redis that make no sense still give a line") {
    const std::string value = std::to_string(now + 1000);
    auto odd = snapshot("string", value, value);
    odd.holders.front().acquired_ms = std::numeric_limits<long long>::min() + 1;
    odd.holders.front().ended_ms = std::numeric_limits<long long>::max();
    CHECK(describe_status("job", odd).exit_status == 75);
    CHECK(ms_between(std::numeric_limits<long long>::max(), -1) ==
          std::numeric_limits<long long>::max());
    CHECK(ms_between(std::numeric_limits<long long>::min(), 1) ==
          std::numeric_limits<long long>::min());
}

TEST_CASE("status: the line --list prints for a key that is not a lock") {
    CHECK(status_line(interpret_status("job", snapshot("list", ""))) == "job: not a lock (a list)");
    CHECK(status_line(interpret_status("job", snapshot("string", "hello"))) ==
          "job: not a lock (a value that is not a Unix timestamp)");
}

TEST_CASE("status: a key that is not a lock") {
    for (const auto& s : {snapshot("list", ""), snapshot("hash", ""), snapshot("string", "hello"),
                          snapshot("string", "1")}) {
        auto report = describe_status("job", s);
        CHECK(report.exit_status == 65);
        CHECK(report.line.find("not a") != std::string::npos);
        // A read: not worded as a refusal that left the key alone.
        CHECK(report.line.find("nothing was changed") == std::string::npos);
    }
}

// The end-to-end suites cannot leave the real binary without a free descriptor here: the dynamic
// loader needs one to start it. No server is needed: the socket cannot be made.
TEST_CASE("status: a full descriptor table is an operating-system error, not Redis unavailable") {
    redis::ConnectionSettings settings;
    auto endpoint = redis::parse_url("redis://127.0.0.1:1");
    REQUIRE(endpoint);
    settings.endpoint = *endpoint;
    const Logger log;
    int status = 0;
    std::string message;
    {
        const testing::FullDescriptorTable full;
        try {
            status = show_status("job", StatusFormat::text, settings, log);
        } catch (const Fatal& error) {
            status = error.status();
            message = error.what();
        }
    }
    CHECK(status == 71);
    CHECK(message.find("Too many open files") != std::string::npos);
}

TEST_CASE("status: the line counts the waiters, and a line follows for each, in order") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    held.waiters.push_back(
        {{"web2", "43"}, "1", now - 130000, now + 770000, "deploy 43", true, false});
    held.waiters.push_back({{"web3", "44"}, "3", now - 5000, {}, "", false, true});
    held.waiters.push_back({{"", ""}, "shared", {}, {}, "", false, false});
    const LockState state = interpret_status("deploy", held);
    CHECK(status_line(state).ends_with("; 3 waiting"));
    const auto lines = waiter_lines(state);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "  1. web2 pid 43 (note: deploy 43), exclusive, --supersede, waiting for "
                      "2m10s, gives up in 12m50s");
    CHECK(lines[1] == "  2. web3 pid 44 (a hold), --limit 3, waiting for 5s");
    CHECK(lines[2] == "  3. a waiter without a record (shared)");
    // None waiting: nothing said.
    auto alone = snapshot("string", value, value);
    CHECK(status_line(interpret_status("deploy", alone)).find("waiting") == std::string::npos);
    CHECK(waiter_lines(interpret_status("deploy", alone)).empty());
}
