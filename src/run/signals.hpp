// Signals reach redlockrun through a self-pipe: the handlers only write the signal number to it,
// and the event loop reads it like any other file descriptor (STYLE rule 6).
#pragma once

#include "base/unique_fd.hpp"

#include <array>
#include <csignal>
#include <vector>

namespace redlockrun::run {

// What redlockrun forwards to the command's process group while it runs, and what ends a wait.
inline constexpr std::array<int, 6> forwarded_signals = {SIGTERM, SIGINT,  SIGHUP,
                                                         SIGQUIT, SIGUSR1, SIGUSR2};

class SignalPipe {
public:
    // Catches the forwarded signals (except those redlockrun was started with ignored, as under
    // nohup) and SIGCHLD, and ignores SIGPIPE. One instance at a time.
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
    static constexpr std::array<int, forwarded_signals.size() + 2> changed_signals = {
        SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE};

    UniqueFd read_end_;
    UniqueFd write_end_;
    std::array<struct sigaction, changed_signals.size()> saved_{};
    sigset_t startup_mask_{};
};

} // namespace redlockrun::run
