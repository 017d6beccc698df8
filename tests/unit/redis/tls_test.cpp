#include "redis/tls.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <sys/socket.h>

using namespace redlockrun;
using namespace redlockrun::redis;

TEST_CASE("TLS: a peer that has gone is a failure, never a SIGPIPE") {
    // The default disposition, under which a write to a closed socket ends the process.
    struct sigaction original {};
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    REQUIRE(::sigaction(SIGPIPE, &default_action, &original) == 0);

    auto client = TlsClient::create({});
    REQUIRE(client);
    int ends[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) == 0);
    ::close(ends[1]); // the ClientHello goes to a socket nobody reads: EPIPE, and SIGPIPE
    auto stream =
        (*client)->handshake(UniqueFd(ends[0]), "localhost", steady_now() + Millis{2000}, nullptr);
    REQUIRE_FALSE(stream);
    CHECK(stream.error().kind == ConnectFailure::Kind::failed);
    CHECK(stream.error().message == "the server closed the connection during the TLS handshake");

    sigset_t pending;
    ::sigpending(&pending);
    CHECK_FALSE(::sigismember(&pending, SIGPIPE)); // taken back, not left for later
    ::sigaction(SIGPIPE, &original, nullptr);
}

TEST_CASE("TLS: a handshake with a silent peer ends at the deadline") {
    auto client = TlsClient::create({});
    REQUIRE(client);
    int ends[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) == 0);
    const UniqueFd silent_peer(ends[1]);
    auto stream =
        (*client)->handshake(UniqueFd(ends[0]), "localhost", steady_now() + Millis{50}, nullptr);
    REQUIRE_FALSE(stream);
    CHECK(stream.error().kind == ConnectFailure::Kind::timed_out);
    CHECK(stream.error().message == "no answer to the TLS handshake");
}
