// The owner of a hold (DESIGN §12): the process whose exit ends it. By default that is the script
// that ran `redlockrun --hold`, which is not always redlockrun's parent: in
// `eval "$(redlockrun --hold 2>/dev/null)"` bash runs redlockrun in a subshell that exits as soon
// as redlockrun does, and in `eval "$(redlockrun --hold | tee log)"` the subshell that runs the
// pipeline does. The rule that finds the script in every common form: when redlockrun's stdout
// is a pipe, the owner is the nearest ancestor that reads it (the shell that reads the command
// substitution), or else the nearest that reads a pipe further down the chain (pipe_chain.hpp);
// when no ancestor reads any, there is no telling, and `--owner` must name the owner. When stdout
// is no pipe, the owner is the parent.
#pragma once

#include "base/expected.hpp"
#include "base/unique_fd.hpp"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace redlockrun::hold {

// A process, told from any later process that reuses its pid by its start time.
struct Process {
    pid_t pid = 0;
    unsigned long long start_time = 0; // clock ticks after boot, from /proc/PID/stat

    bool operator==(const Process&) const = default;
};

// The process `pid`, if it exists and has not exited (a zombie has); a sentence otherwise.
Expected<Process, std::string> process_of(pid_t pid);

// The process that `--owner PID` names: as process_of(), and only one of the caller's own real
// uid, even for root, as the keeper signals it on a loss.
Expected<Process, std::string> named_owner(pid_t pid);

// The script that ran redlockrun, by the rule above.
Expected<Process, std::string> script_owner();

// Whether `process` is still running (the same process, not a zombie).
bool is_running(const Process& process);
// The same for a pid whose start time may be unknown (0: a hold's record written by an earlier
// version): its pid alone tells then.
bool still_running(pid_t pid, unsigned long long start_time);

// Tells when a process exits: a pidfd that poll() finds readable then (Linux 5.3 and later), or,
// where the kernel has none, a check every `poll_period` of its /proc entry.
class ExitWatch {
public:
    explicit ExitWatch(const Process& process);

    // The descriptor to poll for POLLIN, or -1 when the process must be checked by time.
    int fd() const { return pidfd_.get(); }
    bool exited() const;
    static constexpr int poll_period_ms = 200;

private:
    Process process_;
    UniqueFd pidfd_;
};

// The ancestors come from /proc; this reads one process's parent pid.
pid_t parent_of(pid_t pid);

} // namespace redlockrun::hold
