#include "options/hide_password.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace redlockrun;

namespace {

// argv as the kernel lays it out: words in writable memory.
struct Argv {
    std::vector<std::string> words;
    std::vector<char*> pointers;
    explicit Argv(std::vector<std::string> given) : words(std::move(given)) {
        for (auto& word : words) {
            pointers.push_back(word.data());
        }
    }
    std::string word(size_t i) const { return std::string(pointers[i]); }
};

} // namespace

TEST_CASE("hide password: every form of --url is blotted out, and nothing else") {
    Argv argv({"redlockrun", "-u", "redis://:s3cret@h", "--url=redis://alice:pw@h",
               "-qurediss://Lone@h", "-k", "redis://:s3cret@h-not-a-url", "--", "cmd",
               "redis://:s3cret@h"});
    hide_url_passwords(static_cast<int>(argv.pointers.size()), argv.pointers.data(),
                       {"redis://:s3cret@h", "redis://alice:pw@h", "rediss://Lone@h"});
    CHECK(argv.word(2) == "redis://:xxxxxx@h");
    CHECK(argv.word(3) == "--url=redis://alice:xx@h");
    CHECK(argv.word(4) == "-qurediss://xxxx@h");
    CHECK(argv.word(6) == "redis://:s3cret@h-not-a-url");
    CHECK(argv.word(8) == "cmd");
    // The command's own copy of the same URL is blotted in redlockrun's argv too; the command
    // gets its words from the parsed copy.
    CHECK(argv.word(9) == "redis://:xxxxxx@h");
}

TEST_CASE("hide password: a URL without a password changes nothing") {
    Argv argv({"redlockrun", "-u", "redis://h:1", "-k", "j", "true"});
    hide_url_passwords(static_cast<int>(argv.pointers.size()), argv.pointers.data(),
                       {"redis://h:1"});
    CHECK(argv.word(2) == "redis://h:1");
}
