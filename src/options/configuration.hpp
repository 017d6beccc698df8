// A run's settings, lowest first: built-in defaults, the system's config file, the user's, the
// environment, the command line (DESIGN.md §10). --config FILE replaces both files.
#pragma once

#include "options/config_file.hpp"
#include "options/option_text.hpp"
#include "options/options.hpp"

namespace redlockrun {

// The command line over the config files (--config's, else those at `places` that exist), every
// value converted and the whole checked. The environment's part is in redis/settings.cpp.
// Throws Fatal (usage) naming the option, or the file and entry, at fault.
Options configure(const OptionText& command_line, const ConfigPlaces& places);

} // namespace redlockrun
