#include "redis/openssl_loader.hpp"

#include "base/fatal.hpp"

#include <fmt/core.h>
#include <openssl/opensslv.h>

#include <dlfcn.h>

namespace redlockrun::redis {

namespace {

// The sonames of the OpenSSL whose headers this file is compiled with: the table's types are only
// right for that ABI. Debian names the package that ships both after libssl's soname.
#define REDLOCKRUN_SHLIB_SUFFIX OPENSSL_MSTR(OPENSSL_SHLIB_VERSION)
constexpr const char* libcrypto_name = "libcrypto.so." REDLOCKRUN_SHLIB_SUFFIX;
constexpr const char* libssl_name = "libssl.so." REDLOCKRUN_SHLIB_SUFFIX;
constexpr const char* package_name = "libssl" REDLOCKRUN_SHLIB_SUFFIX;
#undef REDLOCKRUN_SHLIB_SUFFIX

[[noreturn]] void cannot_load(const char* library) {
    const char* reason = ::dlerror();
    throw Fatal(ExitStatus::unavailable,
                fmt::format("rediss:// needs OpenSSL's {} (package {}), which cannot be loaded: {}",
                            library, package_name, reason ? reason : "unknown error"));
}

// Never closed: OpenSSL registers its own clean-up to run at exit, which must find it mapped.
void* open_library(const char* library) {
    void* handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        cannot_load(library);
    }
    return handle;
}

template <typename Function>
void resolve(void* handle, const char* library, const char* name, Function& function) {
    ::dlerror();
    void* address = ::dlsym(handle, name);
    if (address == nullptr) {
        cannot_load(library);
    }
    // POSIX guarantees that a function's address survives the round trip through void*.
    function = reinterpret_cast<Function>(address);
}

OpenSsl load() {
    OpenSsl table;
    void* libcrypto = open_library(libcrypto_name);
    void* libssl = open_library(libssl_name);
#define REDLOCKRUN_RESOLVE_LIBCRYPTO(name) resolve(libcrypto, libcrypto_name, #name, table.name);
#define REDLOCKRUN_RESOLVE_LIBSSL(name) resolve(libssl, libssl_name, #name, table.name);
    REDLOCKRUN_LIBCRYPTO_FUNCTIONS(REDLOCKRUN_RESOLVE_LIBCRYPTO)
    REDLOCKRUN_LIBSSL_FUNCTIONS(REDLOCKRUN_RESOLVE_LIBSSL)
#undef REDLOCKRUN_RESOLVE_LIBCRYPTO
#undef REDLOCKRUN_RESOLVE_LIBSSL
    return table;
}

} // namespace

const OpenSsl& openssl() {
    // An exception leaves it unset, and the next call tries again.
    static const OpenSsl table = load();
    return table;
}

} // namespace redlockrun::redis
