/* The floor of keeping a metrics file: the file work `redlockrun --metrics-file FILE` cannot do
 * without, and nothing else.
 *
 *   metrics-floor FILE
 *
 * As a run that keeps FILE does when it ends: it opens FILE.lock and takes it (flock), reads FILE
 * whole, writes what it read to a new file beside it, flushes that to the disk (fsync) and renames
 * it over FILE. It writes back what it read, so the counts the bench's runs keep in FILE are
 * unchanged. Nothing else: no parsing, no merging, no formatting, no message. bench/run builds it
 * as redlockrun is built (a hardened PIE with the shared C library).
 *
 * Figure 1 runs it in the same rounds as the plain run and the run with --metrics-file: a run with
 * --metrics-file is judged against a plain run plus what this floor takes beyond plain `true`, the
 * work the disk and the file system do for any program that keeps such a file safely; what the run
 * costs beyond that is its own. Exit status: 0, or 70 with a line on stderr if any step failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static int fail(const char* what, const char* path) {
    fprintf(stderr, "metrics-floor: %s %s: %s\n", what, path, strerror(errno));
    return 70;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: metrics-floor FILE\n");
        return 70;
    }
    const char* path = argv[1];
    char lock_path[4096];
    char temporary[4096];
    if (snprintf(lock_path, sizeof lock_path, "%s.lock", path) >= (int)sizeof lock_path ||
        snprintf(temporary, sizeof temporary, "%s.floor.%ld", path, (long)getpid()) >=
            (int)sizeof temporary) {
        fprintf(stderr, "metrics-floor: the path is too long\n");
        return 70;
    }
    const int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0) {
        return fail("cannot open", lock_path);
    }
    if (flock(lock, LOCK_EX) != 0) {
        return fail("cannot lock", lock_path);
    }

    static char text[1 << 20];
    size_t length = 0;
    const int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in >= 0) {
        ssize_t got;
        while (length < sizeof text && (got = read(in, text + length, sizeof text - length)) > 0) {
            length += (size_t)got;
        }
        close(in);
    } else if (errno != ENOENT) {
        return fail("cannot read", path);
    }

    const int out = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        return fail("cannot open", temporary);
    }
    for (size_t written = 0; written < length;) {
        const ssize_t put = write(out, text + written, length - written);
        if (put < 0) {
            return fail("cannot write", temporary);
        }
        written += (size_t)put;
    }
    if (fsync(out) != 0) {
        return fail("cannot flush", temporary);
    }
    close(out);
    if (rename(temporary, path) != 0) {
        return fail("cannot rename", temporary);
    }
    close(lock);
    return 0;
}
