#include "hold/keeper_socket.hpp"

#include "base/fatal.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

// A socket's address. sun_path holds 107 bytes; a longer path (a deep $TMPDIR) is reached through
// its folder, opened here and kept open while the address is used: /proc/self/fd/N/NAME.
struct SocketAddress {
    sockaddr_un address{};
    UniqueFd folder;
    bool usable = false;

    explicit SocketAddress(const std::string& path) {
        address.sun_family = AF_UNIX;
        std::string reachable = path;
        if (path.size() >= sizeof address.sun_path) {
            const auto slash = path.rfind('/');
            folder.reset(::open(path.substr(0, slash).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!folder.valid()) {
                return;
            }
            reachable = fmt::format("/proc/self/fd/{}/{}", folder.get(), path.substr(slash + 1));
        }
        if (reachable.size() >= sizeof address.sun_path) {
            return;
        }
        std::memcpy(address.sun_path, reachable.c_str(), reachable.size() + 1);
        usable = true;
    }
    const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&address); }
};

} // namespace

UniqueFd listen_at(const std::string& path) {
    const SocketAddress address(path);
    UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!address.usable || !listener.valid() ||
        ::bind(listener.get(), address.get(), sizeof address.address) != 0 ||
        ::listen(listener.get(), 8) != 0) {
        throw Fatal(ExitStatus::os_error,
                    fmt::format("cannot listen on {}: {}", path,
                                address.usable ? std::strerror(errno) : "the path is too long"));
    }
    return listener;
}

Asked ask_keeper(const std::string& socket_path, const std::string& request, Millis limit) {
    Asked asked;
    UniqueFd connection(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const SocketAddress address(socket_path);
    if (!address.usable || !connection.valid() ||
        ::connect(connection.get(), address.get(), sizeof address.address) != 0) {
        return asked;
    }
    asked.reached = true;
    const std::string line = request + "\n";
    if (::send(connection.get(), line.data(), line.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(line.size())) {
        return asked;
    }
    const SteadyTime until = steady_now() + limit;
    std::string text;
    char buffer[512];
    while (text.find('\n') == std::string::npos && text.size() < 64 * 1024) {
        pollfd readable{connection.get(), POLLIN, 0};
        const int ready = ::poll(&readable, 1, poll_timeout(until, limit));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return asked;
        }
        const ssize_t n = ::read(connection.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return asked;
        }
        text.append(buffer, static_cast<size_t>(n));
    }
    const auto end = text.find('\n');
    if (end != std::string::npos) {
        asked.reply = text.substr(0, end);
    }
    return asked;
}

bool someone_listens(const std::string& path) {
    const SocketAddress address(path);
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!address.usable || !probe.valid()) {
        return true;
    }
    return ::connect(probe.get(), address.get(), sizeof address.address) == 0 ||
           errno != ECONNREFUSED;
}

} // namespace redlockrun::hold
