// Reading a small file that is already open: a config file, a password file.
#pragma once

#include "base/expected.hpp"

#include <cstddef>
#include <string>

namespace redlockrun {

// Why read_all() gave up: an errno from read(2), or 0 when the file holds more than the limit.
struct ReadAllFailure {
    int error = 0;
    bool too_large() const { return error == 0; }
};

// Reads fd to its end, retrying on EINTR, and refuses more than `limit` bytes.
Expected<std::string, ReadAllFailure> read_all(int fd, std::size_t limit);

} // namespace redlockrun
