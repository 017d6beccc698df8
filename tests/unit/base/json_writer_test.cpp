#include "base/json_writer.hpp"

#include <doctest/doctest.h>

using namespace redlockrun;

TEST_CASE("json: strings are quoted, and quotes, backslashes and controls escaped") {
    CHECK(json_string("") == R"("")");
    CHECK(json_string("job") == R"("job")");
    CHECK(json_string(R"(a"b\c/d)") == R"("a\"b\\c/d")");
    CHECK(json_string("\n\r\t\b\f") == R"("\n\r\t\b\f")");
    CHECK(json_string(std::string("a\0b", 3)) == R"("a\u0000b")");
    CHECK(json_string("\x1b]0;title\x07\x7f") == R"("\u001b]0;title\u0007\u007f")");
}

TEST_CASE("json: valid UTF-8 is kept, C1 controls are escaped") {
    CHECK(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92") ==
          "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92\"");
    CHECK(json_string("\xc2\x9b"
                      "1m") == R"("\u009b1m")");      // CSI
    CHECK(json_string("\xc2\xa0") == "\"\xc2\xa0\""); // the first one after them
}

TEST_CASE("json: a byte that is not UTF-8 becomes the surrogate that stands for it") {
    CHECK(json_string("\xff") == R"("\udcff")");
    CHECK(json_string("a\xe9z") == R"("a\udce9z")");
    // A truncated sequence, an overlong one, an encoded surrogate: each byte on its own.
    CHECK(json_string("\xe2\x82") == R"("\udce2\udc82")");
    CHECK(json_string("\xc0\xaf") == R"("\udcc0\udcaf")");
    CHECK(json_string("\xed\xb3\xbf") == R"("\udced\udcb3\udcbf")");
}

TEST_CASE("json: objects and arrays keep their order, with null for what is not there") {
    JsonObject inner;
    inner.number("n", 1);
    const std::string object = JsonObject()
                                   .string("key", std::string("a\"b"))
                                   .string("none", std::nullopt)
                                   .number("big", 9007199254740991LL)
                                   .number("negative", -5)
                                   .number("missing", std::nullopt)
                                   .json("list", json_array({inner.text(), "null"}))
                                   .json("empty", json_array({}))
                                   .text();
    CHECK(object == R"({"key":"a\"b","none":null,"big":9007199254740991,"negative":-5,)"
                    R"("missing":null,"list":[{"n":1},null],"empty":[]})");
    CHECK(JsonObject().text() == "{}");
}

TEST_CASE("json: a decimal read back from Redis is a number, and anything else none") {
    CHECK(decimal_number("1795719026245771") == 1795719026245771LL);
    CHECK(decimal_number("0") == 0);
    CHECK(decimal_number("").has_value() == false);
    CHECK(decimal_number("12a").has_value() == false);
    CHECK(decimal_number(" 12").has_value() == false);
    CHECK(decimal_number("99999999999999999999").has_value() == false);
    JsonObject object;
    object.number("fence", decimal_number("42")).number("pid", decimal_number("x"));
    CHECK(object.text() == R"({"fence":42,"pid":null})");
}

TEST_CASE("json: bidirectional overrides and isolates are escaped, and read back the same") {
    CHECK(json_string("invoice\xe2\x80\xae"
                      "fdp.exe") == R"("invoice\u202efdp.exe")");
    CHECK(json_string("\xe2\x80\xaa\xe2\x81\xa9") == R"("\u202a\u2069")");
    CHECK(json_string("\xe2\x80\xaf\xe2\x81\xb0") == "\"\xe2\x80\xaf\xe2\x81\xb0\"");
}
