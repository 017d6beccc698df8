// The command line and the config files' syntax, in the style of flock(1) and redis-cli, declared
// once with CLI11: the declarations are the parser, the config file's list of entries and --help.
// Options end at the first word that is not one (or at "--"); the rest is the command. Values are
// returned as written: configuration.cpp converts and checks them.
#pragma once

#include "options/option_text.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace redlockrun {

struct CommandLine {
    enum class Action { run, help, version };
    Action action = Action::run;
    OptionText options;
    std::vector<std::string> url_values; // every --url given, the overridden ones too

    bool operator==(const CommandLine&) const = default;
};

// Throws UsageError (exit 64), naming the option, for anything it cannot make sense of.
// Only the options whose names the words could refer to are declared to CLI11 first
// (..._declaring_named_options()), which reads the words as it would with every option declared:
// the tests hold the two to the same result. A refusal is said by the parse declaring every
// option, whose "did you mean" can offer them all.
CommandLine parse_command_line(int argc, const char* const* argv);
CommandLine parse_command_line_declaring_named_options(int argc, const char* const* argv);
CommandLine parse_command_line_declaring_every_option(int argc, const char* const* argv);

// The entries of a config file (CLI11's TOML/INI syntax, each line checked first by
// options/config_lines.hpp), with `file` for messages. Only connection and lock settings may
// appear, each once. Throws Fatal (usage) naming the file, the line and the entry. As for the
// command line, the options the entries name are declared first, and a refusal is said with every
// option declared.
OptionText parse_config_text(std::string_view text, const std::string& file);
OptionText parse_config_text_declaring_named_options(std::string_view text,
                                                     const std::string& file);
OptionText parse_config_text_declaring_every_option(std::string_view text, const std::string& file);

std::string help_text();
std::string version_text();

// Every option name the parser accepts ("-k", "--key", ...): the documentation must list them all.
std::vector<std::string> accepted_option_names();

// The entries a config file may hold ("url", "ttl", ...).
std::vector<std::string> config_entry_names();

} // namespace redlockrun
