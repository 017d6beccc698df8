// A --release whose keeper does not answer (stopped, or starved past --release's 10 s): the keeper
// is ended, and the --release releases the lock in Redis itself, with the holder's token and mode
// that the hold's record keeps, on a connection of its own. The connection settings are found as
// for any run (--url, $REDLOCKRUN_URL, the config files, $REDIS_URL), so a --release must be
// given the Redis its --hold was.
#pragma once

#include "base/log.hpp"
#include "hold/hold_files.hpp"
#include "redis/settings.hpp"

namespace redlockrun::hold {

// Releases the hold's lock if Redis still holds it for the hold: 0 then (no one else can have had
// it: the token still held the key), `lost_exit_code` if it was lost meanwhile, 69 if Redis cannot
// be reached. Each said in a message.
int release_without_keeper(const HoldRecord& record, const redis::ConnectionSettings& settings,
                           int lost_exit_code, const Logger& log);

} // namespace redlockrun::hold
