// A failure that ends the run. It carries the exit status and a one-line message for the user; it
// is thrown where the failure is found and caught once, in app.cpp. Normal outcomes (busy, lost,
// foreign) are values, not Fatal.
#pragma once

#include "base/exit_status.hpp"

#include <stdexcept>
#include <string>

namespace redlockrun {

class Fatal : public std::runtime_error {
public:
    Fatal(ExitStatus status, const std::string& message)
        : std::runtime_error(message), status_(to_int(status)) {}

    int status() const { return status_; }

private:
    int status_;
};

class UsageError : public Fatal {
public:
    explicit UsageError(const std::string& message) : Fatal(ExitStatus::usage, message) {}
};

} // namespace redlockrun
