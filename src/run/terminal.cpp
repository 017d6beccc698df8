#include "run/terminal.hpp"

#include <csignal>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

namespace redlockrun::run {

namespace {

// tcsetpgrp() from a background process group raises SIGTTOU, which would stop redlockrun.
void set_foreground(int fd, pid_t pgid) {
    sigset_t ttou, previous;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    ::sigprocmask(SIG_BLOCK, &ttou, &previous);
    ::tcsetpgrp(fd, pgid);
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
}

} // namespace

Terminal Terminal::foreground() {
    Terminal terminal;
    UniqueFd fd(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (fd.valid() && ::tcgetpgrp(fd.get()) == ::getpgrp()) {
        terminal.fd_ = std::move(fd);
        terminal.own_group_ = ::getpgrp();
    }
    return terminal;
}

void Terminal::give_to(pid_t pgid) const {
    if (active()) {
        set_foreground(fd_.get(), pgid);
    }
}

void Terminal::take_back() const {
    if (active()) {
        set_foreground(fd_.get(), own_group_);
    }
}

} // namespace redlockrun::run
