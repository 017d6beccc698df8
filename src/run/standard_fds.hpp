// Standard input, output and error, made valid before redlockrun opens anything. Started with one
// of them closed (as some cron and init setups do), redlockrun would otherwise get that number for
// the signal pipe or the Redis socket, and then write its messages into it: read back as signals
// and forwarded to the command, or sent to Redis as commands.
#pragma once

namespace redlockrun::run {

// Opens /dev/null onto each of descriptors 0, 1 and 2 that is closed; the command inherits it
// there too. False if that fails (there is then nowhere to say so).
bool open_closed_standard_fds() noexcept;

} // namespace redlockrun::run
