// Watches the running command: forwards signals to its process group, reaps it, keeps job control
// working when it runs in the foreground of a terminal, and gives a Watch (the lock keeper) its
// turns. All in one poll() loop on the signal pipe; no threads.
#pragma once

#include "base/clock.hpp"
#include "base/log.hpp"
#include "run/signals.hpp"
#include "run/stoppable.hpp"
#include "run/terminal.hpp"

#include <optional>
#include <sys/types.h>

namespace redlockrun::run {

class Supervisor;

// Something with a timetable of its own while the command runs.
class Watch {
public:
    virtual ~Watch() = default;
    // When on_due() should run next; nothing: never.
    virtual Deadline next_due() const = 0;
    // Runs once next_due() has passed. May block (bounded), and may call Supervisor::terminate().
    virtual void on_due(Supervisor& supervisor) = 0;
};

class Supervisor : public Stoppable {
public:
    Supervisor(pid_t child, const Terminal& terminal, const Logger& log);

    // Handles one signal from the SignalPipe: SIGCHLD reaps, the forwarded ones go to the
    // command's process group.
    void on_signal(int signal_number);

    // Handles signals and the watch until the command has exited; returns its wait status. The
    // terminal, if the command had it, is redlockrun's again afterwards.
    int wait(SignalPipe& signals, Watch* watch);

    // SIGTERM to the command's process group now, SIGKILL after kill_after if it is still there.
    void terminate(Millis kill_after) override;

    bool exited() const { return wait_status_.has_value(); }

private:
    void signal_group(int signal_number) const;
    void reap();
    // The command was stopped from the terminal (Ctrl-Z): stop redlockrun too, so the shell sees
    // the job stopped, and resume the command when redlockrun is continued.
    void follow_stop();

    pid_t child_;
    const Terminal& terminal_;
    const Logger& log_;
    std::optional<int> wait_status_;
    bool terminating_ = false;
    Deadline kill_at_; // SIGKILL is due, after terminate()
};

} // namespace redlockrun::run
