#include "base/exit_status.hpp"
#include "run/wait_status.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace redlockrun;
using namespace redlockrun::run;

namespace {

// A real wait status from a real child.
int status_of_child(void (*body)()) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        body();
        _exit(99);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

} // namespace

TEST_CASE("wait status: exit codes pass through") {
    CHECK(exit_status_from_wait(status_of_child([] { _exit(0); })) == 0);
    CHECK(exit_status_from_wait(status_of_child([] { _exit(3); })) == 3);
    int status = status_of_child([] { _exit(42); });
    CHECK(exit_status_from_wait(status) == 42);
    CHECK(describe_wait_status(status) == "exited with status 42");
}

TEST_CASE("wait status: a signal death is 128+N") {
    int status = status_of_child([] {
        signal(SIGTERM, SIG_DFL);
        raise(SIGTERM);
    });
    CHECK(exit_status_from_wait(status) == 143);
    CHECK(describe_wait_status(status) == "was killed by SIGTERM");
    CHECK(exit_status_from_wait(status_of_child([] { raise(SIGKILL); })) == 137);
}

TEST_CASE("exit statuses: the documented numbers") {
    CHECK(to_int(ExitStatus::usage) == 64);
    CHECK(to_int(ExitStatus::foreign_value) == 65);
    CHECK(to_int(ExitStatus::unavailable) == 69);
    CHECK(to_int(ExitStatus::internal) == 70);
    CHECK(to_int(ExitStatus::os_error) == 71);
    CHECK(to_int(ExitStatus::not_acquired) == 75);
    CHECK(to_int(ExitStatus::lock_lost) == 76);
    CHECK(to_int(ExitStatus::cannot_execute) == 126);
    CHECK(to_int(ExitStatus::command_not_found) == 127);
    CHECK(signal_exit_status(SIGINT) == 130);
    CHECK(signal_name(SIGINT) == "SIGINT");
}

TEST_CASE("signal names: real-time signals as kill -l names them") {
    CHECK(signal_name(SIGALRM) == "SIGALRM");
    CHECK(signal_name(SIGRTMIN) == "SIGRTMIN");
    CHECK(signal_name(SIGRTMIN + 3) == "SIGRTMIN+3");
    CHECK(signal_name(SIGRTMAX - 1) == "SIGRTMAX-1");
    CHECK(signal_name(SIGRTMAX) == "SIGRTMAX");
    CHECK(signal_name(200) == "signal 200");
}
