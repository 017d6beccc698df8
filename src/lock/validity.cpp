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

} // namespace redlockrun::lock
