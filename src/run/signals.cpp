#include "run/signals.hpp"

#include "base/fatal.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace redlockrun::run {

namespace {

// Each signal travels through the pipe as one byte: the real-time signals end at 64 on Linux.
static_assert(NSIG - 1 <= UCHAR_MAX, "a signal number must fit in the signal pipe's byte");

volatile sig_atomic_t pipe_write_fd = -1;

extern "C" void on_signal(int signal_number) {
    const int saved_errno = errno;
    const auto byte = static_cast<unsigned char>(signal_number);
    // If the pipe is full, the loop has plenty of unread wake-ups already; dropping one is fine
    // for SIGCHLD (waitpid reaps all) and repeats of the same signal.
    [[maybe_unused]] ssize_t ignored = ::write(pipe_write_fd, &byte, 1);
    errno = saved_errno;
}

[[noreturn]] void fail(const char* what) {
    throw Fatal(ExitStatus::os_error, fmt::format("{}: {}", what, std::strerror(errno)));
}

} // namespace

bool asks_to_stop(int signal_number) {
    switch (signal_number) {
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
    case SIGQUIT:
    case SIGUSR1:
    case SIGUSR2:
    case SIGALRM:
    case SIGVTALRM:
    case SIGPROF:
    case SIGXCPU:
    case SIGXFSZ:
    case SIGIO: // also SIGPOLL
#ifdef SIGPWR
    case SIGPWR:
#endif
#ifdef SIGSTKFLT
    case SIGSTKFLT:
#endif
        return true;
    default:
        // The C library keeps the first few for itself (threads): SIGRTMIN comes after them.
        return signal_number >= SIGRTMIN && signal_number <= SIGRTMAX;
    }
}

std::vector<int> stopping_signals() {
    std::vector<int> signals;
    for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
        if (asks_to_stop(signal_number)) {
            signals.push_back(signal_number);
        }
    }
    return signals;
}

SignalPipe::SignalPipe() : changed_signals_(stopping_signals()) {
    changed_signals_.push_back(SIGCHLD);
    changed_signals_.push_back(SIGPIPE);
    saved_.resize(changed_signals_.size());

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        fail("cannot create the signal pipe");
    }
    read_end_.reset(fds[0]);
    write_end_.reset(fds[1]);
    pipe_write_fd = fds[1];

    sigset_t changed;
    sigemptyset(&changed);
    for (int signal_number : changed_signals_) {
        sigaddset(&changed, signal_number);
    }
    // Held back while their dispositions change, so that one call each both installs a handler and
    // reads the disposition it replaces: a signal redlockrun was started with ignored (as under
    // nohup) is ignored again before it can be delivered, and setting it back to SIG_IGN discards
    // it if it arrived meanwhile.
    ::sigprocmask(SIG_BLOCK, &changed, &startup_mask_);

    struct sigaction handler {};
    handler.sa_handler = on_signal;
    sigemptyset(&handler.sa_mask);
    // No SA_NOCLDSTOP: a command stopped from the terminal (Ctrl-Z) must be noticed.
    handler.sa_flags = SA_RESTART;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);

    for (size_t i = 0; i < changed_signals_.size(); ++i) {
        const int signal_number = changed_signals_[i];
        if (signal_number == SIGPIPE) {
            ::sigaction(signal_number, &ignore, &saved_[i]);
            continue;
        }
        ::sigaction(signal_number, &handler, &saved_[i]);
        if (signal_number != SIGCHLD && saved_[i].sa_handler == SIG_IGN) {
            ::sigaction(signal_number, &saved_[i], nullptr);
        }
    }
    // Signals redlockrun must see were perhaps blocked by whoever started it.
    ::sigprocmask(SIG_UNBLOCK, &changed, nullptr);
}

SignalPipe::~SignalPipe() {
    for (size_t i = 0; i < changed_signals_.size(); ++i) {
        ::sigaction(changed_signals_[i], &saved_[i], nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &startup_mask_, nullptr);
    pipe_write_fd = -1;
}

std::vector<int> SignalPipe::drain() {
    std::vector<int> signals;
    unsigned char buffer[64];
    for (;;) {
        ssize_t n = ::read(read_end_.get(), buffer, sizeof buffer);
        if (n > 0) {
            signals.insert(signals.end(), buffer, buffer + n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return signals;
    }
}

void SignalPipe::restore_in_child() const noexcept {
    for (size_t i = 0; i < changed_signals_.size(); ++i) {
        ::sigaction(changed_signals_[i], &saved_[i], nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &startup_mask_, nullptr);
}

SignalPipe::BlockAll::BlockAll() {
    sigset_t all;
    sigfillset(&all);
    ::sigprocmask(SIG_BLOCK, &all, &previous_);
}

SignalPipe::BlockAll::~BlockAll() {
    ::sigprocmask(SIG_SETMASK, &previous_, nullptr);
}

} // namespace redlockrun::run
