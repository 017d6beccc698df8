/* Preloaded into a redis-server under test (LD_PRELOAD), it moves that server's wall clock, and
 * only its: CLOCK_REALTIME, gettimeofday() and time() answer the real time plus an offset in
 * nanoseconds, which the test sets at any moment by writing the 8 bytes (a native int64) of the
 * file that CLOCKSHIFT_FILE names; the monotonic clocks are left alone. Redis expires keys, and
 * answers TIME, by that wall clock. The clock is read by system call: nothing here allocates or
 * calls back into the C library's time functions, so a malloc that reads the clock while it
 * starts (jemalloc, in Debian's redis-server) cannot recurse into it. The fault harness builds it
 * (harness.py, ServerClock). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile const int64_t *offset_ns;

__attribute__((constructor)) static void map_offset(void) {
    const char *path = getenv("CLOCKSHIFT_FILE");
    if (path == NULL) {
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    void *mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped != MAP_FAILED) {
        offset_ns = mapped;
    }
}

static int wall_clock(clockid_t id) {
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (syscall(SYS_clock_gettime, id, ts) != 0) {
        return -1;
    }
    if (offset_ns != NULL && wall_clock(id)) {
        int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + *offset_ns;
        ts->tv_sec = ns / 1000000000;
        ts->tv_nsec = ns % 1000000000;
    }
    return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
        return -1;
    }
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
        return (time_t)-1;
    }
    if (out != NULL) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}
