#include "run/child.hpp"
#include "run/command_path.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace redlockrun;
using namespace redlockrun::run;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        char name[] = "/tmp/redlockrun-path-XXXXXX";
        REQUIRE(::mkdtemp(name) != nullptr);
        path = name;
    }
    ~TempDir() { fs::remove_all(path); }
    fs::path file(const std::string& name, mode_t mode) const {
        fs::path p = path / name;
        std::ofstream(p) << "#!/bin/sh\n";
        ::chmod(p.c_str(), mode);
        return p;
    }
};

} // namespace

TEST_CASE("command path: PATH is searched in order") {
    TempDir first, second;
    second.file("tool", 0755);
    const std::string path = first.path.string() + ":" + second.path.string();
    auto found = find_command("tool", path.c_str());
    REQUIRE(found);
    CHECK(*found == (second.path / "tool").string());

    first.file("tool", 0755);
    CHECK(*find_command("tool", path.c_str()) == (first.path / "tool").string());
}

TEST_CASE("command path: not executable, missing, directories, names with a slash") {
    TempDir dir;
    dir.file("plain", 0644);
    fs::create_directory(dir.path / "subdir");
    const std::string path = dir.path.string();

    auto plain = find_command("plain", path.c_str());
    REQUIRE_FALSE(plain);
    CHECK(plain.error().status == ExitStatus::cannot_execute);

    auto missing = find_command("no-such-tool", path.c_str());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().status == ExitStatus::command_not_found);
    CHECK(missing.error().message == "no-such-tool: command not found");

    CHECK_FALSE(find_command("subdir", path.c_str()));
    CHECK(*find_command("./anything", path.c_str()) == "./anything");
    CHECK_FALSE(find_command("", path.c_str()));
}

TEST_CASE("command path: an unset PATH means the system default") {
    auto sh = find_command("sh", nullptr);
    REQUIRE(sh);
    CHECK(sh->find("/sh") != std::string::npos);
}

TEST_CASE("child environment: overrides replace variables of the same name") {
    std::string a = "A=1", key = "REDLOCKRUN_KEY=old", b = "B=x=y";
    char* environ_in[] = {a.data(), key.data(), b.data(), nullptr};
    const std::vector<std::string> overrides{"REDLOCKRUN_KEY=job", "REDLOCKRUN_FENCE=7"};
    const auto env = child_environment(environ_in, overrides);
    REQUIRE(!env.empty());
    CHECK(env.back() == nullptr);
    CHECK(std::vector<std::string>(env.begin(), env.end() - 1) ==
          std::vector<std::string>{"A=1", "B=x=y", "REDLOCKRUN_KEY=job", "REDLOCKRUN_FENCE=7"});
    CHECK(child_environment(nullptr, {}) == std::vector<char*>{nullptr});
}
