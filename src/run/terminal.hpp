// Interactive use: when redlockrun runs in the foreground of a terminal, the command gets the
// terminal as its own foreground process group, as a shell would give it. Then the command can read
// the terminal, Ctrl-C and Ctrl-\ reach the command (not redlockrun), and Ctrl-Z stops both.
#pragma once

#include "base/unique_fd.hpp"

#include <sys/types.h>

namespace redlockrun::run {

class Terminal {
public:
    // The controlling terminal if redlockrun is in its foreground process group; otherwise an
    // inactive Terminal (cron, CI, a background job, no terminal at all).
    static Terminal foreground();

    bool active() const { return fd_.valid(); }
    int fd() const { return fd_.get(); }

    // Makes process group pgid the foreground one. Safe to call from a background group.
    void give_to(pid_t pgid) const;
    // Takes the terminal back for redlockrun's own process group.
    void take_back() const;

private:
    UniqueFd fd_;
    pid_t own_group_ = 0;
};

} // namespace redlockrun::run
