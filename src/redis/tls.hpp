// TLS for rediss:// URLs, through the system's OpenSSL, loaded when first needed
// (redis/openssl_loader.hpp): certificates are verified against the system's CAs (or
// --tls-ca-file) and the server's name or IP address, always. OpenSSL is seen nowhere else.
#pragma once

#include "base/unique_fd.hpp"
#include "redis/stream.hpp"

#include <memory>
#include <optional>
#include <string>

namespace redlockrun::redis {

struct TlsOptions {
    std::optional<std::string> ca_file;     // --tls-ca-file; none: the system's CAs
    std::optional<std::string> cert_file;   // --tls-cert, with --tls-key: a client certificate
    std::optional<std::string> key_file;    // --tls-key
    std::optional<std::string> server_name; // --tls-server-name; none: the URL's host

    bool any() const { return ca_file || cert_file || key_file || server_name; }
};

// The client side of TLS, set up once: the files are read, and their errors reported, before
// anything connects.
class TlsClient {
public:
    // A one-line message naming the option at fault if a file cannot be used (a usage error).
    // OpenSSL is loaded here, on first use; throws Fatal (69) if the system's cannot be.
    static Expected<std::shared_ptr<const TlsClient>, std::string>
    create(const TlsOptions& options);

    ~TlsClient();
    TlsClient(const TlsClient&) = delete;
    TlsClient& operator=(const TlsClient&) = delete;

    // Runs the handshake on a connected socket by the deadline and checks the certificate against
    // --tls-server-name, else `host` (a name or an IP address).
    Expected<std::unique_ptr<Stream>, ConnectFailure> handshake(UniqueFd fd,
                                                                const std::string& host,
                                                                const Deadline& deadline,
                                                                const Wakeup* wakeup) const;

private:
    struct Context;
    explicit TlsClient(std::unique_ptr<Context> context, std::optional<std::string> server_name);

    std::unique_ptr<Context> context_;
    std::optional<std::string> server_name_;
};

} // namespace redlockrun::redis
