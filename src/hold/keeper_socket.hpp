// The keeper's socket (hold/keeper.hpp's protocol): listening on it, and one request to it with its
// one-line answer. A path longer than a socket address holds (a deep $TMPDIR) is reached through
// its folder.
#pragma once

#include "base/clock.hpp"
#include "base/unique_fd.hpp"

#include <optional>
#include <string>

namespace redlockrun::hold {

// A socket listening at `path`, for the keeper; throws Fatal (71) if it cannot be made.
UniqueFd listen_at(const std::string& path);

// One request to a keeper, and its one-line reply; none if the keeper cannot be reached (gone)
// or does not answer within `limit` (stopped).
struct Asked {
    bool reached = false;
    std::optional<std::string> reply;
};
Asked ask_keeper(const std::string& socket_path, const std::string& request, Millis limit);

// Whether a process listens on the socket at `path` (a connection is refused otherwise); true
// when that cannot be told, so that nothing live is taken for a leftover.
bool someone_listens(const std::string& path);

} // namespace redlockrun::hold
