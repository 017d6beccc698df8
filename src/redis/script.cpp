#include "redis/script.hpp"

#include "redis/error_reply.hpp"

namespace redlockrun::redis {

namespace {

Command script_command(const char* verb, const char* body, const std::vector<std::string>& keys,
                       const std::vector<std::string>& args) {
    Command command{verb, body, std::to_string(keys.size())};
    command.insert(command.end(), keys.begin(), keys.end());
    command.insert(command.end(), args.begin(), args.end());
    return command;
}

} // namespace

Command evalsha_command(const Script& script, const std::vector<std::string>& keys,
                        const std::vector<std::string>& args) {
    return script_command("EVALSHA", script.sha1, keys, args);
}

Command eval_command(const Script& script, const std::vector<std::string>& keys,
                     const std::vector<std::string>& args) {
    return script_command("EVAL", script.source, keys, args);
}

Expected<Reply, CallFailure> script_result(Reply reply, const Endpoint& endpoint) {
    if (reply.is_error()) {
        // First word only: servers word the rest differently.
        const auto kind = reply.error_code() == "LOADING" ? CallFailure::Kind::loading
                                                          : CallFailure::Kind::error_reply;
        return unexpected(CallFailure{kind, explain_error_reply(reply, endpoint), {}});
    }
    return reply;
}

Expected<ScriptReplies, CallFailure> run_script_then(Connection& connection, const Script& script,
                                                     const std::vector<std::string>& keys,
                                                     const std::vector<std::string>& args,
                                                     const std::vector<Command>& after,
                                                     const CallOptions& options) {
    const auto with_after = [&](Command command) {
        std::vector<Command> commands{std::move(command)};
        commands.insert(commands.end(), after.begin(), after.end());
        return commands;
    };
    auto replies =
        connection.call(with_after(script_command("EVALSHA", script.sha1, keys, args)), options);
    if (replies && replies->front().error_code() == "NOSCRIPT") {
        // First use on this server, after SCRIPT FLUSH or a restart, or on a replica a failover
        // promoted (EVAL replicates its effects, never the script): send the body, which caches it.
        replies =
            connection.call(with_after(script_command("EVAL", script.source, keys, args)), options);
    }
    if (!replies) {
        return unexpected(std::move(replies.error()));
    }
    auto result = script_result(std::move(replies->front()), connection.endpoint());
    if (!result) {
        return unexpected(std::move(result.error()));
    }
    return ScriptReplies{
        std::move(*result),
        {std::make_move_iterator(replies->begin() + 1), std::make_move_iterator(replies->end())}};
}

Expected<Reply, CallFailure> run_script(Connection& connection, const Script& script,
                                        const std::vector<std::string>& keys,
                                        const std::vector<std::string>& args,
                                        const CallOptions& options) {
    auto replies = run_script_then(connection, script, keys, args, {}, options);
    if (!replies) {
        return unexpected(std::move(replies.error()));
    }
    return std::move(replies->result);
}

} // namespace redlockrun::redis
