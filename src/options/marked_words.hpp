// CLI11 reads "--name=" as "--name" with its value in the next word, where getopt_long gives it an
// empty value. A NUL, which no argument can contain, is put after every word that ends in '=' so
// that CLI11 sees a value there, and taken off every word and value it hands back. An empty word
// is marked too: for an option whose value may be left out (--list), CLI11 gives an empty value
// both when the value is left out and when it is an empty word.
#pragma once

#include <string>
#include <vector>

namespace redlockrun {

// argv's words after the program's name, marked, last first (as CLI11 takes them).
std::vector<std::string> marked_words(int argc, const char* const* argv);

// A word or value as it was written, its mark taken off.
std::string unmarked(std::string word);
std::vector<std::string> unmarked(std::vector<std::string> words);

} // namespace redlockrun
