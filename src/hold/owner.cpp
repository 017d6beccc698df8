#include "hold/owner.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

// The fields of /proc/PID/stat after the command name, which may hold spaces and parentheses: the
// state, the parent pid, the process group, the session, the terminal, its foreground group, then
// (after thirteen more) the start time.
bool read_stat(pid_t pid, ProcessStat& stat) {
    std::ifstream file(fmt::format("/proc/{}/stat", pid));
    std::string text;
    if (!file || !std::getline(file, text)) {
        return false;
    }
    const auto name_end = text.rfind(')');
    if (name_end == std::string::npos) {
        return false;
    }
    std::istringstream fields(text.substr(name_end + 1));
    std::string skipped;
    fields >> stat.state >> stat.parent >> stat.group >> stat.session >> stat.terminal >>
        stat.foreground_group;
    for (int i = 0; i < 13 && fields; ++i) { // flags ... itrealvalue
        fields >> skipped;
    }
    fields >> stat.start_time;
    stat.pid = pid;
    return static_cast<bool>(fields);
}

// "pipe:[INODE]" for a descriptor that is a pipe, "" otherwise.
std::string link_of(const std::string& path) {
    char target[256];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

// Whether `pid` has a descriptor open for reading on the pipe that `pipe_link` names.
bool reads_pipe(pid_t pid, const std::string& pipe_link) {
    const std::string fd_folder = fmt::format("/proc/{}/fd", pid);
    DIR* folder = ::opendir(fd_folder.c_str());
    if (folder == nullptr) {
        return false;
    }
    bool found = false;
    while (const dirent* entry = ::readdir(folder)) {
        if (entry->d_name[0] == '.' || link_of(fd_folder + "/" + entry->d_name) != pipe_link) {
            continue;
        }
        // The read end is open O_RDONLY: fdinfo's flags are octal, the access mode their low bits.
        std::ifstream info(fmt::format("/proc/{}/fdinfo/{}", pid, entry->d_name));
        std::string name;
        std::string flags;
        while (info >> name >> flags) {
            if (name == "flags:") {
                found = (std::stoul(flags, nullptr, 8) & O_ACCMODE) == O_RDONLY;
                break;
            }
        }
        if (found) {
            break;
        }
    }
    ::closedir(folder);
    return found;
}

} // namespace

pid_t parent_of(pid_t pid) {
    ProcessStat stat;
    return read_stat(pid, stat) ? stat.parent : 0;
}

Expected<Process, std::string> process_of(pid_t pid) {
    ProcessStat stat;
    if (pid <= 0 || !read_stat(pid, stat) || stat.state == 'Z' || stat.state == 'X') {
        return unexpected(fmt::format("no process has pid {}", pid));
    }
    // The keeper must be able to signal it (--on-lost term), so it must be this user's.
    if (::kill(pid, 0) != 0 && errno == EPERM) {
        return unexpected(fmt::format("process {} belongs to another user", pid));
    }
    return Process{pid, stat.start_time};
}

Expected<Process, std::string> script_owner() {
    const pid_t parent = ::getppid();
    struct stat out {};
    if (::fstat(STDOUT_FILENO, &out) == 0 && S_ISFIFO(out.st_mode)) {
        const std::string pipe_link = link_of("/proc/self/fd/1");
        pid_t ancestor = parent;
        // A bounded walk: a command substitution is one or two levels up. pid 1 is a candidate
        // too: in a container, the script is often the first process.
        for (int level = 0; level < 16 && ancestor >= 1 && !pipe_link.empty(); ++level) {
            if (reads_pipe(ancestor, pipe_link)) {
                return process_of(ancestor);
            }
            if (ancestor == 1) {
                break;
            }
            ancestor = parent_of(ancestor);
        }
    }
    if (parent <= 1) {
        return unexpected(std::string("redlockrun's parent has exited already"));
    }
    return process_of(parent);
}

bool is_running(const Process& process) {
    ProcessStat stat;
    return read_stat(process.pid, stat) && stat.start_time == process.start_time &&
           stat.state != 'Z' && stat.state != 'X';
}

bool still_running(pid_t pid, unsigned long long start_time) {
    if (start_time == 0) {
        ProcessStat stat;
        return read_stat(pid, stat) && stat.running();
    }
    return is_running(Process{pid, start_time});
}

ExitWatch::ExitWatch(const Process& process) : process_(process) {
#ifdef SYS_pidfd_open
    const long fd = ::syscall(SYS_pidfd_open, process.pid, 0);
    if (fd >= 0) {
        pidfd_.reset(static_cast<int>(fd));
        // The pid may have been reused between reading its start time and opening it.
        if (!is_running(process)) {
            pidfd_.reset();
        }
    }
#endif
}

bool ExitWatch::exited() const {
    if (pidfd_.valid()) {
        pollfd readable{pidfd_.get(), POLLIN, 0};
        return ::poll(&readable, 1, 0) > 0;
    }
    return !is_running(process_);
}

std::optional<ProcessStat> stat_of(pid_t pid) {
    ProcessStat stat;
    return read_stat(pid, stat) ? std::optional(stat) : std::nullopt;
}

std::vector<ProcessStat> all_processes() {
    std::vector<ProcessStat> processes;
    DIR* folder = ::opendir("/proc");
    if (folder == nullptr) {
        return processes;
    }
    while (const dirent* entry = ::readdir(folder)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        ProcessStat stat;
        if (pid > 0 && *end == '\0' && read_stat(static_cast<pid_t>(pid), stat)) {
            processes.push_back(stat);
        }
    }
    ::closedir(folder);
    return processes;
}

bool ignores(pid_t pid, int signal_number) {
    std::ifstream status(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(status, line)) {
        if (line.starts_with("SigIgn:")) {
            const unsigned long long ignored = std::stoull(line.substr(7), nullptr, 16);
            return (ignored >> (signal_number - 1) & 1U) != 0;
        }
    }
    return false;
}

} // namespace redlockrun::hold
