// The RESP wire format, through hiredis: commands out, replies in. Nothing else in redlockrun sees
// hiredis types.
#pragma once

#include "base/expected.hpp"
#include "redis/reply.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun::redis {

using Command = std::vector<std::string>;

// Appends one command in RESP multi-bulk form to `out`.
void encode_command(const Command& command, std::string& out);

// Incremental reply parser: feed it bytes as they arrive, take replies as they complete.
class ReplyDecoder {
public:
    ReplyDecoder();
    ~ReplyDecoder();
    ReplyDecoder(const ReplyDecoder&) = delete;
    ReplyDecoder& operator=(const ReplyDecoder&) = delete;

    void feed(std::string_view bytes);
    // The next complete reply, nothing if more bytes are needed, or the protocol error that makes
    // the rest of the stream unreadable.
    Expected<std::optional<Reply>, std::string> next();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace redlockrun::redis
