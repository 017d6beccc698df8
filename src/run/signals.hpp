// Signals reach redlockrun through a self-pipe: the handlers only write the signal number to it,
// and the event loop reads it like any other file descriptor (STYLE rule 6).
#pragma once

#include "base/unique_fd.hpp"

#include <csignal>
#include <vector>

namespace redlockrun::run {

// Whether a signal asks redlockrun to stop: every asynchronous signal whose default action ends a
// process and that can be caught (TERM, INT, HUP, QUIT, USR1, USR2, ALRM, VTALRM, PROF, XCPU,
// XFSZ, IO, PWR, STKFLT, and the real-time signals). Caught, they end a wait for the lock (and
// --hold says so to eval) and a hold's keeper, and a run forwards them to its command: none of
// them may end redlockrun while a lock or a command is left behind. Not SIGPIPE (ignored: a write
// to a closed pipe is an error to report), nor the faults (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS),
// which are redlockrun's own and must end it as they do.
bool asks_to_stop(int signal_number);

// Those signals, in increasing order: SIGRTMIN and SIGRTMAX are known only at run time.
std::vector<int> stopping_signals();

class SignalPipe {
public:
    // Catches the signals that ask to stop (except those redlockrun was started with ignored, as
    // under nohup) and SIGCHLD, and ignores SIGPIPE. One instance at a time.
    SignalPipe();
    ~SignalPipe();
    SignalPipe(const SignalPipe&) = delete;
    SignalPipe& operator=(const SignalPipe&) = delete;

    int fd() const { return read_end_.get(); }

    // The signals that arrived since the last call, in order.
    std::vector<int> drain();

    // Between fork and exec, in the child: gives back the dispositions and signal mask redlockrun
    // was started with. Async-signal-safe.
    void restore_in_child() const noexcept;

    // Blocks every signal until destroyed, so that no handler runs in a child between fork and
    // restore_in_child().
    class BlockAll {
    public:
        BlockAll();
        ~BlockAll();
        BlockAll(const BlockAll&) = delete;
        BlockAll& operator=(const BlockAll&) = delete;

    private:
        sigset_t previous_;
    };

private:
    // The signals whose dispositions it changed, each with the disposition it replaced.
    std::vector<int> changed_signals_;
    std::vector<struct sigaction> saved_;
    UniqueFd read_end_;
    UniqueFd write_end_;
    sigset_t startup_mask_{};
};

} // namespace redlockrun::run
