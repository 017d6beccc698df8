#include "redis/resp.hpp"

#include <fmt/core.h>
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
    // hiredis's sds formatter writes each length itself, where redisFormatCommandArgv sprintf()s
    // it: fewer instructions, and no printf in a run (ARCHITECTURE.md).
    sds encoded = nullptr;
    long long length = redisFormatSdsCommandArgv(&encoded, static_cast<int>(argv.size()),
                                                 argv.data(), lengths.data());
    if (length < 0) {
        throw std::bad_alloc();
    }
    out.append(encoded, static_cast<size_t>(length));
    redisFreeSdsCommand(encoded);
}

namespace {

// hiredis allocates room for as many elements as an array announces before any of them arrives, so
// a server, or anything else that answers at the URL, announcing billions would cost gigabytes for
// a few bytes sent. The largest array redlockrun reads is a script's answer of a few fields: a
// larger one is a protocol error.
constexpr long long max_array_elements = 1024;

// What hiredis's own createArray is; the same for every reader.
decltype(redisReplyObjectFunctions::createArray) hiredis_create_array = nullptr;

struct ArrayRefusal {
    long long elements = 0; // announced by the array refused, if any
};

// A template so that it matches createArray's count type in every hiredis version (int in 0.14,
// size_t from 1.0).
template <typename Count>
void* create_bounded_array(const redisReadTask* task, Count elements) {
    if (static_cast<long long>(elements) > max_array_elements) {
        static_cast<ArrayRefusal*>(task->privdata)->elements = static_cast<long long>(elements);
        return nullptr; // hiredis stops reading, with an error that next() replaces
    }
    return hiredis_create_array(task, elements);
}

} // namespace

struct ReplyDecoder::Impl {
    redisReader* reader = redisReaderCreate();
    redisReplyObjectFunctions functions{};
    ArrayRefusal refusal;
    ~Impl() { redisReaderFree(reader); }
};

ReplyDecoder::ReplyDecoder() : impl_(std::make_unique<Impl>()) {
    redisReader* reader = impl_->reader;
    if (reader == nullptr) {
        throw std::bad_alloc();
    }
    hiredis_create_array = reader->fn->createArray;
    impl_->functions = *reader->fn;
    impl_->functions.createArray = &create_bounded_array;
    reader->fn = &impl_->functions;
    reader->privdata = &impl_->refusal;
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
        if (impl_->refusal.elements > 0) {
            return unexpected(fmt::format("an array of {} elements, far more than any answer",
                                          impl_->refusal.elements));
        }
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
