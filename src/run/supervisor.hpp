// Watches the running command: forwards signals to its process group, reaps it, and keeps job
// control working when it runs in the foreground of a terminal.
#pragma once

#include "log.hpp"
#include "run/signals.hpp"
#include "run/terminal.hpp"

#include <optional>
#include <sys/types.h>

namespace redlockrun::run {

class Supervisor {
public:
    Supervisor(pid_t child, const Terminal& terminal, const Logger& log);

    // Handles one signal from the SignalPipe: SIGCHLD reaps, the forwarded ones go to the
    // command's process group.
    void on_signal(int signal_number);

    // Handles signals until the command has exited; returns its wait status. The terminal, if the
    // command had it, is redlockrun's again afterwards.
    int wait(SignalPipe& signals);

    bool exited() const { return wait_status_.has_value(); }
    pid_t pid() const { return child_; }

private:
    void reap();
    // The command was stopped from the terminal (Ctrl-Z): stop redlockrun too, so the shell sees
    // the job stopped, and resume the command when redlockrun is continued.
    void follow_stop();

    pid_t child_;
    const Terminal& terminal_;
    const Logger& log_;
    std::optional<int> wait_status_;
};

} // namespace redlockrun::run
