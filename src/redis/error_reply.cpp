#include "redis/error_reply.hpp"

#include <fmt/core.h>

namespace redlockrun::redis {

namespace {

// Redis errors carry a first word; the rest is free text. Script errors in Redis 7 end with
// " script: <sha1>, on @user_script:N." which says nothing to a user (unlike the " script: " of
// Redis 7.2's "ACL failure in script: User ... has no permissions to run the 'pttl' command").
std::string server_text(const Reply& error) {
    std::string text = error.text;
    constexpr std::string_view marker = " script: ";
    for (auto pos = text.find(marker); pos != std::string::npos; pos = text.find(marker, pos + 1)) {
        const std::string_view rest = std::string_view(text).substr(pos + marker.size());
        const auto where = rest.find(", on @");
        if (where != std::string_view::npos && rest.substr(0, where).find(' ') == rest.npos) {
            text.erase(pos); // " script: NAME, on @user_script:N."
            break;
        }
    }
    return text;
}

std::string advice(std::string_view code, const std::string& text, bool sentinel) {
    // Redis 7 answers a long request from a client that has not authenticated with this, then
    // closes the connection.
    if (code == "NOAUTH" || (code == "ERR" && text.find("unauthenticated") != std::string::npos)) {
        return sentinel ? "it needs a password: give one with --sentinel-password-file or "
                          "$REDLOCKRUN_SENTINEL_PASSWORD"
                        : "it needs a password: give one with --password-file, $REDISCLI_AUTH "
                          "or the URL";
    }
    if (code == "WRONGPASS") {
        return "check the user name and password";
    }
    if (code == "ERR" && (text.find("no password is set") != std::string::npos ||
                          text.find("without any password configured") != std::string::npos)) {
        return "a password was given but the server has none configured for that user";
    }
    // A command a script runs that the user may not run: Redis 6.0 to 7.0 answer with ERR, 7.2
    // and Valkey with "ACL failure in script", both naming no permission that the user knows of.
    if (text.find("user executing the script can't") != std::string::npos ||
        text.find("ACL failure in script") != std::string::npos) {
        return "the user lacks an ACL permission that redlockrun's scripts need: the man page's "
               "ACL list names every command they run";
    }
    if (code == "NOPERM") {
        return "the user lacks an ACL permission redlockrun needs (EVAL, EVALSHA, BLPOP, ROLE "
               "through Sentinel, and the keys of the lock)";
    }
    if (code == "LOADING") {
        return "the server is still loading its data; try again shortly";
    }
    if (code == "READONLY") {
        return "this is a read-only replica; point --url at the primary, or name its sentinels "
               "with a redis-sentinel:// URL";
    }
    if (code == "MOVED" || code == "ASK") {
        return "Redis Cluster kept sending the request elsewhere; check the cluster's state "
               "(redis-cli --cluster check)";
    }
    if (code == "CROSSSLOT") {
        return "in Redis Cluster, a key with a '}' but no {hash tag} cannot share a slot with "
               "redlockrun's companion keys: give it a hash tag, as in jobs:{nightly}";
    }
    if (code == "CLUSTERDOWN" || code == "MASTERDOWN") {
        return "the server cannot serve requests right now";
    }
    if (code == "BUSY") {
        return "the server is busy running another script";
    }
    if (code == "OOM") {
        return "the server is out of memory (maxmemory)";
    }
    if (code == "MISCONF") {
        return "the server refuses writes because it cannot save its data";
    }
    return {};
}

// NOAUTH, or the protocol error Redis 7 gives a pipelined request that came without AUTH (it then
// closes the connection): words from the server's inside, where the user needs to hear what to do.
bool needs_password(std::string_view code, const std::string& text) {
    return code == "NOAUTH" || (code == "ERR" && text.find("unauthenticated") != std::string::npos);
}

std::string password_needed(const Endpoint& endpoint) {
    if (endpoint.is_sentinel) {
        return fmt::format("the {} needs a password, and none was given: give one with "
                           "--sentinel-password-file, $REDLOCKRUN_SENTINEL_PASSWORD or a config "
                           "file's sentinel-password-file (and the user with --sentinel-user for "
                           "an ACL user)",
                           endpoint.display());
    }
    return fmt::format("Redis at {} needs a password, and none was given: give one with "
                       "--password-file, $REDISCLI_AUTH, the URL (redis://:PASSWORD@host, or "
                       "redis://USER:PASSWORD@host for an ACL user) or a config file's "
                       "password-file",
                       endpoint.display());
}

} // namespace

std::string explain_error_reply(const Reply& error, const Endpoint& endpoint) {
    const std::string text = server_text(error);
    if (!endpoint.password && needs_password(error.error_code(), text)) {
        return password_needed(endpoint);
    }
    const std::string hint = advice(error.error_code(), text, endpoint.is_sentinel);
    if (hint.empty()) {
        return fmt::format("Redis at {} answered with an error: {}", endpoint.display(), text);
    }
    return fmt::format("Redis at {} answered with an error: {} ({})", endpoint.display(), text,
                       hint);
}

} // namespace redlockrun::redis
