// A directory under /tmp for one test case, removed with everything in it when the case ends.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <string>
#include <sys/stat.h>

namespace redlockrun::testing {

struct TempDir {
    std::string path;
    TempDir() {
        char name[] = "/tmp/redlockrun-test-XXXXXX";
        REQUIRE(::mkdtemp(name) != nullptr);
        path = name;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    // Writes a file in the directory and returns its path.
    std::string write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
        const std::string file = path + "/" + name;
        std::ofstream(file) << text;
        ::chmod(file.c_str(), mode);
        return file;
    }
};

} // namespace redlockrun::testing
