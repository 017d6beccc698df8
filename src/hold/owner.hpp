// The owner of a hold (DESIGN §12): the process whose exit ends it. By default that is the script
// that ran `redlockrun --hold`, which is not always redlockrun's parent: in
// `eval "$(redlockrun --hold 2>/dev/null)"` bash runs redlockrun in a subshell that exits as soon
// as redlockrun does. The rule that finds the script in every common form: when redlockrun's stdout
// is a pipe, the owner is the nearest ancestor that holds the pipe's read end (the shell that reads
// the command substitution); otherwise, and when no ancestor reads it (`redlockrun --hold | tee`),
// the parent.
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

// The ancestors' and the pipe's details come from /proc; this reads one process's parent pid.
pid_t parent_of(pid_t pid);

// What /proc/PID/stat says of a process's place among the others: its parent, process group,
// session, controlling terminal (0: none) and that terminal's foreground process group.
struct ProcessStat {
    pid_t pid = 0;
    char state = '?';
    pid_t parent = 0;
    pid_t group = 0;
    pid_t session = 0;
    int terminal = 0;
    pid_t foreground_group = 0;
    unsigned long long start_time = 0;

    bool running() const { return state != 'Z' && state != 'X'; }
    Process process() const { return Process{pid, start_time}; }
};

// One process's stat; none if it is gone.
std::optional<ProcessStat> stat_of(pid_t pid);

// Every process this one can see, read once: for finding what a hold's owner leaves behind.
std::vector<ProcessStat> all_processes();

// Whether `pid` ignores `signal_number` (/proc/PID/status's SigIgn): an interactive shell ignores
// SIGTERM, and, with job control, SIGTSTP.
bool ignores(pid_t pid, int signal_number);

} // namespace redlockrun::hold
