// A value as the user wrote it, and where, so that a message about it can name the place: "--ttl",
// "$REDIS_URL", "/etc/redlockrun.conf, line 3: ttl".
#pragma once

#include <string>

namespace redlockrun {

struct Setting {
    std::string value;
    std::string origin;

    bool operator==(const Setting&) const = default;
};

} // namespace redlockrun
