// redlockrun whose system config file is REDLOCKRUN_TEST_SYSTEM_CONFIG, a path in the build tree:
// the only difference from the real binary, so that tests/e2e/config.sh can test that layer
// without touching the machine's sysconfdir (and without a switch in the real binary that could
// point it elsewhere).
#include "app.hpp"

#include <cstdlib>

int main(int argc, char** argv) {
    return redlockrun::main_entry(
        argc, argv, redlockrun::config_places(REDLOCKRUN_TEST_SYSTEM_CONFIG, [](const char* name) {
            return std::getenv(name);
        }));
}
