#include "run/supervisor.hpp"

#include "run/wait_status.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <poll.h>
#include <sys/wait.h>

namespace redlockrun::run {

namespace {

// With nothing due, poll() still wakes now and then; any period would do.
constexpr Millis idle_poll{60'000};

} // namespace

Supervisor::Supervisor(pid_t child, const Terminal& terminal, const Logger& log)
    : child_(child), terminal_(terminal), log_(log) {}

void Supervisor::signal_group(int signal_number) const {
    // The whole group, so that the children of `sh -c` get it too.
    if (::kill(-child_, signal_number) != 0 && errno == ESRCH) {
        ::kill(child_, signal_number);
    }
}

void Supervisor::on_signal(int signal_number) {
    if (signal_number == SIGCHLD) {
        reap();
        return;
    }
    if (exited()) {
        return;
    }
    log_.info("forwarding {} to the command", signal_name(signal_number));
    signal_group(signal_number);
}

void Supervisor::terminate(Millis kill_after) {
    if (exited() || terminating_) {
        return;
    }
    terminating_ = true;
    signal_group(SIGTERM);
    // A stopped command would not act on SIGTERM until continued.
    signal_group(SIGCONT);
    kill_at_ = steady_now() + kill_after;
}

void Supervisor::reap() {
    while (!exited()) {
        int status = 0;
        const int flags = WNOHANG | (terminal_.active() ? WUNTRACED : 0);
        pid_t pid = ::waitpid(child_, &status, flags);
        if (pid < 0 && errno == EINTR) {
            continue;
        }
        if (pid <= 0) {
            return;
        }
        if (WIFSTOPPED(status)) {
            follow_stop();
            continue;
        }
        wait_status_ = status;
        terminal_.take_back();
    }
}

void Supervisor::follow_stop() {
    terminal_.take_back();
    ::kill(::getpid(), SIGSTOP);
    // Continued (fg): give the terminal back to the command and let it go on.
    terminal_.give_to(child_);
    ::kill(-child_, SIGCONT);
}

int Supervisor::wait(SignalPipe& signals, Watch* watch) {
    reap(); // it may have ended before the first SIGCHLD was read
    while (!exited()) {
        Deadline due = watch ? watch->next_due() : std::nullopt;
        if (kill_at_) {
            due = earliest(*kill_at_, due);
        }
        pollfd fd{signals.fd(), POLLIN, 0};
        if (::poll(&fd, 1, poll_timeout(due, idle_poll)) < 0 && errno != EINTR) {
            // Without poll we can still wait: block in waitpid instead.
            int status = 0;
            pid_t pid;
            while ((pid = ::waitpid(child_, &status, 0)) < 0 && errno == EINTR) {
            }
            wait_status_ = pid == child_ ? status : (127 << 8);
            terminal_.take_back();
            break;
        }
        for (int signal_number : signals.drain()) {
            on_signal(signal_number);
        }
        if (exited()) {
            break;
        }
        const SteadyTime now = steady_now();
        if (kill_at_ && now >= *kill_at_) {
            log_.error("the command did not stop after SIGTERM; sending SIGKILL");
            signal_group(SIGKILL);
            kill_at_.reset();
        }
        if (watch) {
            if (auto watch_due = watch->next_due(); watch_due && now >= *watch_due) {
                watch->on_due(*this);
            }
        }
    }
    return *wait_status_;
}

} // namespace redlockrun::run
