// The main job: take the lock (waiting if asked to), run the command while holding it, release it,
// and turn all that into one exit status.
#pragma once

#include "base/log.hpp"
#include "options/options.hpp"
#include "redis/settings.hpp"

namespace redlockrun {

int run_locked(const Options& options, const redis::ConnectionSettings& settings,
               const Logger& log);

} // namespace redlockrun
