// The lock scripts' answers, as a server (or something posing as one) might send them: RESP bytes
// decoded into replies, each read as the answer of every script. A reply is either understood or
// refused with a description; whatever is understood can be described in a message.
#include "lock/answers.hpp"
#include "redis/resp.hpp"
#include "status/lock_state.hpp"
#include "status/status_json.hpp"
#include "status/status_report.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <variant>

using namespace redlockrun;
using namespace redlockrun::lock;

namespace {

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

void describe_answer(const AcquireAnswer& answer) {
    std::visit(
        [](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, Busy>) {
                check(!describe_holder(value).empty());
                check(!format_duration(value.remaining).empty());
                check(value.limit == 0 || (value.limit > 1 && value.holders >= 0));
            } else if constexpr (std::is_same_v<T, Foreign>) {
                check(!describe_foreign("job", value).empty());
            } else if constexpr (std::is_same_v<T, FencesExhausted>) {
                check(!describe_exhausted("job", "{job}:redlockrun:fence", value).empty());
            } else if constexpr (std::is_same_v<T, FenceUnreadable>) {
                check(!describe_unreadable_fence("job", "{job}:redlockrun:fence", value).empty());
            } else if constexpr (std::is_same_v<T, LimitMismatch>) {
                check(!value.held_limit.empty());
            } else if constexpr (std::is_same_v<T, Superseded>) {
                check(!describe_superseding(value).empty());
            } else {
                check(!format_duration(value.validity).empty());
            }
        },
        answer);
}

template <typename Answer>
void describe_loss(const Answer& answer) {
    if (const Lost* lost = std::get_if<Lost>(&answer)) {
        check(!describe(*lost).empty());
    }
}

void read_as_every_answer(const redis::Reply& reply) {
    if (auto acquire = decode_acquire(reply)) {
        describe_answer(*acquire);
    } else {
        check(!acquire.error().empty());
    }
    if (auto renew = decode_renew(reply)) {
        describe_loss(*renew);
    } else {
        check(!renew.error().empty());
    }
    if (auto release = decode_release(reply)) {
        describe_loss(*release);
        if (const auto* released = std::get_if<Released>(&*release);
            released && released->kept_for) {
            check(!format_duration(*released->kept_for).empty());
        }
    } else {
        check(!release.error().empty());
    }
    if (auto status = decode_status(reply)) {
        for (const auto& record : status->holders) {
            check(!describe(record.holder).empty());
        }
        const LockState state = interpret_status("job", *status);
        check(!status_line(state).empty());
        check(status_json(state).starts_with("{\"key\":\"job\","));
    } else {
        check(!status.error().empty());
    }
    if (auto broken = decode_break(reply)) {
        if (const auto* holders = std::get_if<Broken>(&*broken)) {
            for (const auto& holder : holders->holders) {
                check(!holder.holder || !describe(*holder.holder).empty());
            }
        }
    } else {
        check(!broken.error().empty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    redis::ReplyDecoder decoder;
    decoder.feed(std::string_view(reinterpret_cast<const char*>(data), size));
    for (;;) {
        auto next = decoder.next();
        if (!next || !*next) {
            return 0;
        }
        read_as_every_answer(**next);
    }
}
