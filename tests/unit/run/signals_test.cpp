#include "run/signals.hpp"

#include <doctest/doctest.h>

#include <csignal>

using namespace redlockrun::run;

TEST_CASE("signals: every catchable signal that would end redlockrun asks it to stop") {
    for (int signal_number :
         {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
          SIGXFSZ, SIGIO, SIGPWR, SIGSTKFLT, SIGRTMIN, SIGRTMIN + 3, SIGRTMAX}) {
        CAPTURE(signal_number);
        CHECK(asks_to_stop(signal_number));
    }
}

TEST_CASE("signals: faults, job control, signals ignored by default and uncatchable ones do not") {
    for (int signal_number :
         {SIGSEGV, SIGBUS,  SIGILL,   SIGFPE,       SIGABRT,      SIGTRAP, SIGSYS,
          SIGCHLD, SIGCONT, SIGWINCH, SIGURG,       SIGTSTP,      SIGTTIN, SIGTTOU,
          SIGPIPE, SIGKILL, SIGSTOP,  SIGRTMIN - 1, SIGRTMAX + 1, 0}) {
        CAPTURE(signal_number);
        CHECK_FALSE(asks_to_stop(signal_number));
    }
}

TEST_CASE("signals: the list holds each of them once, in order, each in the signal pipe's byte") {
    const auto signals = stopping_signals();
    int previous = 0;
    int real_time = 0;
    for (int signal_number : signals) {
        CAPTURE(signal_number);
        CHECK(asks_to_stop(signal_number));
        CHECK(signal_number > previous);
        CHECK(signal_number <= 255);
        previous = signal_number;
        real_time += signal_number >= SIGRTMIN ? 1 : 0;
    }
    CHECK(real_time == SIGRTMAX - SIGRTMIN + 1);
    CHECK(signals.size() == 14 + real_time);
}
