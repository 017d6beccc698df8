/* The floor of ending a hold: the least a script can do to have a hold's keeper release the lock.
 *
 *   release-floor
 *
 * It asks the keeper of the hold named by $REDLOCKRUN_HOLD to release it, as `redlockrun --release`
 * does: it connects to the keeper's socket (the handle's path with ".sock" after it), writes
 * "release", waits for the answer, and removes the hold's record (the keeper leaves it for a
 * caller that is gone before it reads the answer). Nothing else: no option parsing, no config
 * files, no record read first, no message, no clean-up of other holds' files afterwards. bench/run
 * builds it as redlockrun is built (a hardened PIE with the shared C library), and
 * peers/release-floor-hold ends its section with it where peers/redlockrun-hold runs
 * `redlockrun --release`.
 *
 * Figure 3's mixed rows run both against waiting runs: the gap from the floor's release to a
 * waiting run is what the keeper, Redis and the waiting run take, which a hold cannot do without;
 * what `redlockrun --release` adds to it is its own work. Exit status: 0 if the keeper answered
 * "released", 76 if it answered anything else, 70 if it could not be asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int fail(const char* what) {
    fprintf(stderr, "release-floor: %s\n", what);
    return 70;
}

int main(void) {
    const char* handle = getenv("REDLOCKRUN_HOLD");
    if (handle == NULL || *handle == '\0') {
        return fail("$REDLOCKRUN_HOLD is not set");
    }
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    const int length = snprintf(address.sun_path, sizeof address.sun_path, "%s.sock", handle);
    if (length < 0 || (size_t)length >= sizeof address.sun_path) {
        return fail("the handle is too long for a socket's path");
    }
    const int keeper = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (keeper < 0 || connect(keeper, (const struct sockaddr*)&address, sizeof address) != 0) {
        return fail("cannot connect to the keeper");
    }
    static const char request[] = "release\n";
    if (send(keeper, request, sizeof request - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof request - 1)) {
        return fail("cannot ask the keeper");
    }
    char answer[128];
    size_t got = 0;
    while (got < sizeof answer - 1) {
        const ssize_t n = read(keeper, answer + got, sizeof answer - 1 - got);
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
        if (memchr(answer, '\n', got) != NULL) {
            break;
        }
    }
    answer[got] = '\0';
    close(keeper);
    unlink(handle);
    if (strcmp(answer, "released\n") != 0) {
        fprintf(stderr, "release-floor: the keeper answered: %s\n", answer);
        return 76;
    }
    return 0;
}
