// --metrics-file: counters and the last run's figures per key, in the Prometheus text format that
// node_exporter's textfile collector reads. Every run and hold on a host may share one file: an
// update takes a lock beside it (FILE.lock), reads what is there, and replaces the file with the
// merged text (written to a temporary file in the same folder, fsync'd, renamed over it), so that
// the collector never reads half a file and no update is lost when many runs end at once.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace redlockrun::telemetry {

// How a run or hold of a key ended.
enum class Outcome { ran, busy, lost, error };

struct RunFigures {
    std::string key;
    bool hold = false; // a --hold (kind="hold"), else a run (kind="run")
    Outcome outcome = Outcome::ran;
    long long started_ms = 0;           // Unix time
    std::optional<long long> waited_ms; // none if it never asked for the lock
    std::optional<long long> held_ms;   // none if it never held it
    int exit_status = 0;
    bool keeper_counts = false; // a hold that was taken: its keeper counts it when it ends
};

// `existing` (the file's text, or "") with `run` counted in: its outcome's counter one up (the
// key's other outcomes shown at 0, so that rate() sees them from the start), and its last-run
// gauges replaced. Lines that are not redlockrun's samples are dropped; the rest keep their order
// within each metric.
std::string merged_metrics(std::string_view existing, const RunFigures& run);

// The wall clock, in Unix milliseconds.
long long now_ms();

// A key as a label value: backslash, double quote and newline escaped, and each byte that is not
// valid UTF-8 (which the format requires) as U+FFFD.
std::string label_value(std::string_view key);

// Counts `run` into the file at `path`. Nothing, or why the file could not be updated (a warning
// for the caller: a metrics file never fails a job). Gives up waiting for the file's lock after
// `patience_ms`.
std::optional<std::string> update_metrics_file(const std::string& path, const RunFigures& run,
                                               long long patience_ms = 2000);

} // namespace redlockrun::telemetry
