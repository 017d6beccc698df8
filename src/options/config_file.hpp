// Config files (DESIGN.md §10): where they are, and reading one without ever blocking. What they
// say is cli.cpp's business (their syntax), and configuration.cpp's (their place in the order).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace redlockrun {

// The two files read when --config names none, the one that wins first.
struct ConfigPlaces {
    std::optional<std::string> user_file;   // $XDG_CONFIG_HOME/redlockrun/config
    std::optional<std::string> system_file; // /etc/redlockrun.conf
};

// The user's file is under $XDG_CONFIG_HOME if that is an absolute path (as the XDG base directory
// specification asks), else under $HOME/.config; none without either.
ConfigPlaces config_places(const std::string& system_file,
                           const std::function<const char*(const char* name)>& environment);

struct ConfigFile {
    std::string path;
    std::string text;
    unsigned permissions = 0; // st_mode & 07777
};

// None if the file does not exist and is not `required` (that is, not named by --config). Anything
// but a regular file is refused without being read (a FIFO would block, a device might never end),
// except /dev/null, which holds no settings; so is a file larger than 64 KiB. A failure is a
// Fatal naming the file: usage (64), or os_error (71) when the descriptor table is full.
std::optional<ConfigFile> read_config_file(const std::string& path, bool required);

} // namespace redlockrun
