// The library floor: a program that does no work, built and linked as the .deb's redlockrun is —
// a hardened PIE against the shared libstdc++, libfmt and libhiredis, with CLI11's header
// included. Its start-up is what those libraries cost before redlockrun does anything: loading and
// relocating them, and the static initialisers they bring (with GCC 12, <iostream>, which CLI11's
// header includes, initialises the standard streams in every program that includes it).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <hiredis/hiredis.h>

int main(int argc, char** argv) {
    // Never true in the bench (it passes a key and a command): the calls only keep each library
    // linked under --as-needed, as redlockrun's own calls do.
    if (argc > 1000) {
        CLI::App app{"floor"};
        redisReaderFree(redisReaderCreate());
        return static_cast<int>(fmt::format("{}", argv[0]).size());
    }
    return 0;
}
