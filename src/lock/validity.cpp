#include "lock/validity.hpp"

#include <algorithm>

namespace redlockrun::lock {

Millis drift_margin(Millis ttl) {
    return ttl / 50 + Millis{50};
}

SteadyTime validity_deadline(SteadyTime sent, Millis validity, Millis ttl) {
    return sent + std::min(ttl, validity) - drift_margin(ttl);
}

SteadyTime renewal_due(SteadyTime sent, Millis validity, Millis ttl) {
    return sent + std::min(ttl, validity) / 3;
}

SteadyTime fresh_until(SteadyTime sent, Millis validity, Millis ttl) {
    return sent + std::min(ttl, validity) - ttl * 2 / 3;
}

BeforeStart before_start(SteadyTime now, SteadyTime sent, Millis validity, Millis ttl, bool renewed,
                         bool may_wait_more) {
    const SteadyTime usable_until = validity_deadline(sent, validity, ttl);
    if (now < (renewed ? usable_until : fresh_until(sent, validity, ttl))) {
        return BeforeStart::start;
    }
    if (renewed && now >= usable_until && !may_wait_more) {
        return BeforeStart::give_back;
    }
    return BeforeStart::renew_first;
}

} // namespace redlockrun::lock
