// Fills this process's descriptor table, within a lowered limit, for as long as it lives: what an
// exhausted table does to code that opens files or sockets. A test cannot do this to the real
// binary from outside, since the dynamic loader itself needs a free descriptor to start it.
#pragma once

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace redlockrun::testing {

class FullDescriptorTable {
public:
    FullDescriptorTable() {
        REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
        struct rlimit lowered = saved_;
        lowered.rlim_cur = 64;
        REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
        for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) {
            taken_.push_back(fd);
        }
    }
    FullDescriptorTable(const FullDescriptorTable&) = delete;
    FullDescriptorTable& operator=(const FullDescriptorTable&) = delete;
    ~FullDescriptorTable() {
        for (int fd : taken_) {
            ::close(fd);
        }
        ::setrlimit(RLIMIT_NOFILE, &saved_);
    }

private:
    struct rlimit saved_ {};
    std::vector<int> taken_;
};

} // namespace redlockrun::testing
