// Holding a lock past redlockrun's exit (DESIGN §12): `--hold` takes the lock as a run does and
// leaves a keeper holding it (hold/keeper.hpp); `--release` and `--check` ask that keeper, found by
// the hold's handle (hold/hold_files.hpp), how the hold went.
#pragma once

#include "base/log.hpp"
#include "hold/hold_files.hpp"
#include "options/options.hpp"
#include "redis/settings.hpp"
#include "telemetry/metrics_file.hpp"

#include <functional>
#include <string>

namespace redlockrun::hold {

// --hold: prints the assignments (or, with --json, one object) and returns 0 once the keeper
// holds the lock; the statuses of a run that did not get the lock otherwise.
// `figures`: how it went, for --metrics-file; a hold taken is counted by its keeper at its end.
int take_hold(const Options& options, const redis::ConnectionSettings& settings, const Logger& log,
              const Getenv& getenv, telemetry::RunFigures& figures);

// The connection settings, found only when needed: a --release whose keeper does not answer
// releases the lock itself (hold/keeperless_release.hpp); otherwise the keeper talks to Redis.
using SettingsSource = std::function<Expected<redis::ConnectionSettings, std::string>()>;

// --release and --check: 0 if the hold was kept (and, for --release, is released now), the lost
// exit status (76) if it was lost or ended before, 64 for a handle that names no hold, 69 if the
// release could not reach Redis.
int end_or_check_hold(const Options& options, const Logger& log, const Getenv& getenv,
                      const SettingsSource& settings);

} // namespace redlockrun::hold
