#include "hold/owner.hpp"

#include "base/clock.hpp"
#include "hold/pipe_chain.hpp"
#include "hold/process_stat.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <poll.h>
#include <sstream>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace redlockrun::hold {

namespace {

// The real uid of `pid`, from the first number of /proc/PID/status's Uid line.
std::optional<uid_t> real_uid_of(pid_t pid) {
    std::ifstream status(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Uid:", 0) == 0) {
            std::istringstream ids(line.substr(4));
            uid_t uid = 0;
            if (ids >> uid) {
                return uid;
            }
            break;
        }
    }
    return std::nullopt;
}

// How far up redlockrun's ancestors the script is looked for: a command substitution is one or
// two levels up. And how many pipes a chain is followed through: a pipeline inside `$(...)` has a
// few.
constexpr std::size_t max_ancestors = 16;
constexpr std::size_t max_pipes_followed = 16;

// How long the processes around redlockrun's output are given to settle (below) before what is
// seen is taken as it is: a shell that a loaded machine keeps from running for so long is rare.
constexpr Millis settle_limit{1000};
constexpr int settle_pause_ms = 2;

// One look at the processes that may read redlockrun's output.
struct Look {
    std::optional<pid_t> reader; // the nearest ancestor that reads a pipe of the chain
    // Whether what the answer rests on was seen at rest (pipe_chain.hpp): the ancestors up to the
    // reader (all of them when none reads) asleep, those in redlockrun's session, and so the
    // session's processes that read a pipe of the chain or are younger than redlockrun's parent.
    // A shell between the forks of a pipeline holds the read end that its next command is to get:
    // seen then, the `$(...)`'s subshell would pass for the reader.
    bool settled = true;
};

Look look_for_reader(PipeId output) {
    const pid_t session = ::getsid(0);
    Look look;
    std::vector<PipeUse> ancestors;
    pid_t ancestor = ::getppid();
    // pid 1 is a candidate too: in a container, the script is often the first process.
    while (ancestor >= 1 && ancestors.size() < max_ancestors) {
        ancestors.push_back(pipe_use_of(ancestor));
        if (reads_any(ancestors.back(), {output})) {
            look.reader = ancestor;
            break;
        }
        ancestor = ancestor == 1 ? 0 : parent_of(ancestor);
    }
    if (!look.reader) {
        // A pipe inside the `$(...)`: its filters are no ancestors of redlockrun, and the script
        // reads the last one's output. The costly part, and only when no ancestor reads the pipe.
        std::vector<pid_t> known{::getpid()};
        for (const PipeUse& use : ancestors) {
            known.push_back(use.pid);
        }
        const std::vector<PipeUse> others = pipe_uses_in_session(session, known);
        const std::vector<PipeId> chain = downstream_pipes(output, others, max_pipes_followed);
        // A parent in another pid namespace has no pid here: every process is then younger.
        const unsigned long long parent_start =
            ancestors.empty() ? 0 : ancestors.front().start_time;
        look.settled = chain_settled(chain, others, parent_start);
        const auto reader = std::find_if(ancestors.begin(), ancestors.end(),
                                         [&](const PipeUse& use) { return reads_any(use, chain); });
        if (reader != ancestors.end()) {
            look.reader = reader->pid;
            ancestors.erase(reader + 1, ancestors.end());
        }
    }
    for (const PipeUse& use : ancestors) {
        if (!use.asleep && ::getsid(use.pid) == session) {
            look.settled = false;
        }
    }
    return look;
}

} // namespace

pid_t parent_of(pid_t pid) {
    ProcessStat stat;
    return read_process_stat(pid, stat) ? stat.parent : 0;
}

Expected<Process, std::string> process_of(pid_t pid) {
    ProcessStat stat;
    if (pid <= 0 || !read_process_stat(pid, stat) || stat.state == 'Z' || stat.state == 'X') {
        return unexpected(fmt::format("no process has pid {}", pid));
    }
    // The keeper must be able to signal it (--on-lost term).
    if (::kill(pid, 0) != 0 && errno == EPERM) {
        return unexpected(fmt::format("process {} belongs to another user", pid));
    }
    return Process{pid, stat.start_time};
}

Expected<Process, std::string> named_owner(pid_t pid) {
    auto process = process_of(pid);
    if (!process) {
        return process;
    }
    // The keeper signals its owner on a loss, and root's kill() never fails with EPERM: the uids
    // are compared, so that root too names only a process of its own.
    const std::optional<uid_t> uid = real_uid_of(pid);
    if (!uid) {
        return unexpected(fmt::format("no process has pid {}", pid));
    }
    if (*uid != ::getuid()) {
        return unexpected(fmt::format("process {} belongs to another user", pid));
    }
    return process;
}

Expected<Process, std::string> script_owner() {
    const std::optional<PipeId> output = pipe_of_descriptor(STDOUT_FILENO);
    if (!output) {
        const pid_t parent = ::getppid();
        if (parent <= 1) {
            return unexpected(std::string("redlockrun's parent has exited already"));
        }
        return process_of(parent);
    }
    // Almost always settled at the first look: the shells are waiting by the time redlockrun
    // has started.
    const SteadyTime give_up = steady_now() + settle_limit;
    Look look = look_for_reader(*output);
    while (!look.settled && steady_now() < give_up) {
        ::poll(nullptr, 0, settle_pause_ms);
        look = look_for_reader(*output);
    }
    if (!look.reader) {
        return unexpected(std::string("none of the processes that started redlockrun reads its "
                                      "output (a pipe); name the owner with --owner PID (e.g. "
                                      "--owner $$)"));
    }
    return process_of(*look.reader);
}

bool is_running(const Process& process) {
    ProcessStat stat;
    return read_process_stat(process.pid, stat) && stat.start_time == process.start_time &&
           stat.state != 'Z' && stat.state != 'X';
}

bool still_running(pid_t pid, unsigned long long start_time) {
    if (start_time == 0) {
        ProcessStat stat;
        return read_process_stat(pid, stat) && stat.running();
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

} // namespace redlockrun::hold
