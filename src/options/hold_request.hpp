// The command lines that only end or check a hold, read without declaring every option: the
// release is the first thing a handoff from a hold waits for, and declaring CLI11's options is
// most of what a redlockrun start-up computes (ARCHITECTURE.md, "Where a handoff's time goes").
#pragma once

#include "options/option_text.hpp"

#include <optional>

namespace redlockrun {

// The options of a command line that is exactly `--release [HANDLE]` or `--check [HANDLE]` (the
// handle after a space or an '=', and an absolute path), with at most one of -q, --quiet, -v,
// --verbose before or after it, each word given once: what parse_command_line() returns for it,
// word for word. None for any other command line, which parse_command_line() must read instead;
// its messages and statuses stay the only ones. The config files are not read here: configure()
// reads them as it does for every run.
std::optional<OptionText> read_hold_request(int argc, const char* const* argv);

} // namespace redlockrun
