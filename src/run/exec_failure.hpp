// What to tell the user when the command could not be exec'd. execve says "No such file or
// directory" both for a file that is missing and for a script whose #! interpreter is (a typo, or
// a line ending in a carriage return written on Windows): the second is told apart, as shells do,
// and the interpreter named.
#pragma once

#include "run/command_path.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace redlockrun::run {

// The interpreter a #! line names, as the kernel reads it: after "#!" and any blanks, up to the
// next blank, newline or NUL (so a carriage return belongs to it). Nothing if `head` does not start
// with "#!" or names no interpreter.
std::optional<std::string> shebang_interpreter(std::string_view head);

// "cannot run PATH: bad interpreter /bin/sh\r: No such file or directory (...)", with 127 for a
// missing file or interpreter (as bash, dash and env(1) give) and 126 for one that may not be
// run. `error` is execve's errno.
NotRunnable describe_exec_failure(const std::string& path, int error);

} // namespace redlockrun::run
