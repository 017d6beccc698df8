#include "redis/resp.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <new>

namespace redlockrun::redis {

namespace {

Reply convert(const redisReply& raw) {
    Reply reply;
    switch (raw.type) {
    case REDIS_REPLY_STRING:
        reply.kind = Reply::Kind::string;
        reply.text.assign(raw.str, raw.len);
        break;
    case REDIS_REPLY_STATUS:
        reply.kind = Reply::Kind::status;
        reply.text.assign(raw.str, raw.len);
        break;
    case REDIS_REPLY_ERROR:
        reply.kind = Reply::Kind::error;
        reply.text.assign(raw.str, raw.len);
        break;
    case REDIS_REPLY_INTEGER:
        reply.kind = Reply::Kind::integer;
        reply.integer = raw.integer;
        break;
    case REDIS_REPLY_ARRAY:
        reply.kind = Reply::Kind::array;
        reply.elements.reserve(raw.elements);
        for (size_t i = 0; i < raw.elements; ++i) {
            reply.elements.push_back(convert(*raw.element[i]));
        }
        break;
    default: // REDIS_REPLY_NIL; RESP3 types never arrive, as redlockrun speaks RESP2
        reply.kind = Reply::Kind::nil;
        break;
    }
    return reply;
}

} // namespace

void encode_command(const Command& command, std::string& out) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    argv.reserve(command.size());
    lengths.reserve(command.size());
    for (const auto& arg : command) {
        argv.push_back(arg.data());
        lengths.push_back(arg.size());
    }
    char* encoded = nullptr;
    int length = redisFormatCommandArgv(&encoded, static_cast<int>(argv.size()), argv.data(),
                                        lengths.data());
    if (length < 0) {
        throw std::bad_alloc();
    }
    out.append(encoded, static_cast<size_t>(length));
    redisFreeCommand(encoded);
}

struct ReplyDecoder::Impl {
    redisReader* reader = redisReaderCreate();
    ~Impl() { redisReaderFree(reader); }
};

ReplyDecoder::ReplyDecoder() : impl_(std::make_unique<Impl>()) {
    if (impl_->reader == nullptr) {
        throw std::bad_alloc();
    }
}

ReplyDecoder::~ReplyDecoder() = default;

void ReplyDecoder::feed(std::string_view bytes) {
    if (redisReaderFeed(impl_->reader, bytes.data(), bytes.size()) != REDIS_OK) {
        throw std::bad_alloc();
    }
}

Expected<std::optional<Reply>, std::string> ReplyDecoder::next() {
    void* raw = nullptr;
    if (redisReaderGetReply(impl_->reader, &raw) != REDIS_OK) {
        return unexpected(std::string(impl_->reader->errstr));
    }
    if (raw == nullptr) {
        return std::optional<Reply>{};
    }
    auto* reply = static_cast<redisReply*>(raw);
    Reply converted = convert(*reply);
    freeReplyObject(reply);
    return std::optional<Reply>{std::move(converted)};
}

} // namespace redlockrun::redis
