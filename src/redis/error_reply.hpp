// Turns a Redis error reply into a sentence for the user that names the error and says what to do;
// a server that needs a password when none was given is said to need one, in place of its error.
#pragma once

#include "redis/endpoint.hpp"
#include "redis/reply.hpp"

#include <string>

namespace redlockrun::redis {

std::string explain_error_reply(const Reply& error, const Endpoint& endpoint);

} // namespace redlockrun::redis
