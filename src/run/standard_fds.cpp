#include "run/standard_fds.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace redlockrun::run {

bool open_closed_standard_fds() noexcept {
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
            continue;
        }
        // open() returns the lowest free number, which is this one: the lower ones are open.
        const int opened = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (opened != fd) {
            if (opened >= 0) {
                ::close(opened);
            }
            return false;
        }
    }
    return true;
}

} // namespace redlockrun::run
