#include "lock/token.hpp"

#include "base/fatal.hpp"

#include <fmt/core.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <sys/random.h>

namespace redlockrun::lock {

std::string make_token() {
    std::array<unsigned char, 16> bytes{};
    size_t filled = 0;
    while (filled < bytes.size()) {
        ssize_t n = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw Fatal(ExitStatus::os_error,
                        fmt::format("cannot get random bytes: {}", std::strerror(errno)));
        }
        filled += static_cast<size_t>(n);
    }
    static constexpr char hex_digits[] = "0123456789abcdef";
    std::string token;
    token.reserve(bytes.size() * 2);
    for (unsigned char byte : bytes) {
        token += hex_digits[byte >> 4];
        token += hex_digits[byte & 0xf];
    }
    return token;
}

} // namespace redlockrun::lock
