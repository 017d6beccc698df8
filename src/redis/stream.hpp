// A byte stream to the Redis server: a TCP or unix socket, non-blocking, every wait bounded by a
// deadline and interruptible by a Wakeup. TLS (redis/tls.hpp) fits behind the same Stream
// interface.
#pragma once

#include "base/clock.hpp"
#include "base/expected.hpp"
#include "base/unique_fd.hpp"
#include "redis/endpoint.hpp"

#include <functional>
#include <memory>
#include <string>

namespace redlockrun::redis {

// Something outside Redis that may need attention while redlockrun waits for Redis (the signal
// self-pipe): when fd becomes readable, handle() deals with it and says whether the operation in
// progress must be abandoned.
struct Wakeup {
    int fd = -1;
    std::function<bool()> handle;
};

enum class Readiness { ready, timed_out, abandoned };

// Waits until fd is ready for `events` (POLLIN/POLLOUT), the deadline passes, or the wakeup asks
// to abandon. The wakeup may be null.
Readiness wait_ready(int fd, short events, const Deadline& deadline, const Wakeup* wakeup);

struct IoResult {
    enum class Status { done, want_read, want_write, closed, failed };
    Status status = Status::done;
    size_t bytes = 0;
    std::string error; // for failed
};

class Stream {
public:
    virtual ~Stream() = default;
    virtual int fd() const = 0;
    // Non-blocking: transfer what can be transferred now, or say what to wait for. A read that
    // returns less than `size` promises that nothing more is buffered until fd() turns readable
    // again (the caller then stops reading); a stream with a buffer of its own, such as TLS
    // records already decrypted, must hand that over first.
    virtual IoResult read(char* buffer, size_t size) = 0;
    virtual IoResult write(const char* data, size_t size) = 0;
};

struct ConnectFailure {
    // system: this machine ran out of something (file descriptors, memory), not Redis's fault.
    enum class Kind { failed, timed_out, abandoned, system };
    Kind kind = Kind::failed;
    // "connection refused", "no such host"...; for timed_out, what did not come in time ("no
    // answer"), which the caller completes with the time it waited.
    std::string message;
    // failed: nothing listens at the address (the connection was refused, or a Unix socket is
    // missing), as while a server restarts; unlike a name that does not resolve or a TLS failure.
    bool refused = false;
};

// Whether errno says that this machine ran out of a resource (descriptors, memory, buffers): the
// operating system's trouble, which no retry against Redis cures.
bool is_resource_exhaustion(int error);

// Whether the other end has closed or reset the connection, found without waiting or reading (a
// connection that Redis's `timeout` closed while redlockrun was not using it).
bool peer_has_closed(int fd);

// Connects a socket to the endpoint's address (trying every address a host name resolves to) by
// the deadline. TLS, for a rediss:// endpoint, is redis/connect.hpp's part.
Expected<UniqueFd, ConnectFailure> connect_socket(const Endpoint& endpoint,
                                                  const Deadline& deadline, const Wakeup* wakeup);

// The plain (not encrypted) stream over a connected socket.
std::unique_ptr<Stream> socket_stream(UniqueFd fd);

} // namespace redlockrun::redis
