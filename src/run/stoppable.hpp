// What a lost lock stops: the command's process group for a run, the owner of a hold.
#pragma once

#include "base/clock.hpp"

namespace redlockrun::run {

class Stoppable {
public:
    virtual ~Stoppable() = default;
    // SIGTERM now, SIGKILL after kill_after if it is still there.
    virtual void terminate(Millis kill_after) = 0;
};

} // namespace redlockrun::run
