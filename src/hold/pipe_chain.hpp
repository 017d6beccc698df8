// The pipes a process's output flows through (DESIGN §12): from a pipe to the processes that read
// it, to the pipes that those write their standard output to, and on. `--hold` follows them to
// find the script that reads `$(redlockrun --hold | tee log)`: the filter that reads redlockrun's
// own pipe is no ancestor of redlockrun, the script reads the pipe at the chain's end.
#pragma once

#include <cstddef>
#include <optional>
#include <sys/types.h>
#include <vector>

namespace redlockrun::hold {

// A pipe or FIFO, told by the inode that its descriptors refer to.
struct PipeId {
    dev_t device = 0;
    ino_t inode = 0;

    bool operator==(const PipeId&) const = default;
};

// What one process does with pipes: those it has open for reading, and the one its standard
// output writes to, if it is a pipe.
// `asleep`: it was in an interruptible sleep (reading, waiting for a child) when its descriptors
// were read, so they were not about to change. A shell between the forks of a pipeline holds the
// read end that its next command is to get; a child between its fork and its redirections has
// its shell's descriptors, and while it moves one (dup2, then close) a look at its descriptors
// one by one may find it at neither place. Both are running.
// `known`: all of its descriptors could be read: not those of another user's process, unless
// root reads.
struct PipeUse {
    pid_t pid = 0;
    std::vector<PipeId> reads;
    std::optional<PipeId> output;
    bool asleep = false;
    bool known = true;
    unsigned long long start_time = 0; // clock ticks after boot
};

// The pipe that the descriptor `fd` of this process is, if it is one.
std::optional<PipeId> pipe_of_descriptor(int fd);

// How the process `pid` uses pipes, from /proc/PID/fd and fdinfo: nothing for a process that is
// gone, or whose descriptors this user may not read.
PipeUse pipe_use_of(pid_t pid);

// How each process of the session `session` uses pipes, but those of `except`, and those asleep
// that read no pipe:
// the processes that a script's `$(...)` runs are in its session, and nothing that is not can be
// part of it. One pass over /proc.
std::vector<PipeUse> pipe_uses_in_session(pid_t session, const std::vector<pid_t>& except);

// `first`, then the output of each process that reads a pipe found so far, and so on, breadth
// first: at most `limit` pipes, so that a cycle or a long pipeline costs a bounded time.
std::vector<PipeId> downstream_pipes(PipeId first, const std::vector<PipeUse>& processes,
                                     std::size_t limit);

// Whether `use` reads any of `pipes`.
bool reads_any(const PipeUse& use, const std::vector<PipeId>& pipes);

// Whether the chain `pipes` that `processes` make can be trusted: whether each of them was asleep
// when it was read that reads one of its pipes, or whose descriptors could not all be read, or
// that started at `since` or later (a filter of redlockrun's pipeline may be one of those:
// `since` is the start time of redlockrun's parent, which no filter of it is older than).
bool chain_settled(const std::vector<PipeId>& pipes, const std::vector<PipeUse>& processes,
                   unsigned long long since);

} // namespace redlockrun::hold
