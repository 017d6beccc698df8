#include "run/exec_failure.hpp"

#include "base/printable.hpp"
#include "base/unique_fd.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace redlockrun::run {

namespace {

// As much of a #! line as Linux reads (BINPRM_BUF_SIZE).
constexpr size_t shebang_line_limit = 256;

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

// The start of the file, if it is a regular file redlockrun may run: only then can execve's error
// be about an interpreter rather than about the file itself.
std::optional<std::string> head_of_runnable_file(const std::string& path) {
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    struct stat status {};
    if (!file.valid() || ::fstat(file.get(), &status) != 0 || !S_ISREG(status.st_mode) ||
        ::access(path.c_str(), X_OK) != 0) {
        return std::nullopt;
    }
    std::string head(shebang_line_limit, '\0');
    ssize_t got;
    do {
        got = ::read(file.get(), head.data(), head.size());
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return std::nullopt;
    }
    head.resize(static_cast<size_t>(got));
    return head;
}

} // namespace

std::optional<std::string> shebang_interpreter(std::string_view head) {
    if (!head.starts_with("#!")) {
        return std::nullopt;
    }
    head.remove_prefix(2);
    while (!head.empty() && is_blank(head.front())) {
        head.remove_prefix(1);
    }
    size_t end = 0;
    while (end < head.size() && !is_blank(head[end]) && head[end] != '\n' && head[end] != '\0') {
        ++end;
    }
    if (end == 0) {
        return std::nullopt;
    }
    return std::string(head.substr(0, end));
}

NotRunnable describe_exec_failure(const std::string& path, int error) {
    const bool not_found = error == ENOENT || error == ENOTDIR;
    const ExitStatus status =
        not_found ? ExitStatus::command_not_found : ExitStatus::cannot_execute;
    if (not_found || error == EACCES) {
        // The file is there and may be run: what is missing, or may not be run, is its interpreter.
        const auto head = head_of_runnable_file(path);
        if (auto interpreter = head ? shebang_interpreter(*head) : std::nullopt) {
            const bool carriage_return = interpreter->ends_with('\r');
            return NotRunnable{status,
                               fmt::format("cannot run {}: bad interpreter {}: {}{}", path,
                                           printable(*interpreter), std::strerror(error),
                                           carriage_return
                                               ? " (the #! line ends in a carriage return: the "
                                                 "file has DOS line endings)"
                                               : "")};
        }
    }
    return NotRunnable{status, fmt::format("cannot run {}: {}", path, std::strerror(error))};
}

} // namespace redlockrun::run
