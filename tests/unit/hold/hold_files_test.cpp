#include "hold/hold_files.hpp"
#include "hold/owner.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

namespace redlockrun::hold {

TEST_CASE("a hold's record reads back as written, whatever bytes its key holds") {
    HoldRecord record;
    record.key = std::string("de%ploy\nx=1\t\x1b\x7f\xff", 15);
    record.fence = "1795717296995829";
    record.owner = 4242;
    record.owner_start = 123456789;
    record.keeper = 4343;
    record.keeper_start = 987654321;
    record.token = "0123456789abcdef";
    record.unit = "s";
    record.mode = "shared";
    record.taken_ms = 1795717296995;
    record.ended = "lost";
    record.ended_ms = 1795717297995;
    record.why = "the lock key was deleted";
    const std::string text = record_text(record);
    CHECK(text.find("key=de%25ploy%0Ax=1%09%1B%7F\xff\n") != std::string::npos);
    const auto read = parse_record(text);
    REQUIRE(read.has_value());
    CHECK(*read == record);
}

TEST_CASE("a record that is cut short, or not a record, is refused") {
    HoldRecord record;
    record.key = "job";
    const std::string text = record_text(record);
    CHECK(parse_record(text).has_value());
    CHECK_FALSE(parse_record(text.substr(0, text.size() - 1)).has_value()); // no final newline
    CHECK_FALSE(parse_record("fence=1\n").has_value());                     // no key
    CHECK_FALSE(parse_record("key=a%4\n").has_value());                     // a broken escape
    CHECK_FALSE(parse_record("key=a%zz\n").has_value());
    CHECK_FALSE(parse_record("key=a\nowner=12x\n").has_value());
    CHECK_FALSE(parse_record("key\n").has_value());
    CHECK(parse_record("key=a\nlater_field=1\n").has_value()); // a later version's field
}

TEST_CASE("a record is written whole, and read back") {
    testing::TempDir dir;
    HoldRecord record;
    record.key = "job";
    record.keeper = 7;
    const std::string path = dir.path + "/hold.0123456789abcdef0123456789abcdef";
    REQUIRE(write_record(path, record) == 0);
    const auto read = read_record(path);
    REQUIRE(read.has_value());
    CHECK(*read == record);
    CHECK_FALSE(read_record(dir.path + "/missing").has_value());
    CHECK(handles_in(dir.path) == std::vector<std::string>{path});
}

TEST_CASE("the folder of holds is made closed to others, and an open one is refused") {
    testing::TempDir dir;
    const std::string runtime = dir.path;
    const auto getenv = [&](const char* name) -> const char* {
        return std::string_view(name) == "XDG_RUNTIME_DIR" ? runtime.c_str() : nullptr;
    };
    const auto folder = holds_folder(getenv);
    REQUIRE(folder.has_value());
    CHECK(*folder == runtime + "/redlockrun");
    struct stat info {};
    REQUIRE(::stat(folder->c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0700);

    const HoldPaths paths = new_hold_paths(*folder);
    CHECK(paths.socket == paths.handle + ".sock");
    const auto parsed = paths_of_handle(paths.handle);
    REQUIRE(parsed.has_value());
    CHECK(parsed->handle == paths.handle);

    ::chmod(folder->c_str(), 0755);
    CHECK_FALSE(holds_folder(getenv).has_value());
    const auto refused = paths_of_handle(paths.handle);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().find("cannot be trusted") != std::string::npos);
}

TEST_CASE("only what --hold issues is a handle") {
    for (const char* handle : {"", "hold.0123456789abcdef0123456789abcdef", "/tmp/x",
                               "/tmp/hold.0123", "/tmp/hold.0123456789ABCDEF0123456789ABCDEF",
                               "/tmp/hold.0123456789abcdef0123456789abcdeg",
                               "/tmp/hold.0123456789abcdef0123456789abcdef.sock"}) {
        CAPTURE(handle);
        const auto paths = paths_of_handle(handle);
        REQUIRE_FALSE(paths.has_value());
        CHECK(paths.error().find("is not a hold's handle") != std::string::npos);
    }
}

TEST_CASE("a process is told from a later one with its pid by its start time") {
    const auto self = process_of(::getpid());
    REQUIRE(self.has_value());
    CHECK(is_running(*self));
    Process other = *self;
    other.start_time += 1;
    CHECK_FALSE(is_running(other));
    CHECK_FALSE(process_of(0).has_value());
    CHECK(parent_of(::getpid()) == ::getppid());
}

} // namespace redlockrun::hold
