#pragma once

namespace redlockrun {

extern const char* const version_number; // from the project version in CMakeLists.txt

// The system-wide config file, under the sysconfdir the build was configured with
// (/etc/redlockrun.conf for a build installed under /usr).
extern const char* const system_config_file;

} // namespace redlockrun
