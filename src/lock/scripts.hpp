// The lock's server-side scripts, embedded from src/lock/scripts/*.lua at build time.
#pragma once

#include "redis/script.hpp"

namespace redlockrun::lock::scripts {

extern const redis::Script acquire;
extern const redis::Script renew;
extern const redis::Script release;
extern const redis::Script status;
extern const redis::Script wake;
extern const redis::Script break_lock;

} // namespace redlockrun::lock::scripts
