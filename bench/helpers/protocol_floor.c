/* The floor of redlockrun's protocol: the least a client can do to run a command under its lock.
 *
 *   protocol-floor ACQUIRE_SHA RELEASE_SHA KEY COMMAND [ARG...]
 *
 * It sends exactly the requests redlockrun sends in an uncontended run, on one TCP connection to
 * $REDIS_URL (redis://HOST:PORT, an IPv4 address): EVALSHA of the acquire script, then, after
 * COMMAND has run (posix_spawnp, waitpid), EVALSHA of the release script, with redlockrun's keys
 * and arguments. Nothing else: no option parsing, no PATH check before the lock, no signal
 * forwarding, no terminal, no renewal, no environment for the command, and only as much reply
 * checking as it takes to know the lock was granted. bench/run loads the scripts (the same text
 * redlockrun embeds, so the same SHA1s) and builds this program as redlockrun is built: a hardened
 * PIE with the shared C library.
 *
 * Figure 1 runs it beside redlockrun: the difference between the two is what redlockrun's own
 * work costs; the difference between this and flock(1) is the protocol's (TCP, two round trips,
 * two Lua scripts). Exit status: the command's, or 75 if the lock was not granted, 70 on any
 * other failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static void fail(const char* what) {
    fprintf(stderr, "protocol-floor: %s\n", what);
    exit(70);
}

/* Encodes one command as a RESP array into out; returns its length. */
static size_t encode(char* out, size_t room, int argc, const char* const* argv) {
    size_t used = (size_t)snprintf(out, room, "*%d\r\n", argc);
    for (int i = 0; i < argc && used < room; i++) {
        used +=
            (size_t)snprintf(out + used, room - used, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    }
    if (used >= room) {
        fail("request too long");
    }
    return used;
}

static int starts_with(const char* text, const char* prefix) {
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* The length of the complete RESP reply at the start of text, or 0 if more must arrive first. */
static size_t reply_length(const char* text, size_t length) {
    const char* line_end = memmem(text, length, "\r\n", 2);
    if (!line_end) {
        return 0;
    }
    size_t used = (size_t)(line_end - text) + 2;
    long count = atol(text + 1);
    if (text[0] == '$') {
        return count < 0 ? used
                         : (used + (size_t)count + 2 <= length ? used + (size_t)count + 2 : 0);
    }
    if (text[0] == '*') {
        for (long i = 0; i < count; i++) {
            size_t element = reply_length(text + used, length - used);
            if (element == 0) {
                return 0;
            }
            used += element;
        }
    }
    return used; /* '+', '-', ':' and a complete array */
}

/* Sends a request and reads its whole reply into reply, as a string. */
static void round_trip(int fd, const char* request, size_t length, char* reply, size_t room) {
    if (send(fd, request, length, MSG_NOSIGNAL) != (ssize_t)length) {
        fail("send failed");
    }
    size_t got = 0;
    do {
        if (got == room - 1) {
            fail("reply too long");
        }
        ssize_t n = recv(fd, reply + got, room - 1 - got, 0);
        if (n <= 0) {
            fail("the connection closed");
        }
        got += (size_t)n;
        reply[got] = '\0';
    } while (reply_length(reply, got) == 0);
}

int main(int argc, char** argv) {
    if (argc < 5) {
        fail("usage: protocol-floor ACQUIRE_SHA RELEASE_SHA KEY COMMAND [ARG...]");
    }
    const char* acquire_sha = argv[1];
    const char* release_sha = argv[2];
    const char* key = argv[3];
    char** command = argv + 4;

    const char* url = getenv("REDIS_URL");
    if (!url || strncmp(url, "redis://", 8) != 0 || !strchr(url + 8, ':')) {
        fail("REDIS_URL must be redis://HOST:PORT");
    }
    char host_address[64];
    snprintf(host_address, sizeof host_address, "%.*s", (int)(strchr(url + 8, ':') - (url + 8)),
             url + 8);
    struct sockaddr_in address = {.sin_family = AF_INET,
                                  .sin_port = htons((uint16_t)atoi(strchr(url + 8, ':') + 1))};
    if (inet_pton(AF_INET, host_address, &address.sin_addr) != 1) {
        fail("REDIS_URL's host must be an IPv4 address");
    }

    char owner[512], fence[512], wake[512], queue[512];
    snprintf(owner, sizeof owner, "{%s}:redlockrun:owner", key);
    snprintf(fence, sizeof fence, "{%s}:redlockrun:fence", key);
    snprintf(wake, sizeof wake, "{%s}:redlockrun:wake", key);
    snprintf(queue, sizeof queue, "{%s}:redlockrun:queue", key);
    unsigned char random_bytes[16];
    if (getrandom(random_bytes, sizeof random_bytes, 0) != (ssize_t)sizeof random_bytes) {
        fail("getrandom failed");
    }
    char token[33];
    for (size_t i = 0; i < sizeof random_bytes; i++) {
        snprintf(token + 2 * i, 3, "%02x", random_bytes[i]);
    }
    struct utsname names;
    uname(&names);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)getpid());

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fd < 0 || connect(fd, (struct sockaddr*)&address, sizeof address) != 0) {
        fail("cannot connect");
    }

    char request[4096], reply[4096];
    // As redlockrun's default run sends them: no --min-hold (0), exclusive (--limit 1), so no
    // waiter id, and a place in the queue kept for 10 s, as a run that may wait has.
    const char* acquire[] = {"EVALSHA",      acquire_sha, "5", key,   owner,   fence,
                             wake,           queue,       "0", token, "30000", "ms",
                             names.nodename, pid,         "0", "1",   "",      "10000"};
    round_trip(fd, request, encode(request, sizeof request, 18, acquire), reply, sizeof reply);
    // {'granted', value, fence, validity_ms, now_ms} (acquire.lua).
    if (!starts_with(reply, "*5\r\n$7\r\ngranted\r\n")) {
        return reply[0] == '-' ? (fprintf(stderr, "protocol-floor: %s", reply), 70) : 75;
    }

    pid_t child;
    int status = 0;
    if (posix_spawnp(&child, command[0], NULL, NULL, command, environ) != 0 ||
        waitpid(child, &status, 0) != child) {
        fail("cannot run the command");
    }

    // The unit, the limit, and "the command ran".
    const char* release[] = {"EVALSHA", release_sha, "5",   key,  owner, fence, wake,
                             queue,     "0",         token, "ms", "1",   "1"};
    round_trip(fd, request, encode(request, sizeof request, 13, release), reply, sizeof reply);
    if (!starts_with(reply, "*1\r\n$8\r\nreleased\r\n")) {
        fail("the release was refused");
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
