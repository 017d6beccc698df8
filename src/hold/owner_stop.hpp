// What a hold stops before it lets the lock go (DESIGN §12): the owner's work. A run stops its
// command's process group; a hold has no child of its own, so it finds the owner's work in /proc:
//
// - while the owner runs, the owner and its descendants in its session; but an owner at a terminal
//   that ignores SIGTERM and SIGTSTP is an interactive shell with job control: only its foreground
//   job is stopped (its process group), with a warning, and the shell is spared;
// - once the owner has exited, what it left running: the processes of its process group (or of
//   its session, if it led one) that started after it and whose parent is gone (reparented to
//   init or a subreaper), with their descendants. A script's caller that goes on in the same group
//   started before the owner, and what the caller starts next has a live parent: both are spared.
//
// Each is sent SIGTERM once, and SIGKILL after --kill-after; the lock is let go only once none is
// left. A process that outlives SIGKILL (one of another user's, or stuck in the kernel) cannot be
// known to have stopped: the hold then lets the lock lapse at the end of its TTL instead.
#pragma once

#include "base/clock.hpp"
#include "base/log.hpp"
#include "hold/owner.hpp"
#include "hold/process_stat.hpp"
#include "run/stoppable.hpp"

#include <optional>
#include <set>
#include <vector>

namespace redlockrun::hold {

// What is left of an owner's work, found in a snapshot of the processes (all_processes()).
// `owner` as it was while it ran (its group and session).
// For an interactive owner, `job` is the foreground process group being stopped (0: the
// terminal's foreground now), so that a command typed after it ends is never taken for it.
std::vector<pid_t> work_of(const ProcessStat& owner, const std::vector<ProcessStat>& processes,
                           bool owner_running, bool interactive, pid_t job = 0);

class OwnerStop : public run::Stoppable {
public:
    // Reads the owner's group and session now, while it runs; no owner (--owner none): nothing to
    // stop.
    OwnerStop(const std::optional<Process>& owner, const Logger& log);

    // SIGTERM to the owner's work now, SIGKILL after kill_after. A later call changes nothing
    // while the work is being stopped, and starts again once it was found finished (the owner has
    // exited since, and left something behind).
    void terminate(Millis kill_after) override;
    bool stopping() const { return kill_at_.has_value(); }

    // While stopping: looks at the work again, signals what appeared since (SIGKILL once due).
    void on_due();
    // When on_due() should run next: none while nothing is being stopped.
    Deadline due() const;

    // The last look found nothing of the owner's work (the owner too, unless it is an interactive
    // shell).
    bool finished() const { return stopping() && idle_; }
    // Some of it outlived SIGKILL by a while: it cannot be known to stop.
    bool unstoppable() const;

private:
    std::vector<pid_t> work() const;
    bool owner_is_interactive() const;

    std::optional<ProcessStat> owner_;
    const Logger& log_;
    bool interactive_ = false;
    Deadline kill_at_;
    Deadline killed_at_;
    bool idle_ = false;
    bool first_look_done_ = false; // since terminate()
    pid_t job_ = 0;                // an interactive owner's foreground job being stopped
    std::set<pid_t> terminated_;
};

} // namespace redlockrun::hold
