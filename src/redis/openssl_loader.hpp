// OpenSSL, loaded from the system's shared libraries when a rediss:// URL first needs it. A run
// without TLS maps neither libssl nor libcrypto, and pays nothing for them at start-up
// (ARCHITECTURE.md has the figures). The binary is not linked against OpenSSL at all: every
// OpenSSL function redlockrun calls is looked up by name into the table below, typed from
// OpenSSL's own declaration, so the compiler checks each call through the table as it would a
// direct call. Only redis/tls.cpp uses it.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace redlockrun::redis {

// Every function redlockrun calls, by the library that exports it. OpenSSL's function-like macros
// (SSL_CTX_set_mode, SSL_set_tlsext_host_name...) expand to calls of SSL_CTX_ctrl and SSL_ctrl,
// which tls.cpp therefore calls through the table itself; a direct call to OpenSSL anywhere would
// fail to link, since the binary does not link libssl.
#define REDLOCKRUN_LIBCRYPTO_FUNCTIONS(X)                                                          \
    X(ERR_clear_error)                                                                             \
    X(ERR_peek_error)                                                                              \
    X(ERR_reason_error_string)                                                                     \
    X(X509_VERIFY_PARAM_set1_ip_asc)                                                               \
    X(X509_verify_cert_error_string)

#define REDLOCKRUN_LIBSSL_FUNCTIONS(X)                                                             \
    X(SSL_CTX_ctrl)                                                                                \
    X(SSL_CTX_free)                                                                                \
    X(SSL_CTX_load_verify_locations)                                                               \
    X(SSL_CTX_new)                                                                                 \
    X(SSL_CTX_set_default_passwd_cb)                                                               \
    X(SSL_CTX_set_default_passwd_cb_userdata)                                                      \
    X(SSL_CTX_set_default_verify_paths)                                                            \
    X(SSL_CTX_set_options)                                                                         \
    X(SSL_CTX_set_verify)                                                                          \
    X(SSL_CTX_use_PrivateKey_file)                                                                 \
    X(SSL_CTX_use_certificate_chain_file)                                                          \
    X(SSL_connect)                                                                                 \
    X(SSL_ctrl)                                                                                    \
    X(SSL_free)                                                                                    \
    X(SSL_get0_param)                                                                              \
    X(SSL_get_error)                                                                               \
    X(SSL_get_verify_result)                                                                       \
    X(SSL_new)                                                                                     \
    X(SSL_read_ex)                                                                                 \
    X(SSL_set1_host)                                                                               \
    X(SSL_set_fd)                                                                                  \
    X(SSL_write_ex)                                                                                \
    X(TLS_client_method)

#define REDLOCKRUN_OPENSSL_MEMBER(name) decltype(&::name) name = nullptr;

struct OpenSsl {
    REDLOCKRUN_LIBCRYPTO_FUNCTIONS(REDLOCKRUN_OPENSSL_MEMBER)
    REDLOCKRUN_LIBSSL_FUNCTIONS(REDLOCKRUN_OPENSSL_MEMBER)
};

#undef REDLOCKRUN_OPENSSL_MEMBER

// The table, filled on the first call: libcrypto and libssl of the OpenSSL version whose headers
// redlockrun was built with (libcrypto.so.3 and libssl.so.3 for OpenSSL 3). Throws Fatal
// (unavailable, 69) naming the library and its package if either cannot be loaded or lacks a
// function; a later call tries again. The libraries stay loaded until the process ends.
const OpenSsl& openssl();

} // namespace redlockrun::redis
