// --break: an operator ends a stuck lock (DESIGN §12) without learning its keys' layout. Every
// holder's claim ends at once; each holder learns of it at its next renewal, which stops its
// command (or a hold's owner) with 76 and a message naming the break, who broke it and why.
#pragma once

#include "base/log.hpp"
#include "redis/settings.hpp"

#include <string>

namespace redlockrun {

// Prints what was broken, one line per holder (or that the lock was free), and returns 0; a key
// that is not a timestamp lock is left alone: 65.
int break_lock(const std::string& key, const std::string& reason,
               const redis::ConnectionSettings& settings, const Logger& log);

} // namespace redlockrun
