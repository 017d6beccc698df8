// The benchmark's critical section: the command every lock tool runs under contention.
//
//   critical-section LOG HOLD_US LABEL
//
// Appends one line "LABEL START_NS END_NS" to LOG, both times on CLOCK_MONOTONIC (one clock for
// every process on the machine), taken as the first and last thing main() does. In between it holds
// the lock for HOLD_US microseconds. The gap between one line's END_NS and the next START_NS is the
// handoff: the previous holder's command ended, its tool released, the next tool acquired, forked
// and exec'd this program.
//
// Built static by bench/run, and kept free of iostream and allocation, so that its own start-up is
// as small as it can be and the same for every tool.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>

namespace {

long long monotonic_ns() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

// Sleeps rather than spins: with 2 cores and many contenders, a spinning holder would steal the CPU
// that the next tool needs to hand the lock over.
void hold_for(long long microseconds) {
    timespec left{static_cast<time_t>(microseconds / 1000000),
                  static_cast<long>(microseconds % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

} // namespace

int main(int argc, char** argv) {
    const long long start = monotonic_ns();
    if (argc != 4) {
        static const char usage[] = "usage: critical-section LOG HOLD_US LABEL\n";
        (void)!write(2, usage, sizeof usage - 1);
        return 2;
    }
    hold_for(std::atoll(argv[2]));
    const long long end = monotonic_ns();

    char line[256];
    const int length = std::snprintf(line, sizeof line, "%s %lld %lld\n", argv[3], start, end);
    // O_APPEND and one write() per line: lines from concurrent holders never interleave (and they
    // never are concurrent unless the lock is broken, which the benchmark checks).
    const int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || length <= 0 || write(fd, line, static_cast<size_t>(length)) != length) {
        std::perror("critical-section: cannot append to the log");
        return 1;
    }
    close(fd);
    return 0;
}
