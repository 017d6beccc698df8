// The option names a parse can meet, so that cli.cpp declares to CLI11 only the options that a
// command line's words or a config file's entries could name. Declaring an option is most of what
// a run computes: CLI11 2.1.2 builds it and compares its names with those of every option declared
// before it, 900,000 of a plain run's 1.4 million instructions with every option declared
// (ARCHITECTURE.md, "Declaring only what a parse can meet").
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace redlockrun {

class NamesInUse {
public:
    static NamesInUse every_name();

    // The words of a command line, argv[1] on. Generous: a short name counts if its letter is
    // anywhere in a word that starts with '-', even in a value or the command; a long name if it
    // follows "--" up to a '=', or follows any '-' inside a word of short options (CLI11 reads the
    // rest of "-q-ttl=1" after the flag -q as the word "--ttl=1").
    static NamesInUse in_words(int argc, const char* const* argv);

    // A config file's entry names: long names, as CLI11 looks them up.
    static NamesInUse in_entries(const std::vector<std::string>& entry_names);

    // Whether any of an option's names ("-n,--no-wait,--nb") is among them.
    bool any_of(std::string_view option_names) const;

private:
    void add_long_name(std::string_view text); // "name=value" or "name"

    bool every_name_ = false;
    std::bitset<256> short_names_;
    std::vector<std::string> long_names_;
};

} // namespace redlockrun
