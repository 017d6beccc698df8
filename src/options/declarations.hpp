// Every option of the command line and the config files, declared once: the parser CLI11 is
// given, the config file's list of entries and --help's. cli.cpp is their one user.
#pragma once

#include "options/names_in_use.hpp"
#include "options/option_text.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace redlockrun {

enum class InConfigFile { no, yes };

// Where an option's value goes in OptionText: a value, a flag, or neither (--help, --version).
struct Binding {
    const CLI::Option* option;
    std::optional<Setting> OptionText::*value;
    bool OptionText::*flag;
    // For an option whose value may be left out: the value it then has.
    const char* implied_value = nullptr;
    // A switch (switch_flag()): its value is the last one CLI11 read, "true" for the bare flag.
    bool switch_value = false;
};

// CLI11's App without the --help flag its public constructor declares, which redlockrun would
// only take away again: declaring an option is most of what a parse costs (ARCHITECTURE.md). The
// constructor that CLI11 keeps for subcommands declares nothing.
class Parser : public CLI::App {
public:
    explicit Parser(std::string description) : CLI::App(std::move(description), "", nullptr) {}
};

// Every option, declared once; declared to CLI11 only if a parse can meet one of its names.
class Declarations {
public:
    explicit Declarations(NamesInUse names);

    Parser app{"redlockrun"};
    std::vector<Binding> bindings;
    const CLI::Option* url = nullptr;  // null if not declared
    const CLI::Option* list = nullptr; // null if not declared

    // What the options that were given say, each value with its origin.
    OptionText collect(const std::function<std::string(const CLI::Option&)>& origin_of) const;

private:
    // Each returns the option declared, or null if its names are not in use.
    CLI::Option* value(const char* names, const char* type, InConfigFile in_config_file,
                       const char* description, std::optional<Setting> OptionText::*field);
    // An option whose value may be left out (then it is `implied`): given as "--name=value", or
    // as the next word if that does not start with '-'.
    CLI::Option* optional_value(const char* names, const char* type, const char* implied,
                                const char* description, std::optional<Setting> OptionText::*field);
    // A null `field` makes a flag that is accepted and changes nothing.
    void flag(const char* names, const char* description, bool OptionText::*field);
    // A flag on the command line, and an entry of a config file whose value says yes or no
    // ("syslog = yes"): its value is kept as written, for options.cpp to read.
    void switch_flag(const char* names, const char* description,
                     std::optional<Setting> OptionText::*field);
    // --help and --version win over whatever follows them, so they stop the parse where they
    // stand, as getopt_long's caller would: by throwing CLI11's own exception for each.
    void stop(const char* names, const char* description, std::function<void()> stop_parsing);

    NamesInUse names_in_use_;
    const char* group_ = "";
};

} // namespace redlockrun
