// A lock's state as one JSON object on one line (--status --json, and each line of --list --json).
// The field names are part of redlockrun's interface, documented in the man page: new fields may be
// added, none is renamed or removed. Every field is always there; null stands for unknown or not
// applicable. Times are Unix times in ms by the server's clock, durations are ms.
#pragma once

#include "status/lock_state.hpp"

#include <string>

namespace redlockrun {

std::string status_json(const LockState& state);

} // namespace redlockrun
