#include "base/printable.hpp"
#include "run/exec_failure.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace redlockrun;
using namespace redlockrun::run;

namespace {

// An executable file's path in its own directory, removed at the end of the test case.
struct Script {
    testing::TempDir dir;
    std::string path;
    Script(const std::string& content, mode_t mode) : path(dir.write("script", content, mode)) {}
};

} // namespace

TEST_CASE("exec failure: the interpreter of a #! line is read as the kernel reads it") {
    CHECK(shebang_interpreter("#!/bin/sh\n") == "/bin/sh");
    CHECK(shebang_interpreter("#! \t/usr/bin/env python3\n") == "/usr/bin/env");
    CHECK(shebang_interpreter("#!/bin/sh\r\necho\r\n") == "/bin/sh\r");
    CHECK(shebang_interpreter("#!/bin/sh") == "/bin/sh"); // no newline at all
    CHECK(shebang_interpreter(std::string("#!/bin/sh\0x", 11)) == "/bin/sh");
    CHECK_FALSE(shebang_interpreter("#!\n"));
    CHECK_FALSE(shebang_interpreter("#!   \n"));
    CHECK_FALSE(shebang_interpreter("echo hi\n"));
    CHECK_FALSE(shebang_interpreter("\x7f"
                                    "ELF"));
    CHECK_FALSE(shebang_interpreter(""));
}

// The interpreter's name goes through printable(), the one escaper of every message.
TEST_CASE("exec failure: control characters are shown escaped") {
    CHECK(printable("/bin/sh\r") == "/bin/sh\\r");
    CHECK(printable("a\tb\nc") == "a\\tb\\nc");
    CHECK(printable("\x1b[31m\x7f") == "\\x1b[31m\\x7f");
    CHECK(printable("back\\slash") == "back\\slash"); // left alone: see printable.hpp
    CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9"); // UTF-8 is left alone
}

TEST_CASE("exec failure: a missing interpreter is told from a missing file") {
    Script crlf("#!/bin/sh\r\necho hi\r\n", 0755);
    auto crlf_failure = describe_exec_failure(crlf.path, ENOENT);
    CHECK(crlf_failure.status == ExitStatus::command_not_found);
    CHECK(crlf_failure.message ==
          "cannot run " + crlf.path +
              ": bad interpreter /bin/sh\\r: No such file or directory (the #! line ends in a "
              "carriage return: the file has DOS line endings)");

    Script missing("#!/no/such/interpreter -x\n", 0755);
    CHECK(describe_exec_failure(missing.path, ENOENT).message ==
          "cannot run " + missing.path +
              ": bad interpreter /no/such/interpreter: No such file or directory");
    CHECK(describe_exec_failure(missing.path, EACCES).status == ExitStatus::cannot_execute);

    // A file that may not be run is refused for itself, whatever its first line says.
    Script not_executable("#!/bin/sh\n", 0644);
    CHECK(describe_exec_failure(not_executable.path, EACCES).message ==
          "cannot run " + not_executable.path + ": Permission denied");

    Script binary("\x7f"
                  "ELF",
                  0755);
    CHECK(describe_exec_failure(binary.path, ENOENT).message ==
          "cannot run " + binary.path + ": No such file or directory");
    CHECK(describe_exec_failure("/no/such/file", ENOENT).message ==
          "cannot run /no/such/file: No such file or directory");
    CHECK(describe_exec_failure("/no/such/file", ENOENT).status == ExitStatus::command_not_found);
}
