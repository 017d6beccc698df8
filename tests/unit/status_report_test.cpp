#include "fatal.hpp"
#include "full_descriptor_table.hpp"
#include "log.hpp"
#include "redis/endpoint.hpp"
#include "redis/settings.hpp"
#include "status_report.hpp"

#include <doctest/doctest.h>

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
    s.holder = {"web1", "4242"};
    s.fence = "17";
    s.acquired_ms = std::to_string(now - 3000);
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
    auto ours = describe_status("job", snapshot("string", value, value));
    CHECK(ours.exit_status == 75);
    CHECK(ours.line == "job: held by web1 pid 4242 for another 12s, fence 17, acquired 3s ago");

    auto classic = describe_status("job", snapshot("string", "1763812375", "other"));
    CHECK(classic.exit_status == 75);
    CHECK(
        classic.line ==
        "job: held by a client of the classic algorithm for another 30s (timestamp 1763812375 s)");
}

TEST_CASE("status: a key that is not a lock") {
    for (const auto& s : {snapshot("list", ""), snapshot("hash", ""), snapshot("string", "hello"),
                          snapshot("string", "1")}) {
        auto report = describe_status("job", s);
        CHECK(report.exit_status == 65);
        CHECK(report.line.find("nothing was changed") != std::string::npos);
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
            status = show_status("job", settings, log);
        } catch (const Fatal& error) {
            status = error.status();
            message = error.what();
        }
    }
    CHECK(status == 71);
    CHECK(message.find("Too many open files") != std::string::npos);
}
