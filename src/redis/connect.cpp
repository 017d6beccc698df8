#include "redis/connect.hpp"

#include "redis/tls.hpp"

namespace redlockrun::redis {

Expected<std::unique_ptr<Stream>, ConnectFailure> connect_stream(const Endpoint& endpoint,
                                                                 const TlsClient* tls,
                                                                 const Deadline& deadline,
                                                                 const Wakeup* wakeup) {
    auto fd = connect_socket(endpoint, deadline, wakeup);
    if (!fd) {
        return unexpected(fd.error());
    }
    if (!endpoint.tls) {
        return socket_stream(std::move(*fd));
    }
    if (tls == nullptr) {
        return unexpected(ConnectFailure{ConnectFailure::Kind::failed, "TLS is not set up"});
    }
    return tls->handshake(std::move(*fd), endpoint.host, deadline, wakeup);
}

} // namespace redlockrun::redis
