#include "hold/pipe_chain.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

namespace redlockrun::hold {

namespace {

PipeId pipe_number(ino_t inode) {
    return PipeId{12, inode};
}

// A process that reads `reads` and writes its standard output to `output` (0: no pipe), started
// at tick 100, before redlockrun's parent (tick 200 in these tests).
PipeUse process(pid_t pid, std::vector<ino_t> reads, ino_t output, bool asleep = true) {
    PipeUse use{pid, {}, std::nullopt, asleep, true, 100};
    for (ino_t inode : reads) {
        use.reads.push_back(pipe_number(inode));
    }
    if (output != 0) {
        use.output = pipe_number(output);
    }
    return use;
}

std::vector<PipeId> pipes(std::vector<ino_t> inodes) {
    std::vector<PipeId> ids;
    for (ino_t inode : inodes) {
        ids.push_back(pipe_number(inode));
    }
    return ids;
}

struct OwnPipe {
    int ends[2] = {-1, -1};
    OwnPipe() { REQUIRE(::pipe(ends) == 0); }
    ~OwnPipe() {
        ::close(ends[0]);
        ::close(ends[1]);
    }
};

} // namespace

TEST_CASE("the chain follows each filter's output to the pipe the script reads") {
    // $(redlockrun --hold | cat | tee /dev/null): redlockrun writes 1, cat reads it and writes 2,
    // tee reads 2 and writes 3, the script reads 3 and writes its output to a file.
    const std::vector<PipeUse> session{process(30, {3}, 0), process(20, {2}, 3),
                                       process(10, {1}, 2)};
    CHECK(downstream_pipes(pipe_number(1), session, 16) == pipes({1, 2, 3}));
}

TEST_CASE("a reader whose output is no pipe ends the chain") {
    // redlockrun --hold | cat >/dev/null, in a script whose own output is a pipe (9).
    const std::vector<PipeUse> session{process(10, {1}, 0), process(5, {7}, 9)};
    CHECK(downstream_pipes(pipe_number(1), session, 16) == pipes({1}));
}

TEST_CASE("every reader of a pipe is followed, and a pipe only once") {
    const std::vector<PipeUse> session{process(10, {1}, 2), process(11, {1}, 3),
                                       process(12, {2, 3}, 1)};
    CHECK(downstream_pipes(pipe_number(1), session, 16) == pipes({1, 2, 3}));
}

TEST_CASE("a long chain is followed only as far as the limit") {
    std::vector<PipeUse> session;
    for (ino_t inode = 1; inode < 100; ++inode) {
        session.push_back(process(static_cast<pid_t>(inode), {inode}, inode + 1));
    }
    CHECK(downstream_pipes(pipe_number(1), session, 4) == pipes({1, 2, 3, 4}));
}

TEST_CASE("reads_any finds a reader of any pipe of a chain") {
    const PipeUse script = process(10, {4, 7}, 0);
    CHECK(reads_any(script, pipes({1, 7})));
    CHECK_FALSE(reads_any(script, pipes({1, 2})));
    CHECK_FALSE(reads_any(process(10, {}, 7), pipes({7}))); // a writer is no reader
}

TEST_CASE("a chain counts once every process that reads one of its pipes was asleep") {
    // A child between its fork and its redirections, running, has its shell's descriptors.
    const std::vector<PipeUse> session{process(10, {1}, 2), process(11, {2}, 0, false),
                                       process(12, {5}, 6, false)};
    CHECK_FALSE(chain_settled(pipes({1, 2}), session, 200));
    CHECK(chain_settled(pipes({1}), session, 200));
    CHECK(chain_settled(pipes({1, 2, 3}), {process(10, {1}, 2), process(11, {2}, 3)}, 200));
}

TEST_CASE("a chain does not count while a process younger than redlockrun's parent runs") {
    // It may be a filter of redlockrun's pipeline moving the pipe to its stdin: between the dup2
    // and the close, a look at its descriptors one by one may find the pipe at neither place.
    PipeUse moving = process(11, {}, 0, false);
    moving.start_time = 200;
    CHECK_FALSE(chain_settled(pipes({1}), {process(10, {1}, 0), moving}, 200));
    moving.asleep = true;
    CHECK(chain_settled(pipes({1}), {process(10, {1}, 0), moving}, 200));
    // An older one that runs (a build in the background) is no filter of it.
    CHECK(chain_settled(pipes({1}), {process(10, {1}, 0), process(11, {}, 0, false)}, 200));
}

TEST_CASE("a chain does not count while a process whose descriptors could not be read runs") {
    PipeUse unread = process(13, {}, 0, false);
    unread.known = false;
    CHECK_FALSE(chain_settled(pipes({1}), {process(10, {1}, 2), unread}, 200));
    unread.asleep = true; // one that may never be read (another user's): it changes nothing
    CHECK(chain_settled(pipes({1}), {process(10, {1}, 2), unread}, 200));
}

TEST_CASE("a process's read ends are read from /proc, its write ends are not") {
    OwnPipe pipe;
    const auto read_end = pipe_of_descriptor(pipe.ends[0]);
    REQUIRE(read_end.has_value());
    CHECK(pipe_of_descriptor(pipe.ends[1]) == read_end); // both ends are one pipe
    CHECK_FALSE(pipe_of_descriptor(STDIN_FILENO) == read_end);

    const PipeUse own = pipe_use_of(::getpid());
    CHECK(own.pid == ::getpid());
    CHECK_FALSE(own.asleep); // reading its own descriptors
    CHECK(std::count(own.reads.begin(), own.reads.end(), *read_end) == 1);

    ::close(pipe.ends[0]);
    pipe.ends[0] = -1;
    CHECK_FALSE(reads_any(pipe_use_of(::getpid()), {*read_end}));
}

TEST_CASE("a process waiting to read is seen asleep, with the pipe it reads") {
    OwnPipe pipe;
    const PipeId read_end = *pipe_of_descriptor(pipe.ends[0]);
    const pid_t reader = ::fork();
    REQUIRE(reader >= 0);
    if (reader == 0) {
        char byte = 0;
        ::_exit(::read(pipe.ends[0], &byte, 1) == 1 ? 0 : 1);
    }
    PipeUse seen;
    for (int tries = 0; tries < 5000 && !seen.asleep; ++tries) { // up to 5 s on a loaded machine
        seen = pipe_use_of(reader);
        if (!seen.asleep) {
            ::usleep(1000);
        }
    }
    CHECK(seen.asleep);
    CHECK(reads_any(seen, {read_end}));
    CHECK(::write(pipe.ends[1], "x", 1) == 1);
    int status = -1;
    CHECK(::waitpid(reader, &status, 0) == reader);
    CHECK(status == 0);
}

TEST_CASE("the session's processes are searched, without the one left out") {
    OwnPipe pipe;
    const PipeId read_end = *pipe_of_descriptor(pipe.ends[0]);
    const auto reads_it = [&](const std::vector<PipeUse>& uses) {
        return std::any_of(uses.begin(), uses.end(), [&](const PipeUse& use) {
            return use.pid == ::getpid() && reads_any(use, {read_end});
        });
    };
    CHECK(reads_it(pipe_uses_in_session(::getsid(0), {})));
    CHECK_FALSE(reads_it(pipe_uses_in_session(::getsid(0), {1, ::getpid()})));
}

} // namespace redlockrun::hold
