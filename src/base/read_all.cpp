#include "base/read_all.hpp"

#include <cerrno>
#include <unistd.h>

namespace redlockrun {

Expected<std::string, ReadAllFailure> read_all(int fd, std::size_t limit) {
    std::string text;
    char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got == 0) {
            return text;
        }
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return unexpected(ReadAllFailure{errno});
        }
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > limit) {
            return unexpected(ReadAllFailure{});
        }
    }
}

} // namespace redlockrun
