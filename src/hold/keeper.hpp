// The keeper of a hold (DESIGN §12): the detached process that `redlockrun --hold` leaves behind.
// It renews the lock every ttl/3 under the same deadline rules as a run (run/lock_keeper.hpp) and
// releases it when its owner exits, at --max-hold, when told to by --release, or when it is sent
// SIGTERM (or any signal that asks to stop, run/signals.hpp). It answers --check and --release on
// its socket, from processes of the same user only. A loss is kept for them to report; with
// --on-lost term it also stops the owner.
//
// The protocol is one line each way: "check" or "release"; then "intact", "released", "lost
// MS WHY" (MS: when, in ms since the epoch) or "failed WHY" (the release could not reach Redis).
#pragma once

#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/unique_fd.hpp"
#include "hold/hold_files.hpp"
#include "hold/owner.hpp"
#include "options/options.hpp"
#include "run/lock_attempt.hpp"
#include "telemetry/metrics_file.hpp"

#include <optional>
#include <string>

namespace redlockrun::hold {

struct KeeperStart {
    const Options& options;
    run::LockAttempt& attempt;
    lock::Acquired acquired;
    SteadyTime acquired_at;
    std::optional<Process> owner;
    UniqueFd listener; // listening on paths.socket
    HoldPaths paths;
    HoldRecord record;
    UniqueFd ready; // the write end of the pipe the --hold process waits on
    // stderr is where the person reads the caller's messages (not the captured $(...) pipe): the
    // keeper keeps it for a loss's message instead of /dev/null.
    bool keep_stderr = false;
    // How the hold went, for --metrics-file: the keeper counts it once it has ended.
    telemetry::RunFigures figures;
};

// Runs in the keeper process, just forked; returns its exit status when the hold has ended. Before
// it keeps the lock it tells the --hold process, on `ready`, "ok", or "STATUS MESSAGE" if it could
// not (the owner had exited already: the lock is released then).
int keep_hold(KeeperStart& start, const Logger& log);

// Wall-clock milliseconds since the epoch, for the record and the protocol.
long long epoch_ms();

} // namespace redlockrun::hold
