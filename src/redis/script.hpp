// A Lua script that runs on the server: sent by SHA1 (EVALSHA), and in full only when the server
// does not know it yet (NOSCRIPT).
#pragma once

#include "redis/connection.hpp"

#include <string>
#include <vector>

namespace redlockrun::redis {

struct Script {
    const char* name; // for messages: "acquire"
    const char* source;
    const char* sha1;
};

// Runs the script. An error reply (the script failed, ACL refused it...) is returned as a
// CallFailure of kind error_reply, with an explanation for the user.
Expected<Reply, CallFailure> run_script(Connection& connection, const Script& script,
                                        const std::vector<std::string>& keys,
                                        const std::vector<std::string>& args,
                                        const CallOptions& options = {});

// A script's result and the replies to the commands sent behind it.
struct ScriptReplies {
    Reply result;
    std::vector<Reply> after;
};

// Runs the script with `after` (a WAIT, say) in the same write, behind it: no extra round trip.
Expected<ScriptReplies, CallFailure> run_script_then(Connection& connection, const Script& script,
                                                     const std::vector<std::string>& keys,
                                                     const std::vector<std::string>& args,
                                                     const std::vector<Command>& after,
                                                     const CallOptions& options = {});

// The EVALSHA command for the script, for callers that pipeline it behind other commands. An answer
// of NOSCRIPT to it means: run_script() instead, which sends the script in full.
Command evalsha_command(const Script& script, const std::vector<std::string>& keys,
                        const std::vector<std::string>& args);

// The EVAL command for the script, sent in full: one request that needs no round trip before it,
// even on a server that does not know the script, for a call given too little time for two.
Command eval_command(const Script& script, const std::vector<std::string>& keys,
                     const std::vector<std::string>& args);

// The outcome of a script's reply in a pipeline, as run_script() would give it.
Expected<Reply, CallFailure> script_result(Reply reply, const Endpoint& endpoint);

} // namespace redlockrun::redis
