// The command line, in the style of flock(1) and redis-cli: parsed into Options before anything
// runs. Options end at the first word that is not one (or at "--"); the rest is the command.
#pragma once

#include "options.hpp"

#include <string>
#include <vector>

namespace redlockrun {

struct CommandLine {
    enum class Action { run, help, version };
    Action action = Action::run;
    Options options;
};

// Throws UsageError (exit 64) for anything it cannot make sense of; validate() runs too.
CommandLine parse_command_line(int argc, const char* const* argv);

std::string help_text();
std::string version_text();

// Every option name the parser accepts ("-k", "--key", ...): the documentation must list them all.
std::vector<std::string> accepted_option_names();

} // namespace redlockrun
