#include "base/log.hpp"

#include "base/printable.hpp"

#include <cerrno>
#include <string>
#include <unistd.h>

namespace redlockrun {

void Logger::write(std::string_view line) {
    // One write(2) per message so that lines from concurrent processes do not interleave. A value
    // quoted in the message (a key, a file name, a host name from Redis) cannot break the line.
    std::string text = "redlockrun: " + printable(line);
    text.push_back('\n');
    const char* data = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t written = ::write(STDERR_FILENO, data, left);
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        data += written;
        left -= static_cast<size_t>(written);
    }
}

} // namespace redlockrun
