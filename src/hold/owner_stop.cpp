#include "hold/owner_stop.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

// How long what outlives SIGKILL is waited for before the hold gives up on knowing it stopped.
constexpr Millis kill_grace{2000};
// How often the processes are looked at again while they are being stopped.
constexpr Millis look_again{100};

using ByPid = std::map<pid_t, const ProcessStat*>;

bool in_scope(const ProcessStat& owner, const ProcessStat& process) {
    const bool led_session = owner.session == owner.pid;
    return process.group == owner.group || (led_session && process.session == owner.session);
}

// Whether `process` is what the exited owner left: started after it, in its group (or session),
// with no parent left but init or a process outside the session (a subreaper), or with a parent
// that is itself left over.
bool left_over(const ProcessStat& owner, const ProcessStat& process, const ByPid& by_pid,
               std::map<pid_t, bool>& known, int depth = 0) {
    if (auto found = known.find(process.pid); found != known.end()) {
        return found->second;
    }
    bool result = false;
    if (depth < 64 && process.running() && in_scope(owner, process) &&
        process.start_time >= owner.start_time) {
        const auto parent = by_pid.find(process.parent);
        result = process.parent <= 1 || parent == by_pid.end() ||
                 parent->second->session != owner.session ||
                 left_over(owner, *parent->second, by_pid, known, depth + 1);
    }
    known[process.pid] = result;
    return result;
}

} // namespace

std::vector<pid_t> work_of(const ProcessStat& owner, const std::vector<ProcessStat>& processes,
                           bool owner_running, bool interactive, pid_t job) {
    ByPid by_pid;
    for (const auto& process : processes) {
        by_pid[process.pid] = &process;
    }
    std::vector<pid_t> work;
    const pid_t self = ::getpid();
    if (owner_running && interactive) {
        // The foreground job, as the owner's terminal has it now; none while the shell is.
        const auto now = by_pid.find(owner.pid);
        const pid_t foreground =
            job != 0 ? job : (now == by_pid.end() ? 0 : now->second->foreground_group);
        for (const auto& process : processes) {
            if (foreground > 0 && foreground != owner.group && process.group == foreground &&
                process.running() && process.pid != self) {
                work.push_back(process.pid);
            }
        }
        return work;
    }
    if (owner_running) {
        // The owner and its descendants: a parent's pid comes before... not always, so by levels.
        std::vector<pid_t> level{owner.pid};
        work.push_back(owner.pid);
        for (int depth = 0; depth < 64 && !level.empty(); ++depth) {
            std::vector<pid_t> next;
            for (const auto& process : processes) {
                if (process.running() && process.session == owner.session && process.pid != self &&
                    std::find(level.begin(), level.end(), process.parent) != level.end()) {
                    next.push_back(process.pid);
                }
            }
            work.insert(work.end(), next.begin(), next.end());
            level = std::move(next);
        }
        return work;
    }
    std::map<pid_t, bool> known;
    for (const auto& process : processes) {
        if (process.pid != self && process.pid != owner.pid &&
            left_over(owner, process, by_pid, known)) {
            work.push_back(process.pid);
        }
    }
    return work;
}

OwnerStop::OwnerStop(const std::optional<Process>& owner, const Logger& log) : log_(log) {
    if (owner) {
        owner_ = stat_of(owner->pid);
        if (owner_ && owner_->start_time != owner->start_time) {
            owner_.reset();
        }
    }
}

bool OwnerStop::owner_is_interactive() const {
    // A shell at a terminal that ignores SIGTERM and, having job control, SIGTSTP and SIGTTOU: not
    // a script that ignores SIGTERM alone, which is stopped with SIGKILL after --kill-after. Asked
    // when the stop begins, not when the hold is taken: a shell busy with the `$(...)` of --hold
    // may have other dispositions for that moment.
    return owner_ && owner_->terminal != 0 &&
           is_running(Process{owner_->pid, owner_->start_time}) && ignores(owner_->pid, SIGTERM) &&
           ignores(owner_->pid, SIGTSTP) && ignores(owner_->pid, SIGTTOU);
}

std::vector<pid_t> OwnerStop::work() const {
    if (!owner_) {
        return {};
    }
    return work_of(*owner_, all_processes(), is_running(Process{owner_->pid, owner_->start_time}),
                   interactive_, job_);
}

void OwnerStop::terminate(Millis kill_after) {
    if (kill_at_ && !idle_) {
        return;
    }
    interactive_ = owner_is_interactive();
    kill_at_ = steady_now() + kill_after;
    killed_at_.reset();
    idle_ = false;
    first_look_done_ = false;
    job_ = 0;
    on_due();
}

Deadline OwnerStop::due() const {
    if (!kill_at_ || idle_) {
        return std::nullopt;
    }
    const SteadyTime soon = steady_now() + look_again;
    return killed_at_ ? soon : std::min(*kill_at_, soon);
}

void OwnerStop::on_due() {
    // Once nothing was left, nothing more is stopped until terminate() starts again: the next
    // command an interactive owner runs (a --release) is the person's, after the warning.
    if (!kill_at_ || idle_) {
        return;
    }
    const auto pids = work();
    if (interactive_ && !first_look_done_ && !pids.empty()) {
        job_ = stat_of(pids.front()).value_or(ProcessStat{}).group;
    }
    idle_ = pids.empty();
    if (idle_) {
        return; // and so for no owner (--owner none), whose work is nothing
    }
    const bool kill = steady_now() >= *kill_at_;
    if (kill && !killed_at_) {
        killed_at_ = steady_now();
    }
    if (interactive_ && terminated_.empty()) {
        log_.error("stopping the foreground job of the shell that holds the lock (pid {}); the "
                   "shell itself is spared",
                   owner_->pid);
    }
    // SIGTERM once each: a second would cut short a script's own clean-up. While the owner runs,
    // only to what ran when the stop began: what its trap runs then (a --release reporting the
    // loss) is its clean-up. Once it has exited, to each of its leftovers as it is found.
    const bool owner_gone = !is_running(Process{owner_->pid, owner_->start_time});
    for (pid_t pid : pids) {
        if (kill) {
            ::kill(pid, SIGKILL);
        } else if ((owner_gone || !first_look_done_) && terminated_.insert(pid).second) {
            ::kill(pid, SIGTERM);
        }
    }
    first_look_done_ = true;
}

bool OwnerStop::unstoppable() const {
    return killed_at_ && !idle_ && steady_now() >= *killed_at_ + kill_grace;
}

} // namespace redlockrun::hold
