#include "redis/redirect.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::redis;

namespace {

Reply error(const std::string& text) {
    Reply r;
    r.kind = Reply::Kind::error;
    r.text = text;
    return r;
}

} // namespace

TEST_CASE("redirect: MOVED and ASK name the node, in every form Redis writes") {
    auto moved = redirect_of(error("MOVED 3999 127.0.0.1:6381"));
    REQUIRE(moved);
    CHECK(moved->kind == Redirect::Kind::moved);
    CHECK(moved->host == "127.0.0.1");
    CHECK(moved->port == 6381);

    auto ask = redirect_of(error("ASK 3999 cache-2.internal:7002"));
    REQUIRE(ask);
    CHECK(ask->kind == Redirect::Kind::ask);
    CHECK(ask->host == "cache-2.internal");
    CHECK(ask->port == 7002);

    // An empty host, or "?", is the host the answer came from.
    CHECK(redirect_of(error("MOVED 1 :7003"))->host.empty());
    CHECK(redirect_of(error("MOVED 1 ?:7003"))->host.empty());
    // IPv6, as Redis writes it and bracketed.
    CHECK(redirect_of(error("MOVED 1 ::1:7004"))->host == "::1");
    CHECK(redirect_of(error("MOVED 1 [fe80::1]:7004"))->host == "fe80::1");

    Endpoint from;
    from.host = "10.0.0.1";
    from.port = 7000;
    from.user = "app";
    from.password = "secret";
    from.tls = true;
    Endpoint to = redirected(from, *redirect_of(error("MOVED 1 :7003")));
    CHECK(to.host == "10.0.0.1");
    CHECK(to.port == 7003);
    CHECK(to.user == "app");
    CHECK(to.password == "secret");
    CHECK(to.tls);
    from.unix_socket = true;
    CHECK_FALSE(redirected(from, *moved).unix_socket);
}

TEST_CASE("redirect: TRYAGAIN and CLUSTERDOWN ask for the request again") {
    CHECK(redirect_of(error("TRYAGAIN Multiple keys request during rehashing of slot"))->kind ==
          Redirect::Kind::try_again);
    CHECK(redirect_of(error("CLUSTERDOWN The cluster is down"))->kind == Redirect::Kind::try_again);
}

TEST_CASE("redirect: anything else is not one, nor is an address that cannot be read") {
    for (const char* text : {"ERR unknown command", "MOVED", "MOVED 3999", "MOVED 3999 host",
                             "MOVED 3999 host:0", "MOVED 3999 host:70000", "MOVED 3999 host:x",
                             "ASK 1 a b:1", "MOVEDX 1 h:1", "READONLY You can't write"}) {
        CAPTURE(text);
        CHECK_FALSE(redirect_of(error(text)));
    }
    Reply ok;
    ok.kind = Reply::Kind::string;
    ok.text = "MOVED 1 h:1";
    CHECK_FALSE(redirect_of(ok));
    CHECK_FALSE(redirect_among({ok}));
    CHECK(redirect_among({ok, error("MOVED 1 h:2")})->port == 2);
}
