#include "status/glob.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace redlockrun;

TEST_CASE("glob: stars and question marks") {
    CHECK(glob_match("*", ""));
    CHECK(glob_match("*", "anything/at.all"));
    CHECK(glob_match("backup:*", "backup:{tenant1}"));
    CHECK_FALSE(glob_match("backup:*", "report:{tenant1}"));
    CHECK(glob_match("*:{tenant1}", "report:{tenant1}"));
    CHECK(glob_match("j?b", "job"));
    CHECK_FALSE(glob_match("j?b", "jb"));
    CHECK(glob_match("a*b*c", "aXXbYYc"));
    CHECK(glob_match("a**c", "ac"));
    CHECK_FALSE(glob_match("a*b*c", "aXXbYY"));
    CHECK_FALSE(glob_match("", "x"));
    CHECK(glob_match("", ""));
    // Unlike fnmatch(3) with FNM_PATHNAME or FNM_PERIOD: nothing is special about '/' or '.'.
    CHECK(glob_match("*", ".hidden"));
    CHECK(glob_match("a?b", "a/b"));
    CHECK_FALSE(glob_match("Job", "job"));
}

TEST_CASE("glob: classes, ranges and negation") {
    CHECK(glob_match("job[12]", "job1"));
    CHECK_FALSE(glob_match("job[12]", "job3"));
    CHECK(glob_match("job[0-9]", "job7"));
    CHECK(glob_match("job[9-0]", "job7")); // a range either way round
    CHECK_FALSE(glob_match("job[0-9]", "jobx"));
    CHECK(glob_match("job[^0-9]", "jobx"));
    CHECK_FALSE(glob_match("job[^0-9]", "job5"));
    CHECK(glob_match("job[!x]", "job!")); // '!' is an ordinary byte here
    CHECK_FALSE(glob_match("job[]", "job]"));
    CHECK(glob_match("job[a", "joba")); // a class that is not closed ends with the pattern
    CHECK(glob_match("x[\\]]y", "x]y"));
}

TEST_CASE("glob: a backslash makes the next byte literal") {
    CHECK(glob_match("a\\*b", "a*b"));
    CHECK_FALSE(glob_match("a\\*b", "aXb"));
    CHECK(glob_match("\\[tag\\]", "[tag]"));
    CHECK(glob_match("a\\?", "a?"));
    CHECK_FALSE(glob_match("a\\?", "ab"));
    CHECK(glob_match("end\\", "end\\"));
}

TEST_CASE("glob: any bytes, and no exponential cost") {
    CHECK(glob_match(std::string("a\0*", 3), std::string("a\0\xff\xfe", 4)));
    CHECK(glob_match("[\x80-\xff]", "\xe9"));
    const std::string many_a(4000, 'a');
    CHECK_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*b", many_a));
    CHECK(glob_match("*a*a*a*a*a*a*a*a*a*a*", many_a));
}
