#include "base/printable.hpp"

#include <doctest/doctest.h>

using redlockrun::printable;

TEST_CASE("printable: ordinary text is left alone") {
    CHECK(printable("deploy-prod") == "deploy-prod");
    CHECK(printable("jobs:{tenant1}") == "jobs:{tenant1}");
    CHECK(printable("C:\\dir and spaces") == "C:\\dir and spaces");
    CHECK(printable("Grüße, 日本, 🔒") == "Grüße, 日本, 🔒");
    CHECK(printable("") == "");
}

TEST_CASE("printable: control characters cannot start a line or drive a terminal") {
    CHECK(printable("1\nfoo") == "1\\nfoo");
    CHECK(printable("a\r\tb") == "a\\r\\tb");
    CHECK(printable("\x1b[31mred") == "\\x1b[31mred");
    CHECK(printable(std::string_view("a\0b", 3)) == "a\\x00b");
    CHECK(printable("del\x7f") == "del\\x7f");
    // C1 controls, written in UTF-8: U+009B is a CSI for some terminals.
    CHECK(printable("\xc2\x9b"
                    "2J") == "\\xc2\\x9b2J");
    CHECK(printable("\xc2\x85") == "\\xc2\\x85");
    CHECK(printable("\xc2\xa0") == "\xc2\xa0"); // U+00A0 is text
}

TEST_CASE("printable: bytes that are not UTF-8 are escaped one by one") {
    CHECK(printable("\x9b") == "\\x9b");
    CHECK(printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(printable("\xe6\x97") == "\\xe6\\x97");          // cut short
    CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");          // overlong '/'
    CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80"); // a UTF-16 surrogate
    CHECK(printable("ok\xe6") == "ok\\xe6");
}
