// What /proc says of a process: its state, its place among the others (parent, process group,
// session, controlling terminal and that terminal's foreground group) and its start time, which
// tells it from a later process with its pid; and the signals it ignores. What finding a hold's
// owner (owner.hpp, pipe_chain.hpp) and stopping its work (owner_stop.hpp) read of it.
#pragma once

#include <optional>
#include <sys/types.h>
#include <vector>

namespace redlockrun::hold {

struct ProcessStat {
    pid_t pid = 0;
    char state = '?'; // R running, S asleep (interruptible), D uninterruptible, Z zombie...
    pid_t parent = 0;
    pid_t group = 0;
    pid_t session = 0;
    int terminal = 0; // 0: none
    pid_t foreground_group = 0;
    unsigned long long start_time = 0; // clock ticks after boot

    bool running() const { return state != 'Z' && state != 'X'; }
};

// Reads /proc/PID/stat into `stat`; false if the process is gone.
bool read_process_stat(pid_t pid, ProcessStat& stat);

// The same, as a value; none if the process is gone.
std::optional<ProcessStat> stat_of(pid_t pid);

// Every process this one can see, read once: for finding what a hold's owner leaves behind.
std::vector<ProcessStat> all_processes();

// Whether `pid` ignores `signal_number` (/proc/PID/status's SigIgn): an interactive shell ignores
// SIGTERM, and, with job control, SIGTSTP.
bool ignores(pid_t pid, int signal_number);

} // namespace redlockrun::hold
