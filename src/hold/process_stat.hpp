// A process's state, parent and start time, from /proc/PID/stat: what finding a hold's owner
// (owner.hpp, pipe_chain.hpp) reads of it. The start time tells it from a later process with its
// pid.
#pragma once

#include <sys/types.h>

namespace redlockrun::hold {

struct ProcessStat {
    char state = '?'; // R running, S asleep (interruptible), D uninterruptible, Z zombie...
    pid_t parent = 0;
    unsigned long long start_time = 0; // clock ticks after boot
};

// Reads /proc/PID/stat into `stat`; false if the process is gone.
bool read_process_stat(pid_t pid, ProcessStat& stat);

} // namespace redlockrun::hold
