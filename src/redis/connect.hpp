// A stream to a Redis endpoint: the socket (redis/stream.hpp), and for a rediss:// endpoint the
// TLS handshake over it (redis/tls.hpp), within one deadline. The one place that knows both, so
// that neither knows the other.
#pragma once

#include "base/clock.hpp"
#include "base/expected.hpp"
#include "redis/endpoint.hpp"
#include "redis/stream.hpp"

#include <memory>

namespace redlockrun::redis {

class TlsClient;

// Connects to the endpoint by the deadline, and for a rediss:// endpoint runs the TLS handshake
// through `tls` within the same deadline.
Expected<std::unique_ptr<Stream>, ConnectFailure> connect_stream(const Endpoint& endpoint,
                                                                 const TlsClient* tls,
                                                                 const Deadline& deadline,
                                                                 const Wakeup* wakeup);

} // namespace redlockrun::redis
