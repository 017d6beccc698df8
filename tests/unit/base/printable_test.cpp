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

TEST_CASE("printable: bidirectional overrides and isolates cannot reorder the line") {
    // "invoice<RLO>fdp.exe" would show as "invoiceexe.pdf".
    CHECK(printable("invoice\xe2\x80\xae"
                    "fdp.exe") == "invoice\\xe2\\x80\\xaefdp.exe");
    CHECK(printable("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad") ==
          "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad"); // LRE RLE PDF LRO
    CHECK(printable("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9") ==
          "\\xe2\\x81\\xa6\\xe2\\x81\\xa7\\xe2\\x81\\xa8\\xe2\\x81\\xa9"); // LRI RLI FSI PDI
    // Text is left alone: U+202F (a narrow no-break space), U+2070 (superscript zero), and
    // right-to-left script itself.
    CHECK(printable("\xe2\x80\xaf\xe2\x81\xb0") == "\xe2\x80\xaf\xe2\x81\xb0");
    CHECK(printable("שלום") == "שלום");
}
