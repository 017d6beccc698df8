#include "hold/owner_stop.hpp"

#include <doctest/doctest.h>

#include <algorithm>

namespace redlockrun::hold {

namespace {

// A process of session 100 (led by the login shell, pid 100) unless told otherwise.
ProcessStat process(pid_t pid, pid_t parent, pid_t group, unsigned long long start,
                    pid_t session = 100) {
    ProcessStat stat;
    stat.pid = pid;
    stat.state = 'S';
    stat.parent = parent;
    stat.group = group;
    stat.session = session;
    stat.start_time = start;
    return stat;
}

std::vector<pid_t> sorted(std::vector<pid_t> pids) {
    std::sort(pids.begin(), pids.end());
    return pids;
}

} // namespace

// A caller (200) runs the owner (300) in its own process group 200; the owner ran a command
// (301, with a child 302), then was killed: 301 went to init. The caller goes on and starts 400.
TEST_CASE("what an exited owner left in its caller's group is its work, and the caller's is not") {
    const ProcessStat owner = process(300, 200, 200, 50);
    const std::vector<ProcessStat> after{
        process(1, 0, 1, 0, 1),     process(100, 1, 100, 1),    process(200, 100, 200, 10),
        process(301, 1, 200, 60),   process(302, 301, 200, 61), process(400, 200, 200, 70),
        process(500, 100, 500, 80), // another job of the login shell, in a group of its own
    };
    CHECK(sorted(work_of(owner, after, false, false)) == std::vector<pid_t>{301, 302});
}

TEST_CASE("processes that started before the owner are never its leftovers") {
    const ProcessStat owner = process(300, 200, 200, 50);
    // 250 was reparented to init too, but it was there before the owner: someone else's.
    const std::vector<ProcessStat> after{process(200, 100, 200, 10), process(250, 1, 200, 40)};
    CHECK(work_of(owner, after, false, false).empty());
}

TEST_CASE("an owner that led its session leaves its work in every group of it") {
    // cron's sh -c exec'd the script: it leads session and group 300; a pipeline of its ran in
    // group 310 (a subshell with job control); a subreaper outside the session took the orphans.
    const ProcessStat owner = process(300, 1, 300, 50, 300);
    const std::vector<ProcessStat> after{
        process(310, 900, 310, 60, 300), process(311, 310, 310, 61, 300),
        process(900, 1, 900, 5, 900),    // the subreaper
        process(901, 900, 900, 70, 900), // a process of the subreaper's own
    };
    CHECK(sorted(work_of(owner, after, false, false)) == std::vector<pid_t>{310, 311});
}

TEST_CASE("while the owner runs, its work is itself and its descendants in its session") {
    const ProcessStat owner = process(300, 200, 200, 50);
    const std::vector<ProcessStat> now{
        process(200, 100, 200, 10),
        process(300, 200, 200, 50),
        process(301, 300, 200, 60),
        process(302, 301, 200, 61),
        process(400, 200, 200, 70),
        process(303, 300, 303, 62, 303), // a daemon it started with setsid: not its session
    };
    CHECK(sorted(work_of(owner, now, true, false)) == std::vector<pid_t>{300, 301, 302});
}

TEST_CASE("an interactive owner's work is its foreground job, never the shell") {
    ProcessStat shell = process(100, 1, 100, 1);
    shell.terminal = 34816;
    shell.foreground_group = 700;
    const std::vector<ProcessStat> now{shell, process(700, 100, 700, 20),
                                       process(701, 700, 700, 21), process(800, 100, 800, 30)};
    CHECK(sorted(work_of(shell, now, true, true)) == std::vector<pid_t>{700, 701});
    // The job being stopped is that group, whatever comes to the foreground after it.
    shell.foreground_group = 800;
    CHECK(sorted(work_of(shell, now, true, true, 700)) == std::vector<pid_t>{700, 701});
    // At the prompt, the shell is the foreground: nothing to stop.
    shell.foreground_group = 100;
    const std::vector<ProcessStat> at_prompt{shell, process(800, 100, 800, 30)};
    CHECK(work_of(shell, at_prompt, true, true).empty());
}

TEST_CASE("zombies are no one's work") {
    const ProcessStat owner = process(300, 200, 200, 50);
    ProcessStat zombie = process(301, 1, 200, 60);
    zombie.state = 'Z';
    CHECK(work_of(owner, {process(200, 100, 200, 10), zombie}, false, false).empty());
}

} // namespace redlockrun::hold
