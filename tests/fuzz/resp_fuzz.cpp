// RESP replies as a server (or anything that answers on its port) might send them: decoded in one
// piece and byte by byte to the same replies, every reply encoded again decoding to itself.
#include "redis/resp.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using redlockrun::redis::Reply;
using redlockrun::redis::ReplyDecoder;

namespace {

// What a decoder makes of a stream: its replies, and the protocol error that stopped it, if any.
struct Decoded {
    std::vector<Reply> replies;
    bool failed = false;
};

void take_replies(ReplyDecoder& decoder, Decoded& decoded) {
    while (!decoded.failed) {
        auto next = decoder.next();
        if (!next) {
            decoded.failed = true;
        } else if (*next) {
            decoded.replies.push_back(std::move(**next));
        } else {
            return;
        }
    }
}

Decoded decode_whole(std::string_view bytes) {
    ReplyDecoder decoder;
    Decoded decoded;
    decoder.feed(bytes);
    take_replies(decoder, decoded);
    return decoded;
}

Decoded decode_bytewise(std::string_view bytes) {
    ReplyDecoder decoder;
    Decoded decoded;
    for (size_t i = 0; i < bytes.size() && !decoded.failed; ++i) {
        decoder.feed(bytes.substr(i, 1));
        take_replies(decoder, decoded);
    }
    return decoded;
}

bool same(const Reply& a, const Reply& b) {
    if (a.kind != b.kind || a.text != b.text || a.integer != b.integer ||
        a.elements.size() != b.elements.size()) {
        return false;
    }
    for (size_t i = 0; i < a.elements.size(); ++i) {
        if (!same(a.elements[i], b.elements[i])) {
            return false;
        }
    }
    return true;
}

void encode(const Reply& reply, std::string& out) {
    switch (reply.kind) {
    case Reply::Kind::string:
        out += "$" + std::to_string(reply.text.size()) + "\r\n" + reply.text + "\r\n";
        break;
    case Reply::Kind::status:
        out += "+" + reply.text + "\r\n";
        break;
    case Reply::Kind::error:
        out += "-" + reply.text + "\r\n";
        break;
    case Reply::Kind::integer:
        out += ":" + std::to_string(reply.integer) + "\r\n";
        break;
    case Reply::Kind::nil:
        out += "$-1\r\n";
        break;
    case Reply::Kind::array:
        out += "*" + std::to_string(reply.elements.size()) + "\r\n";
        for (const Reply& element : reply.elements) {
            encode(element, out);
        }
        break;
    }
}

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

// Every accessor a caller uses, on every element.
void use(const Reply& reply) {
    check(reply.error_code().size() <= reply.text.size());
    (void)reply.describe();
    (void)reply.as_string();
    (void)reply.as_integer();
    check(reply.at(reply.elements.size()) == nullptr);
    for (const Reply& element : reply.elements) {
        use(element);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const Decoded whole = decode_whole(bytes);
    const Decoded bytewise = decode_bytewise(bytes);

    check(whole.failed == bytewise.failed);
    check(whole.replies.size() == bytewise.replies.size());
    for (size_t i = 0; i < whole.replies.size(); ++i) {
        check(same(whole.replies[i], bytewise.replies[i]));
        use(whole.replies[i]);
    }

    // What was decoded is what was sent: written again in RESP, it decodes to itself.
    std::string again;
    for (const Reply& reply : whole.replies) {
        encode(reply, again);
    }
    const Decoded redecoded = decode_whole(again);
    check(!redecoded.failed);
    check(redecoded.replies.size() == whole.replies.size());
    for (size_t i = 0; i < whole.replies.size(); ++i) {
        check(same(redecoded.replies[i], whole.replies[i]));
    }
    return 0;
}
