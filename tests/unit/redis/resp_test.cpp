#include "redis/error_reply.hpp"
#include "redis/resp.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::redis;

TEST_CASE("resp: commands are encoded as multi-bulk, binary-safe") {
    std::string out;
    encode_command({"SET", "k", std::string("a\0b", 3)}, out);
    CHECK(out == std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n", 29));
    encode_command({"PING"}, out);
    CHECK(out.substr(29) == "*1\r\n$4\r\nPING\r\n");
}

TEST_CASE("resp: lengths of many digits, and more than nine arguments, are written whole") {
    Command command(11, "x");
    command[0] = std::string(12345, 'a');
    command[10] = "";
    std::string out;
    encode_command(command, out);
    std::string expected = "*11\r\n$12345\r\n" + std::string(12345, 'a') + "\r\n";
    for (int i = 1; i < 10; ++i) {
        expected += "$1\r\nx\r\n";
    }
    expected += "$0\r\n\r\n";
    CHECK(out == expected);
}

TEST_CASE("resp: replies are decoded as they complete") {
    ReplyDecoder decoder;
    decoder.feed("+OK\r\n:42\r\n$5\r\nhel");
    auto first = decoder.next();
    REQUIRE(first);
    REQUIRE(*first);
    CHECK((*first)->kind == Reply::Kind::status);
    CHECK((*first)->text == "OK");
    CHECK((**decoder.next()).integer == 42);
    CHECK_FALSE(*decoder.next()); // the bulk string is incomplete
    decoder.feed("lo\r\n*2\r\n$-1\r\n-ERR bad thing\r\n");
    CHECK((**decoder.next()).text == "hello");
    auto array = **decoder.next();
    REQUIRE(array.kind == Reply::Kind::array);
    CHECK(array.elements.at(0).is_nil());
    CHECK(array.elements.at(1).error_code() == "ERR");
    CHECK(array.describe() == "[(nil), (error) ERR bad thing]");
}

TEST_CASE("resp: a protocol error is reported, not guessed around") {
    ReplyDecoder decoder;
    decoder.feed("HTTP/1.1 400 Bad Request\r\n");
    auto reply = decoder.next();
    CHECK_FALSE(reply.has_value());
    CHECK_FALSE(reply.error().empty());
}

// hiredis would allocate room for every element an array announces before the first arrives.
TEST_CASE("resp: an array larger than any answer is a protocol error, not an allocation") {
    ReplyDecoder decoder;
    decoder.feed("*1579531579\r\n:1\r\n");
    auto reply = decoder.next();
    REQUIRE_FALSE(reply.has_value());
    CHECK(reply.error() == "an array of 1579531579 elements, far more than any answer");

    ReplyDecoder nested;
    nested.feed("*2\r\n*1025\r\n");
    CHECK_FALSE(nested.next().has_value());

    ReplyDecoder largest;
    std::string bytes = "*1024\r\n";
    for (int i = 0; i < 1024; ++i) {
        bytes += ":1\r\n";
    }
    largest.feed(bytes);
    auto accepted = largest.next();
    REQUIRE(accepted.has_value());
    REQUIRE(accepted->has_value());
    CHECK((*accepted)->elements.size() == 1024);
}

TEST_CASE("error replies are explained with advice") {
    Endpoint endpoint;
    Reply wrongpass;
    wrongpass.kind = Reply::Kind::error;
    wrongpass.text = "WRONGPASS invalid username-password pair or user is disabled.";
    CHECK(explain_error_reply(wrongpass, endpoint) ==
          "Redis at 127.0.0.1:6379 answered with an error: WRONGPASS invalid username-password "
          "pair or user is disabled. (check the user name and password)");

    Reply script;
    script.kind = Reply::Kind::error;
    script.text = "READONLY You can't write against a read only replica. script: abc, on "
                  "@user_script:1.";
    auto text = explain_error_reply(script, endpoint);
    CHECK(text.find("script: abc") == std::string::npos);
    CHECK(text.find("point --url at the primary") != std::string::npos);

    for (const char* code : {"NOAUTH x", "LOADING x", "MOVED 3999 127.0.0.1:6381", "NOPERM x",
                             "CROSSSLOT Keys in request don't hash to the same slot",
                             "ERR Client sent AUTH, but no password is set"}) {
        Reply r;
        r.kind = Reply::Kind::error;
        r.text = code;
        CAPTURE(code);
        CHECK(explain_error_reply(r, endpoint).find(" (") != std::string::npos);
    }
}
