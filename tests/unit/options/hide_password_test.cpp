#include "options/hide_password.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace redlockrun;

namespace {

// argv as the kernel lays it out: the words one after another in one block, each ended by a NUL.
struct KernelArgv {
    std::string block;
    std::vector<char*> pointers;
    explicit KernelArgv(const std::vector<std::string>& words) {
        std::vector<size_t> starts;
        for (const auto& word : words) {
            starts.push_back(block.size());
            block += word;
            block += '\0';
        }
        for (size_t start : starts) {
            pointers.push_back(block.data() + start);
        }
    }
    int argc() const { return static_cast<int>(pointers.size()); }
    std::string word(size_t i) const { return std::string(pointers[i]); }
    // What ps and /proc/PID/cmdline show: the block's words, NULs at its end set aside.
    std::string shown() const {
        std::string text = block;
        while (!text.empty() && text.back() == '\0') {
            text.pop_back();
        }
        for (char& c : text) {
            c = c == '\0' ? ' ' : c;
        }
        return text;
    }
};

// argv words that are not one block (a caller's own array): each is blotted where it is.
struct ScatteredArgv {
    std::vector<std::string> words;
    std::vector<char*> pointers;
    explicit ScatteredArgv(std::vector<std::string> given) : words(std::move(given)) {
        for (auto& word : words) {
            pointers.push_back(word.data());
        }
    }
    int argc() const { return static_cast<int>(pointers.size()); }
    std::string word(size_t i) const { return std::string(pointers[i]); }
};

} // namespace

TEST_CASE("hide password: every form of --url is blotted out with one '*', and nothing else") {
    KernelArgv argv({"redlockrun", "-u", "redis://:s3cret@h", "--url=redis://alice:pw@h",
                     "-qurediss://Lone@h", "-k", "redis://:s3cret@h-not-a-url", "--", "cmd",
                     "redis://:s3cret@h"});
    const size_t size = argv.block.size();
    hide_url_passwords(argv.argc(), argv.pointers.data(),
                       {"redis://:s3cret@h", "redis://alice:pw@h", "rediss://Lone@h"});
    CHECK(argv.word(0) == "redlockrun");
    CHECK(argv.word(2) == "redis://:*@h");
    CHECK(argv.word(3) == "--url=redis://alice:*@h");
    CHECK(argv.word(4) == "-qurediss://*@h");
    CHECK(argv.word(5) == "-k");
    CHECK(argv.word(6) == "redis://:s3cret@h-not-a-url");
    CHECK(argv.word(8) == "cmd");
    // The command's own copy of the same URL is blotted in redlockrun's argv too; the command
    // gets its words from the parsed copy.
    CHECK(argv.word(9) == "redis://:*@h");
    CHECK(argv.shown() == "redlockrun -u redis://:*@h --url=redis://alice:*@h -qurediss://*@h -k "
                          "redis://:s3cret@h-not-a-url -- cmd redis://:*@h");
    // The block keeps its size (the kernel's bounds of argv), and ends in a NUL: a last byte that
    // is not one would make /proc/PID/cmdline read on into the environment.
    CHECK(argv.block.size() == size);
    CHECK(argv.block.back() == '\0');
}

TEST_CASE("hide password: what is shown does not depend on the password's length") {
    KernelArgv short_one({"redlockrun", "-u", "redis://:a@db:6379/2", "-k", "job", "true"});
    KernelArgv long_one({"redlockrun", "-u",
                         "redis://:correct%20horse%20battery%20staple@db:6379/2", "-k", "job",
                         "true"});
    hide_url_passwords(short_one.argc(), short_one.pointers.data(), {"redis://:a@db:6379/2"});
    hide_url_passwords(long_one.argc(), long_one.pointers.data(),
                       {"redis://:correct%20horse%20battery%20staple@db:6379/2"});
    CHECK(short_one.shown() == "redlockrun -u redis://:*@db:6379/2 -k job true");
    CHECK(long_one.shown() == short_one.shown());
    for (size_t i = 0; i < long_one.pointers.size(); ++i) {
        CHECK(long_one.word(i) == short_one.word(i));
    }
}

TEST_CASE("hide password: words that are not one block are blotted each in its place") {
    ScatteredArgv argv({"redlockrun", "-u", "redis://:s3cret@h:1", "-k", "j", "true"});
    hide_url_passwords(argv.argc(), argv.pointers.data(), {"redis://:s3cret@h:1"});
    CHECK(argv.word(2) == "redis://:*@h:1");
    CHECK(argv.word(3) == "-k");
    CHECK(argv.words[2] == std::string("redis://:*@h:1\0\0\0\0\0", 19));
}

TEST_CASE("hide password: a URL without a password changes nothing") {
    KernelArgv argv({"redlockrun", "-u", "redis://h:1", "-k", "j", "true"});
    const std::string before = argv.block;
    hide_url_passwords(argv.argc(), argv.pointers.data(), {"redis://h:1"});
    CHECK(argv.block == before);
    CHECK(argv.word(2) == "redis://h:1");
}
