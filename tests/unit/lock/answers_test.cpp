#include "lock/answers.hpp"
#include "lock/scripts.hpp"

#include <doctest/doctest.h>
#include <fmt/core.h>

using namespace redlockrun;
using namespace redlockrun::lock;
using redis::Reply;

namespace {

Reply bulk(const std::string& text) {
    Reply r;
    r.kind = Reply::Kind::string;
    r.text = text;
    return r;
}

Reply integer(long long value) {
    Reply r;
    r.kind = Reply::Kind::integer;
    r.integer = value;
    return r;
}

Reply array(std::vector<Reply> elements) {
    Reply r;
    r.kind = Reply::Kind::array;
    r.elements = std::move(elements);
    return r;
}

} // namespace

TEST_CASE("answers: acquire granted, busy, foreign") {
    auto granted = decode_acquire(
        array({bulk("granted"), bulk("1763812375678"), bulk("1795315156478145"), integer(30000)}));
    REQUIRE(granted);
    auto& g = std::get<Granted>(*granted);
    CHECK(g.value == "1763812375678");
    CHECK(g.fence == "1795315156478145");
    CHECK(g.validity == Millis{30000});

    auto busy = decode_acquire(
        array({bulk("busy"), integer(1200), bulk("web1"), bulk("4242"), bulk("17")}));
    REQUIRE(busy);
    auto& b = std::get<Busy>(*busy);
    CHECK(b.remaining == Millis{1200});
    REQUIRE(b.holder);
    CHECK(describe(*b.holder) == "web1 pid 4242");
    CHECK(b.fence == "17");

    auto classic = decode_acquire(array({bulk("busy"), integer(5), bulk(""), bulk(""), bulk("")}));
    REQUIRE(classic);
    CHECK_FALSE(std::get<Busy>(*classic).holder.has_value());
    CHECK(describe_holder(std::get<Busy>(*classic)) == "a client of the classic algorithm");
    CHECK(describe_holder(std::get<Busy>(*busy)) == "web1 pid 4242");

    auto foreign = decode_acquire(array({bulk("foreign"), bulk("list")}));
    REQUIRE(foreign);
    CHECK(std::get<Foreign>(*foreign).type == "list");
}

TEST_CASE("answers: a used-up fence counter is a refusal that says why") {
    auto exhausted = decode_acquire(array({bulk("exhausted"), bulk("9007199254740991")}));
    REQUIRE(exhausted);
    const auto& answer = std::get<FencesExhausted>(*exhausted);
    CHECK(answer.last_fence == "9007199254740991");
    const std::string message = describe_exhausted("job", "{job}:redlockrun:fence", answer);
    CHECK(message.find("{job}:redlockrun:fence holds 9007199254740991") != std::string::npos);
    CHECK(message.find("nothing was changed") != std::string::npos);
    CHECK_FALSE(decode_acquire(array({bulk("exhausted")})));
}

TEST_CASE("answers: a fence counter that holds no number is a refusal that names it") {
    auto hash = decode_acquire(array({bulk("unreadable_fence"), bulk("hash")}));
    REQUIRE(hash);
    const std::string about_hash = describe_unreadable_fence("job", "{job}:redlockrun:fence",
                                                             std::get<FenceUnreadable>(*hash));
    CHECK(about_hash.find("job is free, but not granted: its fence counter "
                          "{job}:redlockrun:fence holds a hash") != std::string::npos);
    CHECK(about_hash.find("nothing was changed") != std::string::npos);

    auto text = decode_acquire(array({bulk("unreadable_fence"), bulk("string")}));
    REQUIRE(text);
    const std::string about_text = describe_unreadable_fence("job", "{job}:redlockrun:fence",
                                                             std::get<FenceUnreadable>(*text));
    CHECK(about_text.find("holds a value that is not a number") != std::string::npos);
    CHECK_FALSE(decode_acquire(array({bulk("unreadable_fence")})));
}

TEST_CASE("answers: malformed replies are refused with a description") {
    Reply status;
    status.kind = Reply::Kind::status;
    status.text = "OK";
    for (const Reply& bad : {status, integer(1), array({}), array({bulk("granted"), bulk("x")}),
                             array({bulk("busy"), bulk("soon"), bulk(""), bulk(""), bulk("")}),
                             array({bulk("maybe"), bulk("x"), bulk("y"), integer(1)})}) {
        auto answer = decode_acquire(bad);
        REQUIRE_FALSE(answer);
        CHECK(answer.error().find("acquire") != std::string::npos);
    }
    CHECK_FALSE(decode_renew(array({bulk("lost"), bulk("stolen"), bulk(""), bulk("")})));
    CHECK_FALSE(decode_release(array({bulk("released?")})));
    CHECK_FALSE(decode_status(array({bulk("x")})));
}

TEST_CASE("answers: renew and release, with every loss reason") {
    auto renewed = decode_renew(array({bulk("renewed"), bulk("1763812375678"), integer(29999)}));
    REQUIRE(renewed);
    CHECK(std::get<Renewed>(*renewed).validity == Millis{29999});

    CHECK(std::holds_alternative<Released>(*decode_release(array({bulk("released")}))));

    struct Case {
        const char* reason;
        LossReason expected;
        const char* words;
    };
    for (const Case& c : {Case{"gone", LossReason::gone, "expired"},
                          Case{"deleted", LossReason::deleted, "deleted"},
                          Case{"changed", LossReason::changed, "overwritten"},
                          Case{"expired", LossReason::expired, "timestamp had passed"},
                          Case{"record", LossReason::record, "owner record was overwritten"}}) {
        CAPTURE(c.reason);
        auto answer = decode_release(array({bulk("lost"), bulk(c.reason), bulk(""), bulk("")}));
        REQUIRE(answer);
        const auto& lost = std::get<Lost>(*answer);
        CHECK(lost.reason == c.expected);
        CHECK(describe(lost).find(c.words) != std::string::npos);
    }
    auto taken = decode_renew(array({bulk("lost"), bulk("taken"), bulk("web2"), bulk("7")}));
    REQUIRE(taken);
    CHECK(describe(std::get<Lost>(*taken)) == "another redlockrun holds it now (web2 pid 7)");
}

TEST_CASE("answers: grants and renewals say the server's time, where the script does") {
    auto granted = decode_acquire(array({bulk("granted"), bulk("1763812375678"), bulk("17"),
                                         integer(30000), integer(1763812345678)}));
    REQUIRE(granted);
    CHECK(std::get<Granted>(*granted).server_ms == 1763812345678);
    auto renewed = decode_renew(
        array({bulk("renewed"), bulk("1763812375678"), integer(29999), integer(1763812345679)}));
    REQUIRE(renewed);
    CHECK(std::get<Renewed>(*renewed).server_ms == 1763812345679);
    auto lost = decode_renew(
        array({bulk("lost"), bulk("gone"), bulk(""), bulk(""), integer(1763812345680)}));
    REQUIRE(lost);
    CHECK(std::get<Lost>(*lost).server_ms == 1763812345680);
    // Without it (a reply of four fields), no time; one that is not a number is none either.
    auto older = decode_renew(array({bulk("renewed"), bulk("1763812375678"), integer(29999)}));
    REQUIRE(older);
    CHECK_FALSE(std::get<Renewed>(*older).server_ms);
    auto odd = decode_renew(array({bulk("lost"), bulk("gone"), bulk(""), bulk(""), bulk("x")}));
    REQUIRE(odd);
    CHECK_FALSE(std::get<Lost>(*odd).server_ms);
}

TEST_CASE("answers: status snapshot of an exclusive lock") {
    auto snapshot = decode_status(array({bulk("1763812345678"),
                                         bulk("string"),
                                         bulk("1763812375678"),
                                         bulk("1763812375678"),
                                         bulk("9"),
                                         bulk(""),
                                         bulk(""),
                                         bulk(""),
                                         bulk(""),
                                         integer(1),
                                         bulk("web1"),
                                         bulk("42"),
                                         bulk("9"),
                                         bulk("1763812340000"),
                                         bulk("1763812375678"),
                                         bulk(""),
                                         bulk(""),
                                         bulk("10000"),
                                         bulk("deploy 42\n\x1b"),
                                         bulk("1"),
                                         bulk(""),
                                         integer(0)}));
    REQUIRE(snapshot);
    CHECK(snapshot->now_ms == 1763812345678);
    CHECK(snapshot->type == "string");
    CHECK(snapshot->value == "1763812375678");
    CHECK(snapshot->owner_value == "1763812375678");
    CHECK(snapshot->last_fence == "9");
    CHECK_FALSE(snapshot->limit.has_value());
    REQUIRE(snapshot->holders.size() == 1);
    const HolderRecord& holder = snapshot->holders.front();
    CHECK(holder.holder.host == "web1");
    CHECK(holder.holder.pid == "42");
    CHECK(holder.fence == "9");
    CHECK(holder.acquired_ms == 1763812340000);
    CHECK(holder.expires_ms == 1763812375678);
    CHECK_FALSE(holder.hold_until_ms.has_value());
    CHECK_FALSE(holder.ended_ms.has_value());
    CHECK(holder.renew_ms == 10000);
    CHECK(holder.note == "deploy 42\n\x1b"); // as it was written: escaped where it is shown
    CHECK(holder.hold);                      // a hold's record
    CHECK(holder.slot.empty());              // an exclusive lock's holder has none
    CHECK(snapshot->waiters.empty());
}

TEST_CASE("answers: status snapshot of a free lock and of a semaphore") {
    auto free =
        decode_status(array({bulk("1763812345678"), bulk("none"), bulk(""), bulk(""), bulk(""),
                             bulk(""), bulk(""), bulk(""), bulk(""), integer(0), integer(0)}));
    REQUIRE(free);
    CHECK(free->type == "none");
    CHECK(free->holders.empty());
    CHECK(free->last_fence.empty());
    CHECK_FALSE(free->took_median_ms.has_value());

    auto semaphore = decode_status(
        array({bulk("1763812345678"), bulk("string"), bulk("1763812375678"), bulk("1763812375678"),
               bulk("12"), bulk("3"), bulk("61000"), bulk("300000"), bulk("20"), integer(2),
               // the first holder's command ended; it keeps its place for --min-hold
               bulk("web1"), bulk("41"), bulk("11"), bulk("1763812300000"), bulk("1763812360000"),
               bulk("1763812360000"), bulk("1763812340000"), bulk("0"), bulk("nightly"), bulk(""),
               bulk("1"),
               // the second one's runs, and its record says neither how it renews nor why
               bulk("web2"), bulk("42"), bulk("12"), bulk("1763812345000"), bulk("1763812375678"),
               bulk(""), bulk(""), bulk(""), bulk(""), bulk("1"), bulk("0"),
               // two waiters, in the order they will be served: a hold with --supersede that
               // gives up at a -w deadline, and one of an earlier version, queued with no record
               integer(2), bulk("web3"), bulk("43"), bulk("3"), bulk("1763812341000"),
               bulk("1763812941000"), bulk("deploy 43"), bulk("1"), bulk("1"), bulk(""), bulk(""),
               bulk("3"), bulk(""), bulk(""), bulk(""), bulk(""), bulk("")}));
    REQUIRE(semaphore);
    CHECK(semaphore->limit == 3);
    REQUIRE(semaphore->holders.size() == 2);
    CHECK(semaphore->holders[0].hold_until_ms == 1763812360000);
    CHECK(semaphore->holders[0].ended_ms == 1763812340000);
    CHECK(semaphore->holders[1].holder.host == "web2");
    CHECK(semaphore->holders[1].fence == "12");
    CHECK_FALSE(semaphore->holders[1].ended_ms.has_value());
    CHECK(semaphore->holders[0].renew_ms == 0);
    CHECK_FALSE(semaphore->holders[1].renew_ms.has_value());
    CHECK(semaphore->holders[0].note == "nightly");
    CHECK(semaphore->holders[1].note.empty());
    CHECK_FALSE(semaphore->holders[0].hold);
    CHECK(semaphore->holders[1].hold);
    CHECK(semaphore->holders[0].slot == "1");
    CHECK(semaphore->holders[1].slot == "0");
    CHECK(semaphore->took_median_ms == 61000);
    CHECK(semaphore->took_longest_ms == 300000);
    CHECK(semaphore->took_count == 20);
    REQUIRE(semaphore->waiters.size() == 2);
    const WaiterRecord& first = semaphore->waiters[0];
    CHECK(first.waiter.host == "web3");
    CHECK(first.waiter.pid == "43");
    CHECK(first.mode == "3");
    CHECK(first.since_ms == 1763812341000);
    CHECK(first.deadline_ms == 1763812941000);
    CHECK(first.note == "deploy 43");
    CHECK(first.supersede);
    CHECK(first.hold);
    const WaiterRecord& older = semaphore->waiters[1];
    CHECK(older.waiter.host.empty());
    CHECK(older.mode == "3");
    CHECK_FALSE(older.since_ms.has_value());
    CHECK_FALSE(older.deadline_ms.has_value());
    CHECK_FALSE(older.supersede);
    CHECK_FALSE(older.hold);
}

TEST_CASE("answers: a semaphore's grant names its slot, and other grants none") {
    const auto granted = [](std::vector<Reply> extra) {
        std::vector<Reply> fields{bulk("granted"), bulk("1763812375678"), bulk("17"),
                                  integer(30000), integer(1763812345678)};
        for (auto& field : extra) {
            fields.push_back(std::move(field));
        }
        return decode_acquire(array(std::move(fields)));
    };
    auto slot = granted({bulk("2")});
    REQUIRE(slot);
    CHECK(std::get<Granted>(*slot).slot == 2);
    for (auto none : {granted({bulk("")}), granted({})}) {
        REQUIRE(none);
        CHECK_FALSE(std::get<Granted>(*none).slot.has_value());
    }
    CHECK_FALSE(granted({bulk("-1")}));
    CHECK_FALSE(granted({bulk("first")}));
}

TEST_CASE("answers: a status whose holders do not add up is refused") {
    const auto header = [](Reply count, const char* limit = "") {
        return std::vector<Reply>{bulk("1763812345678"),
                                  bulk("string"),
                                  bulk("1763812375678"),
                                  bulk("1763812375678"),
                                  bulk("9"),
                                  bulk(limit),
                                  bulk(""),
                                  bulk(""),
                                  bulk(""),
                                  count};
    };
    // `fields` fields of holders, then `waiters` waiters and `waiter_fields` fields of theirs.
    const auto with = [](std::vector<Reply> elements, size_t fields, Reply waiters = integer(0),
                         size_t waiter_fields = 0) {
        for (size_t i = 0; i < fields; ++i) {
            elements.push_back(bulk("1"));
        }
        elements.push_back(std::move(waiters));
        for (size_t i = 0; i < waiter_fields; ++i) {
            elements.push_back(bulk("1"));
        }
        return array(std::move(elements));
    };
    CHECK(decode_status(with(header(integer(1)), 11)));
    CHECK_FALSE(decode_status(with(header(integer(1)), 10)));
    CHECK_FALSE(decode_status(with(header(integer(1)), 12)));
    CHECK_FALSE(decode_status(with(header(integer(2)), 11)));
    CHECK_FALSE(decode_status(with(header(integer(-1)), 0)));
    CHECK_FALSE(decode_status(with(header(integer(4611686018427387904)), 10)));
    CHECK_FALSE(decode_status(with(header(bulk("x")), 0)));
    CHECK_FALSE(decode_status(with(header(integer(0), "0"), 0)));
    CHECK_FALSE(decode_status(with(header(integer(0), "three"), 0)));
    CHECK(decode_status(with(header(integer(0), "3"), 0))->limit == 3);
    CHECK(decode_status(with(header(integer(1)), 11, integer(2), 16))->waiters.size() == 2);
    CHECK_FALSE(decode_status(with(header(integer(1)), 11, integer(2), 15)));
    CHECK_FALSE(decode_status(with(header(integer(1)), 11, integer(2), 17)));
    CHECK_FALSE(decode_status(with(header(integer(0)), 0, integer(-1), 0)));
    CHECK_FALSE(decode_status(with(header(integer(0)), 0, bulk("x"), 0)));
    // A reply of an earlier version's script, which has no waiter count, is not this one's.
    CHECK_FALSE(decode_status(array(header(integer(0)))));
    auto status = decode_status(with(header(integer(0)), 0));
    REQUIRE(status);
    status = decode_status(
        array({bulk("soon"), bulk("none"), bulk(""), bulk(""), bulk(""), bulk(""), integer(0)}));
    CHECK_FALSE(status);
    CHECK(status.error().find("status") != std::string::npos);
}

TEST_CASE("answers: foreign keys are described without their content") {
    CHECK(describe_foreign("k", Foreign{"hash"}) ==
          "k holds a hash, not a timestamp lock; nothing was changed");
    CHECK(describe_foreign("k", Foreign{"string"}).find("not a Unix timestamp") !=
          std::string::npos);
}

TEST_CASE("answers: a semaphore's busy answer, a --min-hold recheck, and another limit") {
    auto busy = decode_acquire(array({bulk("busy"), integer(27000), bulk("web1"), bulk("4242"),
                                      bulk("17"), bulk("3"), integer(3), integer(1500)}));
    REQUIRE(busy);
    const auto& b = std::get<Busy>(*busy);
    CHECK(b.limit == 3);
    CHECK(b.holders == 3);
    CHECK(b.recheck == Millis{1500});
    CHECK(describe_holder(b) == "3 holders of a --limit 3 semaphore");

    auto exclusive = decode_acquire(array({bulk("busy"), integer(27000), bulk("web1"), bulk("4242"),
                                           bulk("17"), bulk(""), integer(0), integer(2000)}));
    REQUIRE(exclusive);
    CHECK(std::get<Busy>(*exclusive).limit == 0);
    CHECK(std::get<Busy>(*exclusive).recheck == Millis{2000});
    CHECK(describe_holder(std::get<Busy>(*exclusive)) == "web1 pid 4242");

    // Without the semaphore's fields (an older script), the recheck is the remaining time.
    auto plain = decode_acquire(
        array({bulk("busy"), integer(1200), bulk("web1"), bulk("4242"), bulk("17")}));
    REQUIRE(plain);
    CHECK(std::get<Busy>(*plain).recheck == Millis{1200});

    // A limit of 1, a negative count or a limit that is not a number is not an answer.
    for (const char* limit : {"1", "x", "-3"}) {
        CAPTURE(limit);
        CHECK_FALSE(decode_acquire(array({bulk("busy"), integer(1), bulk(""), bulk(""), bulk(""),
                                          bulk(limit), integer(1), integer(1)})));
    }
    CHECK_FALSE(decode_acquire(array({bulk("busy"), integer(1), bulk(""), bulk(""), bulk(""),
                                      bulk("3"), integer(-1), integer(1)})));

    auto mismatch = decode_acquire(array({bulk("mismatch"), bulk("3")}));
    REQUIRE(mismatch);
    CHECK(std::get<LimitMismatch>(*mismatch).held_limit == "3");
    CHECK_FALSE(decode_acquire(array({bulk("mismatch"), bulk("")})));
    CHECK_FALSE(decode_acquire(array({bulk("mismatch"), bulk("1")})));
}

TEST_CASE("answers: a semaphore's free slot kept for the waiters queued ahead") {
    auto kept =
        decode_acquire(array({bulk("busy"), integer(8700), bulk("web1"), bulk("4242"), bulk("17"),
                              bulk("2"), integer(1), integer(8700), integer(1)}));
    REQUIRE(kept);
    const auto& k = std::get<Busy>(*kept);
    CHECK(k.queued_ahead == 1);
    CHECK(describe_busy("jobs", k, describe_holder(k)) ==
          "jobs is held by 1 holder of a --limit 2 semaphore, and its free slot is kept for a "
          "waiter queued before this run");
    auto two = decode_acquire(array({bulk("busy"), integer(8700), bulk(""), bulk(""), bulk(""),
                                     bulk("3"), integer(0), integer(8700), integer(4)}));
    REQUIRE(two);
    CHECK(describe_busy("jobs", std::get<Busy>(*two), describe_holder(std::get<Busy>(*two))) ==
          "jobs is a --limit 3 semaphore that nobody holds, but its 3 free slots are kept for the "
          "4 waiters queued before this run");

    // Full, or exclusive: no slot is kept, and the time left is the holder's.
    auto full =
        decode_acquire(array({bulk("busy"), integer(27000), bulk("web1"), bulk("4242"), bulk("17"),
                              bulk("2"), integer(2), integer(27000), integer(0)}));
    REQUIRE(full);
    CHECK(describe_busy("jobs", std::get<Busy>(*full), describe_holder(std::get<Busy>(*full))) ==
          "jobs is held by 2 holders of a --limit 2 semaphore; the first slot frees in 27s");
    // Waiters ahead of a full semaphore, or a negative count, are not an answer.
    CHECK_FALSE(decode_acquire(array({bulk("busy"), integer(1), bulk(""), bulk(""), bulk(""),
                                      bulk("2"), integer(2), integer(1), integer(1)})));
    CHECK_FALSE(decode_acquire(array({bulk("busy"), integer(1), bulk(""), bulk(""), bulk(""),
                                      bulk("2"), integer(1), integer(1), integer(-1)})));
}

TEST_CASE("answers: shared holders, and the waiters queued before a run") {
    auto readers =
        decode_acquire(array({bulk("busy"), integer(27000), bulk("web1"), bulk("4242"), bulk("17"),
                              bulk("shared"), integer(2), integer(27000), integer(0)}));
    REQUIRE(readers);
    const auto& r = std::get<Busy>(*readers);
    CHECK(r.shared);
    CHECK(r.limit == shared_cap);
    CHECK(r.holders == 2);
    CHECK(describe_holder(r) == "2 shared holders");

    // Shared holders, and an exclusive waiter queued before this shared run: it goes first.
    auto behind_writer =
        decode_acquire(array({bulk("busy"), integer(9000), bulk("web1"), bulk("4242"), bulk("17"),
                              bulk("shared"), integer(1), integer(9000), integer(1)}));
    REQUIRE(behind_writer);
    CHECK(describe_busy("db", std::get<Busy>(*behind_writer),
                        describe_holder(std::get<Busy>(*behind_writer))) ==
          "db is held by 1 shared holder, and a waiter queued before this run must have it "
          "first");

    // A free lock that the waiters queued before an exclusive run have been woken to take.
    auto free_but_kept =
        decode_acquire(array({bulk("busy"), integer(9000), bulk(""), bulk(""), bulk(""), bulk(""),
                              integer(0), integer(9000), integer(2)}));
    REQUIRE(free_but_kept);
    CHECK(describe_busy("db", std::get<Busy>(*free_but_kept),
                        describe_holder(std::get<Busy>(*free_but_kept))) ==
          "db is free, but kept for the 2 waiters queued before this run");

    auto mismatch = decode_acquire(array({bulk("mismatch"), bulk("shared")}));
    REQUIRE(mismatch);
    CHECK(std::get<LimitMismatch>(*mismatch).held_limit == "shared");
    CHECK_FALSE(decode_acquire(array({bulk("mismatch"), bulk("sharing")})));
}

TEST_CASE("answers: the scripts cap shared holders where the answers expect it") {
    // The cap is written twice, in holders.lua (which every script begins with) and answers.hpp.
    const std::string source = redlockrun::lock::scripts::acquire.source;
    CHECK(source.find(fmt::format("local shared_cap = {}\n", shared_cap)) != std::string::npos);
}

TEST_CASE("answers: a release that --min-hold keeps") {
    auto kept = decode_release(array({bulk("released"), bulk("kept"), integer(58000)}));
    REQUIRE(kept);
    REQUIRE(std::get<Released>(*kept).kept_for);
    CHECK(*std::get<Released>(*kept).kept_for == Millis{58000});
    auto plain = decode_release(array({bulk("released")}));
    REQUIRE(plain);
    CHECK_FALSE(std::get<Released>(*plain).kept_for);
    CHECK_FALSE(decode_release(array({bulk("released"), bulk("kept"), bulk("soon")})));
}

TEST_CASE("answers: a busy lock says how long it has been held and that it is renewed") {
    const auto busy_with = [](const char* held, const char* renew, const char* ended) {
        auto answer = decode_acquire(
            array({bulk("busy"), integer(20000), bulk("vm"), bulk("6604"), bulk("17"), bulk(""),
                   integer(0), integer(20000), integer(0), bulk(held), bulk(renew), bulk(ended)}));
        REQUIRE(answer);
        return std::get<Busy>(*answer);
    };
    // Renewed: the lease until the next renewal is no time a reader could use.
    const Busy renewed = busy_with("192000", "10000", "");
    CHECK(renewed.held_for == Millis{192000});
    CHECK(renewed.renew_every == Millis{10000});
    CHECK_FALSE(renewed.ended_ago);
    const std::string message = describe_busy("deploy", renewed, describe_holder(renewed));
    CHECK(message.find("deploy is held by vm pid 6604") != std::string::npos);
    CHECK(message.find("since 3m12s ago") != std::string::npos);
    CHECK(message.find("renewed every 10s") != std::string::npos);
    CHECK(message.find("20s") == std::string::npos);

    // --no-renew: when it expires.
    const Busy lapsing = busy_with("5000", "0", "");
    const std::string lapses = describe_busy("deploy", lapsing, describe_holder(lapsing));
    CHECK(lapses.find("since 5s ago") != std::string::npos);
    CHECK(lapses.find("expires in 20s") != std::string::npos);
    CHECK(lapses.find("renewed every") == std::string::npos);

    // --min-hold after the command: that it ended, and when the lock is let go.
    const Busy kept = busy_with("40000", "10000", "35000");
    const std::string after = describe_busy("deploy", kept, describe_holder(kept));
    CHECK(after.find("command ended 35s ago") != std::string::npos);
    CHECK(after.find("go in 20s") != std::string::npos);
    CHECK(after.find("renewed every") == std::string::npos);

    // A client of the classic algorithm: when it expires.
    const Busy classic = busy_with("", "", "");
    CHECK_FALSE(classic.held_for);
    const std::string by_classic =
        describe_busy("deploy", classic, "a client of the classic algorithm");
    CHECK(by_classic.find("expires in 20s") != std::string::npos);

    // Times that are not durations are not known, not a failure.
    const Busy odd = busy_with("-5", "x", "1.5");
    CHECK_FALSE(odd.held_for);
    CHECK_FALSE(odd.renew_every);
    CHECK_FALSE(odd.ended_ago);

    // A semaphore renewed by its first holder to free a slot: no lease as a time left.
    auto semaphore = decode_acquire(
        array({bulk("busy"), integer(27000), bulk("web1"), bulk("4242"), bulk("17"), bulk("2"),
               integer(2), integer(27000), integer(0), bulk("3000"), bulk("10000"), bulk("")}));
    REQUIRE(semaphore);
    const Busy& s = std::get<Busy>(*semaphore);
    CHECK(describe_busy("jobs", s, describe_holder(s)) ==
          "jobs is held by 2 holders of a --limit 2 semaphore, renewed every 10s");
}

TEST_CASE("answers: a busy lock's holder note follows the holder's name") {
    const auto busy_with = [](std::vector<Reply> tail) {
        std::vector<Reply> elements{bulk("busy"), integer(20000), bulk("vm"),    bulk("6604"),
                                    bulk("17"),   bulk(""),       integer(0),    integer(20000),
                                    integer(0),   bulk("192000"), bulk("10000"), bulk("")};
        elements.insert(elements.end(), tail.begin(), tail.end());
        auto answer = decode_acquire(array(std::move(elements)));
        REQUIRE(answer);
        return std::get<Busy>(*answer);
    };
    const Busy noted = busy_with({bulk("deploy 42")});
    CHECK(noted.note == "deploy 42");
    CHECK(describe_holder(noted) == "vm pid 6604 (note: deploy 42)");
    CHECK(describe_busy("deploy", noted, describe_holder(noted)) ==
          "deploy is held by vm pid 6604 (note: deploy 42) since 3m12s ago, renewed every 10s");

    // No note, and a reply from before notes (twelve fields): nothing is added.
    for (const Busy& plain : {busy_with({bulk("")}), busy_with({})}) {
        CHECK(plain.note.empty());
        CHECK(describe_holder(plain) == "vm pid 6604");
        CHECK(describe_busy("deploy", plain, describe_holder(plain)).find("note") ==
              std::string::npos);
    }

    // Kept as it was written: the logger and the status line escape what is not printable.
    CHECK(busy_with({bulk("two\nlines\x1b")}).note == "two\nlines\x1b");

    // Whether the waiter is queued, after the note: an exclusive waiter with no one queued is
    // not, and blocks on the shared wake-up list.
    CHECK(busy_with({bulk(""), bulk("1")}).queued);
    CHECK_FALSE(busy_with({bulk(""), bulk("")}).queued);
    CHECK_FALSE(busy_with({bulk("")}).queued);
    CHECK(describe_note("").empty());
    CHECK(describe_note("x") == " (note: x)");

    // A client of the classic algorithm has no record, so no note.
    auto classic = decode_acquire(
        array({bulk("busy"), integer(5), bulk(""), bulk(""), bulk(""), bulk(""), integer(0),
               integer(5), integer(0), bulk(""), bulk(""), bulk(""), bulk("")}));
    REQUIRE(classic);
    CHECK(describe_holder(std::get<Busy>(*classic)) == "a client of the classic algorithm");

    // A semaphore's reply names the holder whose slot frees first: the note is that holder's.
    auto semaphore =
        decode_acquire(array({bulk("busy"), integer(27000), bulk("web1"), bulk("4242"), bulk("17"),
                              bulk("2"), integer(2), integer(27000), integer(0), bulk("3000"),
                              bulk("10000"), bulk(""), bulk("nightly")}));
    REQUIRE(semaphore);
    const Busy& s = std::get<Busy>(*semaphore);
    CHECK(describe_busy("jobs", s, describe_holder(s)) ==
          "jobs is held by 2 holders of a --limit 2 semaphore (the note of web1 pid 4242, whose "
          "slot frees first: nightly), renewed every 10s");
}

namespace redlockrun::lock {

TEST_CASE("answers: what --break ended, and a holder's loss to it") {
    auto broken =
        decode_break(array({bulk("broken"), integer(2), bulk("web1"), bulk("4242"), bulk("17"),
                            bulk("deploy 88"), bulk(""), bulk(""), bulk(""), bulk("")}));
    REQUIRE(broken);
    const auto& holders = std::get<Broken>(*broken).holders;
    REQUIRE(holders.size() == 2);
    REQUIRE(holders[0].holder.has_value());
    CHECK(holders[0].holder->host == "web1");
    CHECK(holders[0].fence == "17");
    CHECK(holders[0].note == "deploy 88");
    CHECK_FALSE(holders[1].holder.has_value()); // a client of the classic algorithm
    auto free = decode_break(array({bulk("broken"), integer(0)}));
    REQUIRE(free);
    CHECK(std::get<Broken>(*free).holders.empty());
    auto foreign = decode_break(array({bulk("foreign"), bulk("hash")}));
    REQUIRE(foreign);
    CHECK(std::get<Foreign>(*foreign).type == "hash");
    CHECK_FALSE(decode_break(array({bulk("broken"), integer(1), bulk("web1")})));
    CHECK_FALSE(decode_break(array({bulk("broken"), integer(-1)})));
    CHECK_FALSE(decode_break(array({bulk("shattered"), integer(0)})));

    auto lost = decode_renew(
        array({bulk("lost"), bulk("broken"), bulk("alice@ops1 pid 7"), bulk("stuck deploy")}));
    REQUIRE(lost);
    const auto& loss = std::get<Lost>(*lost);
    CHECK(loss.reason == LossReason::broken);
    CHECK(describe(loss) == "it was broken by alice@ops1 pid 7 (redlockrun --break): stuck deploy");
    auto unexplained =
        decode_release(array({bulk("lost"), bulk("broken"), bulk("alice@ops1 pid 7"), bulk("")}));
    REQUIRE(unexplained);
    CHECK(describe(std::get<Lost>(*unexplained)) ==
          "it was broken by alice@ops1 pid 7 (redlockrun --break)");
}

} // namespace redlockrun::lock

TEST_CASE("answers: a busy answer says how long the last holds took, when any did") {
    const auto busy_with = [](std::vector<Reply> took) {
        std::vector<Reply> fields{bulk("busy"), integer(5000), bulk("web1"), bulk("42"),
                                  bulk("17"),   bulk(""),      integer(0),   integer(5000),
                                  integer(0),   bulk(""),      bulk(""),     bulk(""),
                                  bulk(""),     bulk("")};
        for (auto& field : took) {
            fields.push_back(std::move(field));
        }
        return decode_acquire(array(std::move(fields)));
    };
    const auto took = busy_with({bulk("252000"), bulk("20")});
    REQUIRE(took);
    const Busy& busy = std::get<Busy>(*took);
    CHECK(busy.took_median == Millis{252000});
    CHECK(busy.took_count == 20);
    CHECK(describe_took("deploy", busy) == "; holds of deploy took 4m12s (median of the last 20)");
    for (auto none : {busy_with({bulk(""), bulk("")}), busy_with({})}) {
        REQUIRE(none);
        CHECK_FALSE(std::get<Busy>(*none).took_median.has_value());
        CHECK(describe_took("deploy", std::get<Busy>(*none)).empty());
    }
    CHECK_FALSE(busy_with({bulk("-1"), bulk("3")}));
    CHECK_FALSE(busy_with({bulk("100"), bulk("0")}));
}
