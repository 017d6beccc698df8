#include "run/command_path.hpp"

#include <fmt/core.h>

#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace redlockrun::run {

namespace {

enum class Candidate { missing, not_executable, runnable };

Candidate check(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        return Candidate::missing;
    }
    if (!S_ISREG(info.st_mode)) {
        return S_ISDIR(info.st_mode) ? Candidate::missing : Candidate::not_executable;
    }
    return ::access(path.c_str(), X_OK) == 0 ? Candidate::runnable : Candidate::not_executable;
}

std::string default_path() {
    size_t size = ::confstr(_CS_PATH, nullptr, 0);
    if (size == 0) {
        return "/usr/bin:/bin";
    }
    std::string path(size, '\0');
    ::confstr(_CS_PATH, path.data(), size);
    path.resize(size - 1);
    return path;
}

} // namespace

Expected<std::string, NotRunnable> find_command(const std::string& name, const char* path_env) {
    if (name.empty()) {
        return unexpected(NotRunnable{ExitStatus::command_not_found, "the command name is empty"});
    }
    if (name.find('/') != std::string::npos) {
        // execve will say what is wrong with it, if anything.
        return name;
    }
    const std::string search = path_env ? path_env : default_path();
    bool found_but_not_executable = false;
    std::string_view rest = search;
    for (;;) {
        const auto colon = rest.find(':');
        std::string_view directory = rest.substr(0, colon);
        std::string candidate = directory.empty() ? name : std::string(directory) + "/" + name;
        switch (check(candidate)) {
        case Candidate::runnable:
            return candidate;
        case Candidate::not_executable:
            found_but_not_executable = true;
            break;
        case Candidate::missing:
            break;
        }
        if (colon == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(colon + 1);
    }
    if (found_but_not_executable) {
        return unexpected(NotRunnable{ExitStatus::cannot_execute,
                                      fmt::format("cannot run {}: Permission denied", name)});
    }
    return unexpected(
        NotRunnable{ExitStatus::command_not_found, fmt::format("{}: command not found", name)});
}

} // namespace redlockrun::run
