#include "hold/pipe_chain.hpp"

#include "hold/process_stat.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

struct CloseFolder {
    void operator()(DIR* folder) const { ::closedir(folder); }
};
using Folder = std::unique_ptr<DIR, CloseFolder>;

Folder open_folder(const std::string& path) {
    return Folder(::opendir(path.c_str()));
}

// What the path `path` (a /proc/PID/fd/N link, which stat follows) is, if it is a pipe or FIFO.
// `known` is cleared when that cannot be told.
std::optional<PipeId> pipe_at(const std::string& path, bool& known) {
    struct stat object {};
    if (::stat(path.c_str(), &object) != 0) {
        known = false;
        return std::nullopt;
    }
    if (!S_ISFIFO(object.st_mode)) {
        return std::nullopt;
    }
    return PipeId{object.st_dev, object.st_ino};
}

// The access mode (O_RDONLY, O_WRONLY, O_RDWR) of the descriptor `fd` of `pid`, -1 if unknown:
// fdinfo's flags are octal, the access mode their low bits.
int access_mode(pid_t pid, const char* fd) {
    std::ifstream info(fmt::format("/proc/{}/fdinfo/{}", pid, fd));
    std::string name;
    std::string value;
    while (info >> name >> value) {
        if (name == "flags:") {
            return static_cast<int>(std::strtoul(value.c_str(), nullptr, 8) & O_ACCMODE);
        }
    }
    return -1;
}

bool contains(const std::vector<PipeId>& pipes, const PipeId& pipe) {
    return std::find(pipes.begin(), pipes.end(), pipe) != pipes.end();
}

} // namespace

std::optional<PipeId> pipe_of_descriptor(int fd) {
    struct stat object {};
    if (::fstat(fd, &object) != 0 || !S_ISFIFO(object.st_mode)) {
        return std::nullopt;
    }
    return PipeId{object.st_dev, object.st_ino};
}

PipeUse pipe_use_of(pid_t pid) {
    PipeUse use{pid, {}, std::nullopt};
    ProcessStat stat;
    if (read_process_stat(pid, stat)) {
        use.asleep = stat.state == 'S';
        use.start_time = stat.start_time;
    }
    const std::string fd_folder = fmt::format("/proc/{}/fd", pid);
    const Folder folder = open_folder(fd_folder);
    if (!folder) {
        use.known = errno == ENOENT; // a process that is gone uses nothing
        return use;
    }
    while (const dirent* entry = ::readdir(folder.get())) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        const auto pipe = pipe_at(fd_folder + "/" + entry->d_name, use.known);
        if (!pipe) {
            continue;
        }
        const int mode = access_mode(pid, entry->d_name);
        if (mode == O_RDONLY) {
            use.reads.push_back(*pipe);
        } else if (mode == -1) {
            use.known = false;
        } else if (std::string_view(entry->d_name) == "1") {
            use.output = *pipe;
        }
    }
    return use;
}

std::vector<PipeUse> pipe_uses_in_session(pid_t session, const std::vector<pid_t>& except) {
    std::vector<PipeUse> uses;
    const Folder proc = open_folder("/proc");
    if (!proc) {
        return uses;
    }
    while (const dirent* entry = ::readdir(proc.get())) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        // Only the session's processes have their descriptors read: getsid() is one system call,
        // a process's descriptors a file each.
        if (*end != '\0' || pid <= 0 || ::getsid(static_cast<pid_t>(pid)) != session ||
            std::find(except.begin(), except.end(), pid) != except.end()) {
            continue;
        }
        PipeUse use = pipe_use_of(static_cast<pid_t>(pid));
        if (!use.reads.empty() || !use.known || !use.asleep) {
            uses.push_back(std::move(use));
        }
    }
    return uses;
}

std::vector<PipeId> downstream_pipes(PipeId first, const std::vector<PipeUse>& processes,
                                     std::size_t limit) {
    std::vector<PipeId> chain{first};
    for (std::size_t next = 0; next < chain.size() && chain.size() < limit; ++next) {
        for (const PipeUse& use : processes) {
            if (use.output && contains(use.reads, chain[next]) && !contains(chain, *use.output)) {
                chain.push_back(*use.output);
                if (chain.size() == limit) {
                    break;
                }
            }
        }
    }
    return chain;
}

bool reads_any(const PipeUse& use, const std::vector<PipeId>& pipes) {
    return std::any_of(use.reads.begin(), use.reads.end(),
                       [&](const PipeId& pipe) { return contains(pipes, pipe); });
}

bool chain_settled(const std::vector<PipeId>& pipes, const std::vector<PipeUse>& processes,
                   unsigned long long since) {
    return std::all_of(processes.begin(), processes.end(), [&](const PipeUse& use) {
        return use.asleep || (use.known && use.start_time < since && !reads_any(use, pipes));
    });
}

} // namespace redlockrun::hold
