// The owner token: random per run, it tells this run's lock from every other holder's. It is a
// secret of sorts (whoever knows it can release the lock) and is never logged.
#pragma once

#include <string>

namespace redlockrun::lock {

// 128 random bits as 32 hex digits. Throws Fatal(os_error) if the system has no randomness.
std::string make_token();

} // namespace redlockrun::lock
