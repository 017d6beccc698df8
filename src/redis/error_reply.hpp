// Turns a Redis error reply into a sentence for the user that names the error and says what to do.
#pragma once

#include "redis/endpoint.hpp"
#include "redis/reply.hpp"

#include <string>

namespace redlockrun::redis {

std::string explain_error_reply(const Reply& error, const Endpoint& endpoint);

} // namespace redlockrun::redis
