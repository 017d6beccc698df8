#include "lock/answers.hpp"

#include <fmt/core.h>

#include <charconv>

namespace redlockrun::lock {

namespace {

using redis::Reply;

// Reads the string elements of a script's array reply; integers are accepted where the script
// returns numbers.
class Fields {
public:
    explicit Fields(const Reply& reply) : reply_(reply) {}

    bool has(size_t count) const {
        return reply_.kind == Reply::Kind::array && reply_.elements.size() >= count;
    }
    size_t size() const { return reply_.kind == Reply::Kind::array ? reply_.elements.size() : 0; }
    std::string text(size_t i) const {
        const Reply* element = reply_.at(i);
        if (element == nullptr) {
            return {};
        }
        if (auto s = element->as_string()) {
            return std::string(*s);
        }
        if (element->kind == Reply::Kind::integer) {
            return std::to_string(element->integer);
        }
        return {};
    }
    std::optional<long long> number(size_t i) const {
        const Reply* element = reply_.at(i);
        return element ? element->as_integer() : std::nullopt;
    }

private:
    const Reply& reply_;
};

// A decimal integer written by a script; none for '' (not there) or anything else.
std::optional<long long> optional_number(const std::string& text) {
    long long number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return number;
}

// A duration in ms written by a script; none for '' (not known), anything negative or not a number.
std::optional<Millis> optional_millis(const std::string& text) {
    auto number = optional_number(text);
    if (!number || *number < 0) {
        return std::nullopt;
    }
    return Millis{*number};
}

std::string unexpected_reply(const char* script, const Reply& reply) {
    return fmt::format("unexpected answer from the {} script: {}", script, reply.describe());
}

std::optional<Holder> holder_of(const std::string& host, const std::string& pid) {
    if (host.empty() && pid.empty()) {
        return std::nullopt;
    }
    return Holder{host, pid};
}

std::optional<Lost> decode_lost(const Fields& fields) {
    const std::string reason = fields.text(1);
    Lost lost;
    if (reason == "gone") {
        lost.reason = LossReason::gone;
    } else if (reason == "deleted") {
        lost.reason = LossReason::deleted;
    } else if (reason == "changed") {
        lost.reason = LossReason::changed;
    } else if (reason == "taken") {
        lost.reason = LossReason::taken;
        lost.taker = holder_of(fields.text(2), fields.text(3));
    } else if (reason == "expired") {
        lost.reason = LossReason::expired;
    } else if (reason == "record") {
        lost.reason = LossReason::record;
    } else if (reason == "broken") {
        lost.reason = LossReason::broken;
        lost.broken_by = fields.text(2);
        lost.broken_because = fields.text(3);
    } else {
        return std::nullopt;
    }
    return lost;
}

} // namespace

Expected<AcquireAnswer, std::string> decode_acquire(const Reply& reply) {
    Fields fields(reply);
    const std::string verdict = fields.text(0);
    if (verdict == "granted" && fields.has(4)) {
        if (auto validity = fields.number(3)) {
            Granted granted{fields.text(1), fields.text(2), Millis{*validity},
                            fields.has(5) ? fields.number(4) : std::nullopt, std::nullopt};
            if (fields.has(6) && !fields.text(5).empty()) {
                const auto slot = optional_number(fields.text(5));
                if (!slot || *slot < 0 || *slot >= 1000000) {
                    return unexpected(unexpected_reply("acquire", reply));
                }
                granted.slot = static_cast<int>(*slot);
            }
            return AcquireAnswer{std::move(granted)};
        }
    } else if (verdict == "busy" && fields.has(5)) {
        if (auto remaining = fields.number(1)) {
            Busy busy;
            busy.remaining = Millis{*remaining};
            busy.holder = holder_of(fields.text(2), fields.text(3));
            busy.fence = fields.text(4);
            busy.recheck = busy.remaining;
            if (fields.has(8)) {
                const std::string limit_text = fields.text(5);
                busy.shared = limit_text == "shared";
                auto limit = limit_text.empty() ? std::optional<long long>{0}
                             : busy.shared      ? std::optional<long long>{shared_cap}
                                                : optional_number(limit_text);
                auto holders = fields.number(6);
                auto recheck = fields.number(7);
                if (!limit || !holders || !recheck || *limit == 1 || *limit < 0 ||
                    *limit > 1000000 || *holders < 0 || *holders > 1000000) {
                    return unexpected(unexpected_reply("acquire", reply));
                }
                busy.limit = static_cast<int>(*limit);
                busy.holders = static_cast<int>(*holders);
                busy.recheck = Millis{*recheck};
            }
            if (fields.has(9)) {
                auto ahead = fields.number(8);
                // Waiters ahead keep free places, or a free lock: never a full semaphore.
                if (!ahead || *ahead < 0 || *ahead > 1000000 ||
                    (*ahead > 0 && busy.limit > 0 && busy.holders >= busy.limit)) {
                    return unexpected(unexpected_reply("acquire", reply));
                }
                busy.queued_ahead = static_cast<int>(*ahead);
            }
            if (fields.has(12)) {
                busy.held_for = optional_millis(fields.text(9));
                busy.renew_every = optional_millis(fields.text(10));
                busy.ended_ago = optional_millis(fields.text(11));
            }
            if (fields.has(13)) {
                busy.note = fields.text(12);
            }
            if (fields.has(14)) {
                busy.queued = fields.text(13) == "1";
            }
            if (fields.has(16) && !fields.text(14).empty()) {
                const auto median = optional_number(fields.text(14));
                const auto count = optional_number(fields.text(15));
                if (!median || *median < 0 || !count || *count < 1 || *count > 1000) {
                    return unexpected(unexpected_reply("acquire", reply));
                }
                busy.took_median = Millis{*median};
                busy.took_count = static_cast<int>(*count);
            }
            if (fields.has(19) && !fields.text(16).empty()) {
                const auto position = optional_number(fields.text(16));
                const auto in_line = optional_number(fields.text(17));
                if (!position || !in_line || *position < 1 || *position > *in_line ||
                    *in_line > 1000000 || !optional_number(fields.text(18))) {
                    return unexpected(unexpected_reply("acquire", reply));
                }
                busy.position = static_cast<int>(*position);
                busy.in_line = static_cast<int>(*in_line);
                busy.since_us = fields.text(18);
            }
            return AcquireAnswer{busy};
        }
    } else if (verdict == "superseded" && fields.has(4)) {
        return AcquireAnswer{Superseded{holder_of(fields.text(1), fields.text(2)), fields.text(3)}};
    } else if (verdict == "mismatch" && fields.has(2)) {
        const auto held = optional_number(fields.text(1));
        if (fields.text(1) == "shared" || (held && *held > 1)) {
            return AcquireAnswer{LimitMismatch{fields.text(1)}};
        }
    } else if (verdict == "foreign" && fields.has(2)) {
        return AcquireAnswer{Foreign{fields.text(1)}};
    } else if (verdict == "exhausted" && fields.has(2)) {
        return AcquireAnswer{FencesExhausted{fields.text(1)}};
    } else if (verdict == "unreadable_fence" && fields.has(2)) {
        return AcquireAnswer{FenceUnreadable{fields.text(1)}};
    }
    return unexpected(unexpected_reply("acquire", reply));
}

Expected<RenewAnswer, std::string> decode_renew(const Reply& reply) {
    Fields fields(reply);
    const std::string verdict = fields.text(0);
    if (verdict == "renewed" && fields.has(3)) {
        if (auto validity = fields.number(2)) {
            return RenewAnswer{Renewed{fields.text(1), Millis{*validity},
                                       fields.has(4) ? fields.number(3) : std::nullopt}};
        }
    } else if (verdict == "lost" && fields.has(4)) {
        if (auto lost = decode_lost(fields)) {
            lost->server_ms = fields.has(5) ? fields.number(4) : std::nullopt;
            return RenewAnswer{*lost};
        }
    }
    return unexpected(unexpected_reply("renew", reply));
}

Expected<ReleaseAnswer, std::string> decode_release(const Reply& reply) {
    Fields fields(reply);
    const std::string verdict = fields.text(0);
    if (verdict == "released" && fields.has(3) && fields.text(1) == "kept") {
        if (auto kept = fields.number(2)) {
            return ReleaseAnswer{Released{Millis{*kept}}};
        }
    } else if (verdict == "released" && fields.has(1)) {
        return ReleaseAnswer{Released{}};
    }
    if (verdict == "lost" && fields.has(4)) {
        if (auto lost = decode_lost(fields)) {
            return ReleaseAnswer{*lost};
        }
    }
    return unexpected(unexpected_reply("release", reply));
}

Expected<BreakAnswer, std::string> decode_break(const Reply& reply) {
    Fields fields(reply);
    const std::string verdict = fields.text(0);
    if (verdict == "foreign" && fields.has(2)) {
        return BreakAnswer{Foreign{fields.text(1)}};
    }
    constexpr size_t per_holder = 4;
    const auto count = fields.number(1);
    if (verdict != "broken" || !count || *count < 0 ||
        fields.size() != 2 + static_cast<size_t>(*count) * per_holder) {
        return unexpected(unexpected_reply("break", reply));
    }
    Broken broken;
    for (size_t i = 2; i < fields.size(); i += per_holder) {
        broken.holders.push_back({holder_of(fields.text(i), fields.text(i + 1)), fields.text(i + 2),
                                  fields.text(i + 3)});
    }
    return BreakAnswer{std::move(broken)};
}

Expected<StatusSnapshot, std::string> decode_status(const Reply& reply) {
    // {now_ms, type, value, owner value, last fence, limit, took median, took longest, took count,
    // n, then 11 fields per holder, then w, and 8 fields per waiter}
    constexpr size_t header = 10;
    constexpr size_t per_holder = 11;
    constexpr size_t per_waiter = 8;
    Fields fields(reply);
    const auto now = fields.number(0);
    const auto count = fields.number(header - 1);
    const std::string limit_text = fields.text(5);
    const bool shared = limit_text == "shared";
    const auto limit = shared ? std::optional<long long>{shared_cap} : optional_number(limit_text);
    const bool counted = count && *count >= 0 && *count <= 1000000;
    const size_t waiters_at = counted ? header + static_cast<size_t>(*count) * per_holder : 0;
    // -1: not a count.
    const long long waiting =
        counted && fields.has(waiters_at + 1) ? fields.number(waiters_at).value_or(-1) : -1;
    if (!fields.has(header) || !now || !counted || waiting < 0 || waiting > 1000000 ||
        fields.size() != waiters_at + 1 + static_cast<size_t>(waiting) * per_waiter ||
        (!limit_text.empty() && (!limit || *limit < 1))) {
        return unexpected(unexpected_reply("status", reply));
    }
    StatusSnapshot snapshot{*now,
                            fields.text(1),
                            fields.text(2),
                            fields.text(3),
                            fields.text(4),
                            limit,
                            shared,
                            {},
                            {},
                            0,
                            {},
                            {}};
    if (!fields.text(6).empty()) {
        const auto median = optional_number(fields.text(6));
        const auto longest = optional_number(fields.text(7));
        const auto took_count = optional_number(fields.text(8));
        if (!median || !longest || !took_count || *median < 0 || *longest < *median ||
            *took_count < 1 || *took_count > 1000) {
            return unexpected(unexpected_reply("status", reply));
        }
        snapshot.took_median_ms = *median;
        snapshot.took_longest_ms = *longest;
        snapshot.took_count = static_cast<int>(*took_count);
    }
    for (size_t i = header; i < waiters_at; i += per_holder) {
        snapshot.holders.push_back(
            HolderRecord{Holder{fields.text(i), fields.text(i + 1)}, fields.text(i + 2),
                         optional_number(fields.text(i + 3)), optional_number(fields.text(i + 4)),
                         optional_number(fields.text(i + 5)), optional_number(fields.text(i + 6)),
                         optional_number(fields.text(i + 7)), fields.text(i + 8),
                         fields.text(i + 9) == "1", fields.text(i + 10)});
    }
    for (size_t i = waiters_at + 1; i < fields.size(); i += per_waiter) {
        snapshot.waiters.push_back(
            WaiterRecord{Holder{fields.text(i), fields.text(i + 1)}, fields.text(i + 2),
                         optional_number(fields.text(i + 3)), optional_number(fields.text(i + 4)),
                         fields.text(i + 5), fields.text(i + 6) == "1", fields.text(i + 7) == "1"});
    }
    return snapshot;
}

std::string describe(const Holder& holder) {
    return fmt::format("{} pid {}", holder.host.empty() ? "?" : holder.host,
                       holder.pid.empty() ? "?" : holder.pid);
}

std::string describe_note(const std::string& note) {
    return note.empty() ? std::string() : fmt::format(" (note: {})", note);
}

std::string describe_superseding(const Superseded& superseded) {
    return (superseded.by ? describe(*superseded.by) : std::string("a waiter that left no name")) +
           describe_note(superseded.note);
}

std::string describe_took(const std::string& key, const Busy& busy) {
    if (!busy.took_median) {
        return {};
    }
    return fmt::format("; holds of {} took {} (median of the last {})", key,
                       format_duration(*busy.took_median), busy.took_count);
}

std::string describe_holder(const Busy& busy) {
    if (busy.shared) {
        std::string text =
            fmt::format("{} shared {}", busy.holders, busy.holders == 1 ? "holder" : "holders");
        if (busy.holder && !busy.note.empty()) {
            text += fmt::format(" (the note of {}, whose claim ends first: {})",
                                describe(*busy.holder), busy.note);
        }
        return text;
    }
    if (busy.limit > 1) {
        std::string text = fmt::format("{} {} of a --limit {} semaphore", busy.holders,
                                       busy.holders == 1 ? "holder" : "holders", busy.limit);
        // The reply names one holder only: its note is not the others'.
        if (busy.holder && !busy.note.empty()) {
            text += fmt::format(" (the note of {}, whose slot frees first: {})",
                                describe(*busy.holder), busy.note);
        }
        return text;
    }
    return busy.holder ? describe(*busy.holder) + describe_note(busy.note)
                       : "a client of the classic algorithm";
}

std::string describe_tenure(std::optional<Millis> held_for, std::optional<Millis> renew_every,
                            std::optional<Millis> ended_ago, Millis remaining) {
    const std::string since =
        held_for ? fmt::format(" since {} ago", format_duration(*held_for)) : std::string();
    if (ended_ago) {
        return fmt::format(", whose command ended {} ago; --min-hold lets the lock go in {}",
                           format_duration(*ended_ago), format_duration(remaining));
    }
    if (renew_every && renew_every->count() > 0) {
        return fmt::format("{}, renewed every {}", since, format_duration(*renew_every));
    }
    if (renew_every) {
        return fmt::format("{}, until it expires in {} (not renewed)", since,
                           format_duration(remaining));
    }
    if (held_for) {
        // A record that does not say whether its holder renews (an older redlockrun, which did).
        return fmt::format("{}, valid for another {} unless renewed", since,
                           format_duration(remaining));
    }
    return fmt::format(", until it expires in {}", format_duration(remaining));
}

std::string describe_busy(const std::string& key, const Busy& busy, const std::string& holder) {
    if (busy.queued_ahead == 0) {
        if (busy.limit > 1) {
            // The holder whose slot frees first: how long it has held says little about the
            // others, so only whether that slot is renewed or when it frees.
            if (!busy.ended_ago && busy.renew_every && busy.renew_every->count() > 0) {
                return fmt::format("{} is held by {}, renewed every {}", key, holder,
                                   format_duration(*busy.renew_every));
            }
            return fmt::format("{} is held by {}; the first slot frees in {}", key, holder,
                               format_duration(busy.remaining));
        }
        return fmt::format(
            "{} is held by {}{}", key, holder,
            describe_tenure(busy.held_for, busy.renew_every, busy.ended_ago, busy.remaining));
    }
    // The time left is when the first waiter ahead would lose its place, not when a slot frees:
    // it says nothing a reader could use, so it is left out.
    const std::string waiters_ahead = busy.queued_ahead == 1
                                          ? std::string("a waiter")
                                          : fmt::format("the {} waiters", busy.queued_ahead);
    if (busy.limit == 0 || (busy.shared && busy.holders == 0)) {
        return fmt::format("{} is free, but kept for {} queued before this run", key,
                           waiters_ahead);
    }
    if (busy.shared) {
        return fmt::format("{} is held by {}, and {} queued before this run must have it first",
                           key, holder, waiters_ahead);
    }
    const int free = busy.limit - busy.holders;
    const std::string waiters = busy.queued_ahead == 1
                                    ? std::string("a waiter")
                                    : fmt::format("the {} waiters", busy.queued_ahead);
    const std::string slots =
        free == 1 ? std::string("its free slot is") : fmt::format("its {} free slots are", free);
    if (busy.holders == 0) {
        return fmt::format("{} is a --limit {} semaphore that nobody holds, but {} kept for {} "
                           "queued before this run",
                           key, busy.limit, slots, waiters);
    }
    return fmt::format("{} is held by {}, and {} kept for {} queued before this run", key, holder,
                       slots, waiters);
}

std::string describe(const Lost& lost) {
    switch (lost.reason) {
    case LossReason::gone:
        return "the lock expired (or was deleted)";
    case LossReason::deleted:
        return "the lock key was deleted";
    case LossReason::changed:
        return "the lock key was overwritten by another client";
    case LossReason::taken:
        return lost.taker
                   ? fmt::format("another redlockrun holds it now ({})", describe(*lost.taker))
                   : std::string("another redlockrun holds it now");
    case LossReason::expired:
        return "the lock's timestamp had passed";
    case LossReason::record:
        return "its owner record was overwritten by another client";
    case LossReason::broken:
        return lost.broken_because.empty()
                   ? fmt::format("it was broken by {} (redlockrun --break)", lost.broken_by)
                   : fmt::format("it was broken by {} (redlockrun --break): {}", lost.broken_by,
                                 lost.broken_because);
    }
    return "unknown";
}

std::string describe_foreign(const std::string& key, const Foreign& foreign, Refused refused) {
    const char* end = refused == Refused::yes ? "; nothing was changed" : "";
    if (foreign.type == "string") {
        return fmt::format("{} holds a value that is not a Unix timestamp, so it is not a lock "
                           "redlockrun can share{}",
                           key, end);
    }
    return fmt::format("{} holds a {}, not a timestamp lock{}", key, foreign.type, end);
}

std::string describe_exhausted(const std::string& key, const std::string& fence_key,
                               const FencesExhausted& exhausted) {
    return fmt::format("{} is free, but not granted: its fence counter {} holds {}, and fences "
                       "from 2^53 on could not be counted exactly, so the next one might not be "
                       "larger than the last; nothing was changed (delete the counter only if "
                       "nothing relies on the fences of {} growing)",
                       key, fence_key, exhausted.last_fence, key);
}

std::string describe_unreadable_fence(const std::string& key, const std::string& fence_key,
                                      const FenceUnreadable& unreadable) {
    const std::string held = unreadable.type == "string"
                                 ? std::string("a value that is not a number")
                                 : fmt::format("a {}", unreadable.type);
    return fmt::format("{} is free, but not granted: its fence counter {} holds {}, so no fence "
                       "can be counted from it; nothing was changed (once it is deleted, fences "
                       "go on from the server's clock in microseconds)",
                       key, fence_key, held);
}

} // namespace redlockrun::lock
