// redlockrun as a function: parse, validate, act, and map every outcome to an exit status. Failures
// that end the run are caught here, once.
#pragma once

#include "options/config_file.hpp"

namespace redlockrun {

// `argv` is written to: a password in --url is blotted out (hide_password.hpp). Config files are
// looked for at `places` unless --config names one.
int main_entry(int argc, char** argv, const ConfigPlaces& places);

// The places of an installed redlockrun: the configured sysconfdir's file and the user's.
ConfigPlaces installed_config_places();

} // namespace redlockrun
