#include "redis/stream.hpp"

#include <fmt/core.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

namespace redlockrun::redis {

namespace {

// poll() has no "forever" that we want: an hour is as good, and the loop polls again.
constexpr Millis longest_poll{3'600'000};

class SocketStream final : public Stream {
public:
    explicit SocketStream(UniqueFd fd) : fd_(std::move(fd)) {}

    int fd() const override { return fd_.get(); }

    IoResult read(char* buffer, size_t size) override {
        for (;;) {
            ssize_t n = ::recv(fd_.get(), buffer, size, 0);
            if (n > 0) {
                return {IoResult::Status::done, static_cast<size_t>(n), {}};
            }
            if (n == 0) {
                return {IoResult::Status::closed, 0, {}};
            }
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return {IoResult::Status::want_read, 0, {}};
            }
            return {IoResult::Status::failed, 0, std::strerror(errno)};
        }
    }

    IoResult write(const char* data, size_t size) override {
        for (;;) {
            ssize_t n = ::send(fd_.get(), data, size, MSG_NOSIGNAL);
            if (n >= 0) {
                return {IoResult::Status::done, static_cast<size_t>(n), {}};
            }
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return {IoResult::Status::want_write, 0, {}};
            }
            if (errno == EPIPE || errno == ECONNRESET) {
                return {IoResult::Status::closed, 0, {}};
            }
            return {IoResult::Status::failed, 0, std::strerror(errno)};
        }
    }

private:
    UniqueFd fd_;
};

using ConnectResult = Expected<UniqueFd, ConnectFailure>;

ConnectFailure failure(ConnectFailure::Kind kind, std::string message) {
    return ConnectFailure{kind, std::move(message)};
}

ConnectFailure system_call_failure(int error) {
    return failure(is_resource_exhaustion(error) ? ConnectFailure::Kind::system
                                                 : ConnectFailure::Kind::failed,
                   std::strerror(error));
}

// A connect() that failed with `error`. Redis removes its Unix socket when it stops, so a missing
// one is refused too.
ConnectFailure refused_or_failed(int family, int error) {
    ConnectFailure result = system_call_failure(error);
    result.refused = error == ECONNREFUSED || (family == AF_UNIX && error == ENOENT);
    return result;
}

// Starts a non-blocking connect and waits for it to finish.
ConnectResult connect_address(int family, const sockaddr* address, socklen_t length,
                              const Deadline& deadline, const Wakeup* wakeup) {
    UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
        return unexpected(system_call_failure(errno));
    }
    if (family != AF_UNIX) {
        // Requests are small and latency is what matters.
        int on = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    if (::connect(fd.get(), address, length) == 0) {
        return fd;
    }
    if (errno != EINPROGRESS && errno != EAGAIN && errno != EINTR) {
        return unexpected(refused_or_failed(family, errno));
    }
    switch (wait_ready(fd.get(), POLLOUT, deadline, wakeup)) {
    case Readiness::timed_out:
        return unexpected(failure(ConnectFailure::Kind::timed_out, "no answer"));
    case Readiness::abandoned:
        return unexpected(failure(ConnectFailure::Kind::abandoned, "interrupted"));
    case Readiness::ready:
        break;
    }
    int error = 0;
    socklen_t error_length = sizeof error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &error_length) != 0) {
        error = errno;
    }
    if (error != 0) {
        return unexpected(refused_or_failed(family, error));
    }
    return fd;
}

ConnectResult connect_unix(const std::string& path, const Deadline& deadline,
                           const Wakeup* wakeup) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        return unexpected(
            failure(ConnectFailure::Kind::failed, fmt::format("socket path is longer than {} bytes",
                                                              sizeof address.sun_path - 1)));
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    return connect_address(AF_UNIX, reinterpret_cast<const sockaddr*>(&address), sizeof address,
                           deadline, wakeup);
}

ConnectResult connect_tcp(const std::string& host, int port, const Deadline& deadline,
                          const Wakeup* wakeup) {
    // An address written out, as the default URL's is, needs no resolver: getaddrinfo() would
    // come to the same one address, through much more of the C library, at every start. Other
    // spellings it accepts ("127.1", a scope in "fe80::1%eth0") still go to it.
    sockaddr_in ipv4{};
    if (::inet_pton(AF_INET, host.c_str(), &ipv4.sin_addr) == 1) {
        ipv4.sin_family = AF_INET;
        ipv4.sin_port = htons(static_cast<uint16_t>(port));
        return connect_address(AF_INET, reinterpret_cast<const sockaddr*>(&ipv4), sizeof ipv4,
                               deadline, wakeup);
    }
    sockaddr_in6 ipv6{};
    if (::inet_pton(AF_INET6, host.c_str(), &ipv6.sin6_addr) == 1) {
        ipv6.sin6_family = AF_INET6;
        ipv6.sin6_port = htons(static_cast<uint16_t>(port));
        return connect_address(AF_INET6, reinterpret_cast<const sockaddr*>(&ipv6), sizeof ipv6,
                               deadline, wakeup);
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* addresses = nullptr;
    const std::string service = std::to_string(port);
    // A resolver that cannot open /etc/hosts for want of descriptors says "Name or service not
    // known", and only errno tells the truth.
    errno = 0;
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses); rc != 0) {
        if (is_resource_exhaustion(errno)) {
            return unexpected(system_call_failure(errno));
        }
        if (rc == EAI_MEMORY) {
            return unexpected(system_call_failure(ENOMEM));
        }
        return unexpected(failure(ConnectFailure::Kind::failed,
                                  fmt::format("cannot resolve host name: {}", gai_strerror(rc))));
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(addresses, ::freeaddrinfo);
    // Try each address in turn ("localhost" may be ::1 first while Redis listens on 127.0.0.1).
    ConnectResult last = unexpected(failure(ConnectFailure::Kind::failed, "no address"));
    for (const addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
        last = connect_address(a->ai_family, a->ai_addr, a->ai_addrlen, deadline, wakeup);
        if (last || last.error().kind != ConnectFailure::Kind::failed) {
            // Connected, or out of time or resources: the next address would fare no better.
            break;
        }
    }
    return last;
}

} // namespace

bool is_resource_exhaustion(int error) {
    return error == EMFILE || error == ENFILE || error == ENOMEM || error == ENOBUFS;
}

bool peer_has_closed(int fd) {
#ifdef POLLRDHUP
    // POLLRDHUP: the peer's end of stream has arrived, whatever data may still be queued before it.
    const short events = POLLIN | POLLRDHUP;
#else
    const short events = POLLIN;
#endif
    pollfd check{fd, events, 0};
    if (::poll(&check, 1, 0) != 1) {
        return false;
    }
#ifdef POLLRDHUP
    return (check.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
#else
    return (check.revents & (POLLHUP | POLLERR)) != 0;
#endif
}

Readiness wait_ready(int fd, short events, const Deadline& deadline, const Wakeup* wakeup) {
    for (;;) {
        pollfd fds[2] = {{fd, events, 0}, {wakeup ? wakeup->fd : -1, POLLIN, 0}};
        const nfds_t count = wakeup ? 2 : 1;
        int rc = ::poll(fds, count, poll_timeout(deadline, longest_poll));
        if (rc < 0) {
            if (errno == EINTR) {
                continue;
            }
            // poll() itself failing (ENOMEM) is as good as the fd being ready: the I/O that follows
            // reports the real trouble.
            return Readiness::ready;
        }
        if (count == 2 && fds[1].revents != 0 && wakeup->handle()) {
            return Readiness::abandoned;
        }
        if (fds[0].revents != 0) {
            return Readiness::ready;
        }
        if (deadline && steady_now() >= *deadline) {
            return Readiness::timed_out;
        }
    }
}

Expected<UniqueFd, ConnectFailure> connect_socket(const Endpoint& endpoint,
                                                  const Deadline& deadline, const Wakeup* wakeup) {
    return endpoint.unix_socket ? connect_unix(endpoint.socket_path, deadline, wakeup)
                                : connect_tcp(endpoint.host, endpoint.port, deadline, wakeup);
}

std::unique_ptr<Stream> socket_stream(UniqueFd fd) {
    return std::make_unique<SocketStream>(std::move(fd));
}

} // namespace redlockrun::redis
