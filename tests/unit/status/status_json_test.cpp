#include "status/lock_state.hpp"
#include "status/status_json.hpp"

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
    s.last_fence = "17";
    return s;
}

std::string json(const std::string& key, const StatusSnapshot& s) {
    return status_json(interpret_status(key, s));
}

} // namespace

TEST_CASE("status json: free, never used and after use") {
    auto never = snapshot("none", "");
    never.last_fence = "";
    CHECK(
        json("job", never) ==
        R"({"key":"job","state":"free","redis_type":"none","value":null,"limit":null,"mode":null,)"
        R"("server_time_ms":1763812345000,"expires_ms":null,"remaining_ms":null,)"
        R"("last_fence":null,"holders":[],"hold_durations":null,"waiting":0,"waiters":[]})");
    CHECK(
        json("job", snapshot("string", "1763812340")) ==
        R"({"key":"job","state":"free","redis_type":"string","value":"1763812340","limit":null,"mode":null,)"
        R"("server_time_ms":1763812345000,"expires_ms":1763812340000,"remaining_ms":0,)"
        R"("last_fence":17,"holders":[],"hold_durations":null,"waiting":0,"waiters":[]})");
}

TEST_CASE("status json: held by redlockrun, with every holder field") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    held.holders.push_back(
        {{"web1", "4242"}, "17", now - 3000, now + 12000, now + 60000, now - 1, {}, {}, false, {}});
    CHECK(
        json("job", held) ==
        R"({"key":"job","state":"held-after-command","redis_type":"string",)"
        R"("value":"1763812357000","limit":1,"mode":"exclusive","server_time_ms":1763812345000,)"
        R"("expires_ms":1763812357000,"remaining_ms":12000,"last_fence":17,"holders":[)"
        R"({"client":"redlockrun","mode":"exclusive","host":"web1","pid":4242,"fence":17,)"
        R"("acquired_ms":1763812342000,"expires_ms":1763812357000,"remaining_ms":12000,)"
        R"("hold_until_ms":1763812405000,"command_ended_ms":1763812344999,"note":null,"hold":false,"slot":null}],"hold_durations":null,"waiting":0,"waiters":[]})");
}

TEST_CASE("status json: held by a classic client, and a semaphore") {
    auto classic = snapshot("string", "1763812375", "1763812999999");
    CHECK(
        json("job", classic)
            .find(
                R"("state":"held","redis_type":"string","value":"1763812375","limit":1,"mode":"exclusive",)") !=
        std::string::npos);
    CHECK(
        json("job", classic)
            .find(
                R"("holders":[{"client":"classic","mode":"exclusive","host":null,"pid":null,"fence":null,)"
                R"("acquired_ms":null,"expires_ms":1763812375000,"remaining_ms":30000,)"
                R"("hold_until_ms":null,"command_ended_ms":null,"note":null,"hold":false,"slot":null}],"hold_durations":null,"waiting":0,"waiters":[]})") !=
        std::string::npos);

    const std::string value = std::to_string(now + 28000);
    auto semaphore = snapshot("string", value, value);
    semaphore.limit = 3;
    semaphore.holders.push_back(
        {{"web2", "43"}, "18", now - 1000, now + 28000, {}, {}, {}, {}, false, "0"});
    semaphore.holders.push_back(
        {{"web1", "42"}, "17", now - 3000, now + 27000, {}, {}, {}, {}, false, "1"});
    const std::string text = json("job", semaphore);
    CHECK(text.find(R"("state":"held","redis_type":"string")") != std::string::npos);
    CHECK(text.find(R"("limit":3,"mode":"semaphore",)") != std::string::npos);
    const auto first = text.find(
        R"({"client":"redlockrun","mode":"semaphore","host":"web1","pid":42,"fence":17,)");
    const auto second = text.find(
        R"({"client":"redlockrun","mode":"semaphore","host":"web2","pid":43,"fence":18,)");
    CHECK(first != std::string::npos);
    CHECK(second != std::string::npos);
    CHECK(first < second);
    // Each holder's slot, REDLOCKRUN_SLOT; one that is not a number is none.
    CHECK(text.find(R"("hold":false,"slot":1},{"client")") != std::string::npos);
    CHECK(text.ends_with(
        R"("hold":false,"slot":0}],"hold_durations":null,"waiting":0,"waiters":[]})"));
    semaphore.holders.back().slot = "one";
    CHECK(json("job", semaphore).find(R"("slot":null)") != std::string::npos);
}

TEST_CASE("status json: a holder's note, with any bytes, and null for none") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    held.holders.push_back(
        {{"web1", "4242"}, "17", now - 3000, {}, {}, {}, 10000, "deploy 42", false, {}});
    CHECK(
        json("job", held)
            .ends_with(
                R"("command_ended_ms":null,"note":"deploy 42","hold":false,"slot":null}],"hold_durations":null,"waiting":0,"waiters":[]})"));
    held.holders.front().note = "two\nlines \"q\" \x1b\xff";
    CHECK(
        json("job", held)
            .ends_with(
                R"("note":"two\nlines \"q\" \u001b\udcff","hold":false,"slot":null}],"hold_durations":null,"waiting":0,"waiters":[]})"));
    held.holders.front().note.clear();
    CHECK(
        json("job", held)
            .ends_with(
                R"("note":null,"hold":false,"slot":null}],"hold_durations":null,"waiting":0,"waiters":[]})"));
    held.holders.front().hold = true;
    CHECK(
        json("job", held)
            .ends_with(
                R"("note":null,"hold":true,"slot":null}],"hold_durations":null,"waiting":0,"waiters":[]})"));
}

TEST_CASE("status json: a foreign key, a key of any bytes, fields that are not numbers") {
    CHECK(
        json("job", snapshot("list", "")) ==
        R"({"key":"job","state":"foreign","redis_type":"list","value":null,"limit":null,"mode":null,)"
        R"("server_time_ms":1763812345000,"expires_ms":null,"remaining_ms":null,)"
        R"("last_fence":17,"holders":[],"hold_durations":null,"waiting":0,"waiters":[]})");
    CHECK(
        json("two\nlines\xff", snapshot("none", "")).starts_with(R"({"key":"two\nlines\udcff",)"));

    const std::string value = std::to_string(now + 1000);
    auto odd = snapshot("string", value, value);
    odd.last_fence = "x";
    odd.holders.push_back({{"", "12ab"}, "", {}, {}, {}, {}, {}, {}, false, {}});
    const std::string text = json("job", odd);
    CHECK(text.find(R"("last_fence":null)") != std::string::npos);
    CHECK(text.find(R"("host":null,"pid":null,"fence":null,"acquired_ms":null,)") !=
          std::string::npos);

    // A fence beyond 2^53 - 1, or negative, is no fence a JSON reader could hold exactly.
    for (const char* fence : {"9007199254740992", "-3"}) {
        CAPTURE(fence);
        odd.holders = {{{"web1", "42"}, fence, {}, {}, {}, {}, {}, {}, false, {}}};
        CHECK(json("job", odd).find(R"("fence":null)") != std::string::npos);
    }
}

TEST_CASE("status json: the waiters, in the order they will be served, and how many") {
    const std::string value = std::to_string(now + 12000);
    auto held = snapshot("string", value, value);
    held.holders.push_back({{"web1", "4242"}, "17", now - 3000, {}, {}, {}, 10000, {}, false, {}});
    held.waiters.push_back(
        {{"web2", "43"}, "1", now - 130000, now + 770000, "deploy 43", true, false});
    held.waiters.push_back({{"web3", "44"}, "3", now - 5000, {}, "", false, true});
    held.waiters.push_back({{"", ""}, "shared", {}, {}, "", false, false});
    const std::string text = json("job", held);
    CHECK(text.ends_with(
        R"("waiting":3,"waiters":[)"
        R"({"position":1,"mode":"exclusive","limit":null,"host":"web2","pid":43,)"
        R"("since_ms":1763812215000,"waited_ms":130000,"deadline_ms":1763813115000,)"
        R"("note":"deploy 43","hold":false,"supersede":true},)"
        R"({"position":2,"mode":"semaphore","limit":3,"host":"web3","pid":44,)"
        R"("since_ms":1763812340000,"waited_ms":5000,"deadline_ms":null,"note":null,)"
        R"("hold":true,"supersede":false},)"
        R"({"position":3,"mode":"shared","limit":null,"host":null,"pid":null,"since_ms":null,)"
        R"("waited_ms":null,"deadline_ms":null,"note":null,"hold":false,"supersede":false}]})"));
}
