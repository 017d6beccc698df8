#include "base/fatal.hpp"
#include "full_descriptor_table.hpp"
#include "options/config_file.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace redlockrun;

namespace {

std::function<const char*(const char*)> environment(std::map<std::string, std::string>& vars) {
    return [&vars](const char* name) -> const char* {
        auto found = vars.find(name);
        return found == vars.end() ? nullptr : found->second.c_str();
    };
}

using redlockrun::testing::TempDir;

int status_of(const std::string& path, bool required, std::string& message) {
    try {
        read_config_file(path, required);
    } catch (const Fatal& error) {
        message = error.what();
        return error.status();
    }
    return 0;
}

} // namespace

TEST_CASE("config file: the user's file is under $XDG_CONFIG_HOME, else ~/.config") {
    std::map<std::string, std::string> vars{{"HOME", "/home/u"}};
    auto places = config_places("/etc/redlockrun.conf", environment(vars));
    CHECK(places.system_file == "/etc/redlockrun.conf");
    CHECK(places.user_file == "/home/u/.config/redlockrun/config");
    vars["XDG_CONFIG_HOME"] = "/x/conf";
    CHECK(config_places("/s", environment(vars)).user_file == "/x/conf/redlockrun/config");
    // A relative (or empty) $XDG_CONFIG_HOME is ignored, as the specification says.
    vars["XDG_CONFIG_HOME"] = "relative";
    CHECK(config_places("/s", environment(vars)).user_file == "/home/u/.config/redlockrun/config");
    vars.clear();
    CHECK_FALSE(config_places("/s", environment(vars)).user_file.has_value());
}

TEST_CASE("config file: read, missing, and refused") {
    TempDir dir;
    const std::string path = dir.path + "/config";
    std::ofstream(path) << "ttl = 10s\n";
    ::chmod(path.c_str(), 0640);
    auto file = read_config_file(path, false);
    REQUIRE(file);
    CHECK(file->text == "ttl = 10s\n");
    CHECK(file->permissions == 0640);

    // A default file that does not exist is fine; a named one is not.
    CHECK_FALSE(read_config_file(dir.path + "/none", false));
    CHECK_FALSE(read_config_file(path + "/below-a-file", false));
    std::string message;
    CHECK(status_of(dir.path + "/none", true, message) == 64);
    CHECK(message ==
          "cannot read the config file " + dir.path + "/none: No such file or directory");

    // A FIFO with no writer is refused at once, not waited on.
    const std::string fifo = dir.path + "/fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(status_of(fifo, false, message) == 64);
    CHECK(message == "the config file " + fifo + " is not a regular file; it is not read");
    CHECK(status_of(dir.path, true, message) == 64);
    CHECK(status_of("/dev/zero", true, message) == 64);

    // /dev/null is an empty config.
    auto null = read_config_file("/dev/null", true);
    REQUIRE(null);
    CHECK(null->text.empty());

    std::ofstream(dir.path + "/big") << std::string(70000, '#');
    CHECK(status_of(dir.path + "/big", true, message) == 64);
    CHECK(message.find("is larger than 65536 bytes") != std::string::npos);
}

TEST_CASE("config file: a full descriptor table is an operating-system error, not a usage error") {
    TempDir dir;
    const std::string path = dir.path + "/config";
    std::ofstream(path) << "ttl = 10s\n";
    std::string message;
    int status = 0;
    {
        const redlockrun::testing::FullDescriptorTable full;
        status = status_of(path, true, message);
    }
    CHECK(status == 71);
    CHECK(message == "cannot read the config file " + path + ": Too many open files");
}
