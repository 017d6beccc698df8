#include "redis/tls.hpp"

#include "redis/openssl_loader.hpp"

#include <fmt/core.h>

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>

namespace redlockrun::redis {

namespace {

// What OpenSSL said about a failure: the first error it queued, which names the cause ("no start
// line") where later ones name only the layer that gave up ("PEM lib"). The queue is emptied.
std::string openssl_reason() {
    const OpenSsl& api = openssl();
    const unsigned long code = api.ERR_peek_error();
    std::string reason = "unknown error";
    if (code != 0) {
        const char* text = api.ERR_reason_error_string(code);
        reason = text ? text : fmt::format("OpenSSL error {:#x}", code);
    }
    api.ERR_clear_error();
    return reason;
}

int first_reason_code() {
    return ERR_GET_REASON(openssl().ERR_peek_error());
}

bool is_ip_address(const std::string& host) {
    unsigned char address[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), address) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), address) == 1;
}

// Opened here first, so that a missing file is reported as the system puts it rather than as
// OpenSSL's "system lib".
Expected<bool, std::string> check_readable(const char* option, const std::string& path) {
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat status {};
    if (!file.valid() || ::fstat(file.get(), &status) != 0) {
        return unexpected(
            fmt::format("{}: cannot read {}: {}", option, path, std::strerror(errno)));
    }
    if (S_ISDIR(status.st_mode)) {
        return unexpected(
            fmt::format("{}: cannot read {}: {}", option, path, std::strerror(EISDIR)));
    }
    return true;
}

// OpenSSL would prompt on the terminal for the passphrase of an encrypted key, which a cron job
// cannot answer: refuse instead, and remember that one was asked for.
int refuse_passphrase(char* /*buffer*/, int /*size*/, int /*writing*/, void* asked) {
    *static_cast<bool*>(asked) = true;
    return 0;
}

std::string verification_failure(long result, const std::string& name) {
    std::string message = fmt::format("the server's certificate was not accepted: {}",
                                      openssl().X509_verify_cert_error_string(result));
    switch (result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
        message += fmt::format(" (it is not issued for {}; see --tls-server-name)", name);
        break;
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
        message += " (see --tls-ca-file)";
        break;
    default:
        break;
    }
    return message;
}

// OpenSSL writes to the socket with write(2), and a write to a connection the server has closed
// raises SIGPIPE, which would end redlockrun where a plain socket (send with MSG_NOSIGNAL) gets
// EPIPE. Ignoring SIGPIPE for the whole process is no answer: the command would inherit that. So
// SIGPIPE is blocked around each OpenSSL call that may write, and one that it raised is taken
// back before the mask is restored.
class SigpipeHeld {
public:
    SigpipeHeld() {
        sigemptyset(&sigpipe_);
        sigaddset(&sigpipe_, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &sigpipe_, &old_mask_);
    }
    ~SigpipeHeld() {
        const int saved_errno = errno; // the caller may still look at the OpenSSL call's
        sigset_t pending;
        sigpending(&pending);
        if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
            const timespec now{0, 0};
            while (sigtimedwait(&sigpipe_, nullptr, &now) < 0 && errno == EINTR) {
            }
        }
        pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
        errno = saved_errno;
    }
    SigpipeHeld(const SigpipeHeld&) = delete;
    SigpipeHeld& operator=(const SigpipeHeld&) = delete;

private:
    sigset_t sigpipe_{};
    sigset_t old_mask_{};
    bool was_pending_ = false;
};

ConnectFailure connect_failure(ConnectFailure::Kind kind, std::string message) {
    return ConnectFailure{kind, std::move(message)};
}

class TlsStream final : public Stream {
public:
    TlsStream(UniqueFd fd, SSL* ssl) : fd_(std::move(fd)), ssl_(ssl) {}
    // No close_notify: Redis does not wait for one, and sending it could block.
    ~TlsStream() override { api_.SSL_free(ssl_); }
    TlsStream(const TlsStream&) = delete;
    TlsStream& operator=(const TlsStream&) = delete;

    int fd() const override { return fd_.get(); }

    // Reads until the buffer is full or OpenSSL needs the socket: a short read then means that
    // no decrypted record is left waiting inside OpenSSL, as the Stream contract requires.
    IoResult read(char* buffer, size_t size) override {
        size_t got = 0;
        while (got < size) {
            api_.ERR_clear_error();
            size_t bytes = 0;
            const SigpipeHeld held; // a read may answer with an alert
            const int rc = api_.SSL_read_ex(ssl_, buffer + got, size - got, &bytes);
            if (rc == 1) {
                got += bytes;
                continue;
            }
            if (got > 0) {
                break; // the data first; a failure comes back on the next read
            }
            return failed_io(rc);
        }
        return {IoResult::Status::done, got, {}};
    }

    IoResult write(const char* data, size_t size) override {
        api_.ERR_clear_error();
        size_t bytes = 0;
        const SigpipeHeld held;
        const int rc = api_.SSL_write_ex(ssl_, data, size, &bytes);
        if (rc == 1) {
            return {IoResult::Status::done, bytes, {}};
        }
        return failed_io(rc);
    }

private:
    IoResult failed_io(int rc) {
        const int saved_errno = errno;
        switch (api_.SSL_get_error(ssl_, rc)) {
        case SSL_ERROR_WANT_READ:
            return {IoResult::Status::want_read, 0, {}};
        case SSL_ERROR_WANT_WRITE:
            return {IoResult::Status::want_write, 0, {}};
        case SSL_ERROR_ZERO_RETURN:
            return {IoResult::Status::closed, 0, {}};
        case SSL_ERROR_SYSCALL:
            if (saved_errno == 0 || saved_errno == EPIPE || saved_errno == ECONNRESET) {
                return {IoResult::Status::closed, 0, {}};
            }
            return {IoResult::Status::failed, 0, std::strerror(saved_errno)};
        default:
            if (first_reason_code() == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED) {
                // TLS 1.3 completes the handshake before the server has checked our certificate:
                // its refusal arrives with the first reply.
                api_.ERR_clear_error();
                return {IoResult::Status::failed, 0,
                        "the server requires a client certificate (see --tls-cert)"};
            }
            return {IoResult::Status::failed, 0, "TLS: " + openssl_reason()};
        }
    }

    const OpenSsl& api_ = openssl();
    UniqueFd fd_;
    SSL* ssl_;
};

} // namespace

struct TlsClient::Context {
    SSL_CTX* ctx = nullptr;
    bool passphrase_asked = false;
    ~Context() { openssl().SSL_CTX_free(ctx); }
};

TlsClient::TlsClient(std::unique_ptr<Context> context, std::optional<std::string> server_name)
    : context_(std::move(context)), server_name_(std::move(server_name)) {}

TlsClient::~TlsClient() = default;

Expected<std::shared_ptr<const TlsClient>, std::string>
TlsClient::create(const TlsOptions& options) {
    if (options.cert_file.has_value() != options.key_file.has_value()) {
        return unexpected(std::string(options.cert_file ? "--tls-cert needs --tls-key"
                                                        : "--tls-key needs --tls-cert"));
    }
    if (options.server_name && options.server_name->empty()) {
        return unexpected(std::string("--tls-server-name: the name is empty"));
    }
    const OpenSsl& api = openssl(); // loads OpenSSL, or throws Fatal (69)
    auto context = std::make_unique<Context>();
    context->ctx = api.SSL_CTX_new(api.TLS_client_method());
    if (context->ctx == nullptr) {
        return unexpected("cannot set up TLS: " + openssl_reason());
    }
    SSL_CTX* ctx = context->ctx;
    // What the macros SSL_CTX_set_min_proto_version and SSL_CTX_set_mode expand to.
    api.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr);
    api.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    // The connection retries a write from where it stopped, and may do so with a new buffer.
    api.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE,
                     SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
    // Redis closes connections without a close_notify (CLIENT KILL, timeout): a plain end of file,
    // as on a socket. Replies are self-delimiting, so a truncation cannot pass for a whole reply.
    api.SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    api.SSL_CTX_set_default_passwd_cb(ctx, refuse_passphrase);
    api.SSL_CTX_set_default_passwd_cb_userdata(ctx, &context->passphrase_asked);

    if (options.ca_file) {
        if (auto readable = check_readable("--tls-ca-file", *options.ca_file); !readable) {
            return unexpected(readable.error());
        }
        if (api.SSL_CTX_load_verify_locations(ctx, options.ca_file->c_str(), nullptr) != 1) {
            return unexpected(fmt::format("--tls-ca-file: {} holds no usable PEM certificate: {}",
                                          *options.ca_file, openssl_reason()));
        }
    } else if (api.SSL_CTX_set_default_verify_paths(ctx) != 1) {
        return unexpected("cannot load the system's CA certificates: " + openssl_reason());
    }

    if (options.cert_file) {
        const auto& cert = *options.cert_file;
        const auto& key = *options.key_file;
        if (auto readable = check_readable("--tls-cert", cert); !readable) {
            return unexpected(readable.error());
        }
        if (auto readable = check_readable("--tls-key", key); !readable) {
            return unexpected(readable.error());
        }
        if (api.SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) {
            return unexpected(fmt::format("--tls-cert: {} holds no usable PEM certificate: {}",
                                          cert, openssl_reason()));
        }
        if (api.SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
            const bool mismatch = ERR_GET_LIB(api.ERR_peek_error()) == ERR_LIB_X509 &&
                                  first_reason_code() == X509_R_KEY_VALUES_MISMATCH;
            const std::string reason = openssl_reason();
            if (context->passphrase_asked) {
                return unexpected(fmt::format(
                    "--tls-key: {} is encrypted; give a key without a passphrase", key));
            }
            if (mismatch) {
                return unexpected(fmt::format(
                    "--tls-key: {} is not the key of the certificate in {}", key, cert));
            }
            return unexpected(
                fmt::format("--tls-key: {} holds no usable PEM private key: {}", key, reason));
        }
    }
    return std::shared_ptr<const TlsClient>(new TlsClient(std::move(context), options.server_name));
}

Expected<std::unique_ptr<Stream>, ConnectFailure> TlsClient::handshake(UniqueFd fd,
                                                                       const std::string& host,
                                                                       const Deadline& deadline,
                                                                       const Wakeup* wakeup) const {
    const OpenSsl& api = openssl();
    api.ERR_clear_error();
    SSL* ssl = api.SSL_new(context_->ctx);
    if (ssl == nullptr) {
        return unexpected(
            connect_failure(ConnectFailure::Kind::failed, "cannot start TLS: " + openssl_reason()));
    }
    // Owned by the stream from here on, so that every early return frees it.
    auto stream = std::make_unique<TlsStream>(std::move(fd), ssl);
    const std::string& name = server_name_ ? *server_name_ : host;
    bool named = false;
    if (is_ip_address(name)) {
        named = api.X509_VERIFY_PARAM_set1_ip_asc(api.SSL_get0_param(ssl), name.c_str()) == 1;
    } else {
        // SSL_set_tlsext_host_name, a macro, expands to this SSL_ctrl call.
        named = api.SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                             const_cast<char*>(name.c_str())) == 1 &&
                api.SSL_set1_host(ssl, name.c_str()) == 1;
    }
    if (!named || api.SSL_set_fd(ssl, stream->fd()) != 1) {
        return unexpected(
            connect_failure(ConnectFailure::Kind::failed, "cannot start TLS: " + openssl_reason()));
    }
    for (;;) {
        api.ERR_clear_error();
        errno = 0;
        const int rc = [&api, ssl] {
            const SigpipeHeld held;
            return api.SSL_connect(ssl);
        }();
        if (rc == 1) {
            return std::unique_ptr<Stream>(std::move(stream));
        }
        const int saved_errno = errno;
        const int error = api.SSL_get_error(ssl, rc);
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
            const short events = error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
            switch (wait_ready(stream->fd(), events, deadline, wakeup)) {
            case Readiness::timed_out:
                return unexpected(connect_failure(ConnectFailure::Kind::timed_out,
                                                  "no answer to the TLS handshake"));
            case Readiness::abandoned:
                return unexpected(connect_failure(ConnectFailure::Kind::abandoned, "interrupted"));
            case Readiness::ready:
                continue;
            }
        }
        if (const long verified = api.SSL_get_verify_result(ssl); verified != X509_V_OK) {
            api.ERR_clear_error();
            return unexpected(connect_failure(ConnectFailure::Kind::failed,
                                              verification_failure(verified, name)));
        }
        if (error == SSL_ERROR_SYSCALL || error == SSL_ERROR_ZERO_RETURN) {
            return unexpected(connect_failure(
                ConnectFailure::Kind::failed,
                saved_errno != 0 && saved_errno != ECONNRESET && saved_errno != EPIPE
                    ? fmt::format("the TLS handshake failed: {}", std::strerror(saved_errno))
                    : std::string("the server closed the connection during the TLS handshake")));
        }
        return unexpected(connect_failure(ConnectFailure::Kind::failed,
                                          "the TLS handshake failed: " + openssl_reason()));
    }
}

} // namespace redlockrun::redis
