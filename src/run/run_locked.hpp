// The main job: take the lock (waiting if asked to), run the command while holding it, release it,
// and turn all that into one exit status.
#pragma once

#include "base/log.hpp"
#include "options/options.hpp"
#include "redis/settings.hpp"
#include "telemetry/metrics_file.hpp"

namespace redlockrun {

// `figures` says how it went, for --metrics-file: filled in as the run goes (a failure thrown
// leaves what was known by then).
int run_locked(const Options& options, const redis::ConnectionSettings& settings, const Logger& log,
               telemetry::RunFigures& figures);

} // namespace redlockrun
