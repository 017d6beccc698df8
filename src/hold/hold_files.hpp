// Where a hold is found again (DESIGN §12): every hold of a user has a record file and a socket in
// one folder of that user's, $XDG_RUNTIME_DIR/redlockrun or else ${TMPDIR:-/tmp}/redlockrun-UID,
// made with mode 0700 and refused if anyone else could write to it. The handle is the record
// file's path; the keeper listens on the socket beside it (the handle plus ".sock"). A record file
// holds the hold's key, fence, owner and keeper, what a release needs (the holder's token and the
// lock's mode: the file is the user's alone, as the keeper's memory is), and, once the keeper has
// ended without a --release, how the hold ended. It never holds a password.
#pragma once

#include "base/expected.hpp"

#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace redlockrun::hold {

using Getenv = std::function<const char*(const char*)>;

// This user's folder of holds, made if it is missing; or why it cannot be used.
Expected<std::string, std::string> holds_folder(const Getenv& getenv);

struct HoldPaths {
    std::string handle; // FOLDER/hold.ID: the record file
    std::string socket; // the handle plus ".sock"
};

// The paths of a new hold in `folder`, with a random id.
HoldPaths new_hold_paths(const std::string& folder);

// The paths a handle names: it must be FOLDER/hold.ID, 32 hex digits, and FOLDER a folder of this
// user's that no one else can write to. A sentence saying what is wrong with it otherwise.
Expected<HoldPaths, std::string> paths_of_handle(const std::string& handle);

struct HoldRecord {
    std::string key;
    std::string fence;
    pid_t owner = 0; // 0: --owner none
    unsigned long long owner_start = 0;
    pid_t keeper = 0;
    unsigned long long keeper_start =
        0;                  // as Process::start_time: a later process with its pid is not it
    long long taken_ms = 0; // the wall clock, in ms since the epoch
    // What releasing the lock without the keeper takes: the holder's token, the unit of the key's
    // timestamp ("ms" or "s"), and the mode ("1", "shared", or a semaphore's N).
    std::string token;
    std::string unit = "ms";
    std::string mode = "1";
    // How the hold ended without a --release: "" while it lasts; "lost" or "ended".
    std::string ended;
    long long ended_ms = 0;
    std::string why; // a sentence, for --release and --check to repeat

    bool operator==(const HoldRecord&) const = default;
};

// The record as its file holds it: one `name=value` line per field, each value with '%', '\n'
// and every other control byte written as %XX.
std::string record_text(const HoldRecord& record);
std::optional<HoldRecord> parse_record(const std::string& text);

// Writes the record to `path` at once (a temporary file renamed over it): a reader never finds
// half a record. Returns errno, or 0.
int write_record(const std::string& path, const HoldRecord& record);
// The record at `path`: none if it is missing or unreadable.
std::optional<HoldRecord> read_record(const std::string& path);

// The handles of the records in `folder`.
std::vector<std::string> handles_in(const std::string& folder);

// A record whose keeper is gone without saying how the hold ended: lost, now, and why.
void mark_keeper_gone(HoldRecord& record);

// What holds that ended unseen left in `folder`: a record whose keeper is gone without saying how
// the hold ended (killed with SIGKILL) is marked lost, for a later --release or --check to report;
// a record that ended a day ago or more is removed (no --release came for it: an --owner none
// hold of a pipeline that was cancelled); a socket that no process listens on (a --hold killed
// while it waited), 10 s old or more, is removed. `keeper_running` tells a record's keeper from a
// later process.
void clean_stale_holds(const std::string& folder,
                       const std::function<bool(pid_t, unsigned long long)>& keeper_running);

} // namespace redlockrun::hold
