#include "options/marked_words.hpp"

namespace redlockrun {

namespace {

constexpr char empty_value_mark = '\0';

} // namespace

std::vector<std::string> marked_words(int argc, const char* const* argv) {
    std::vector<std::string> words;
    for (int i = argc - 1; i > 0; --i) { // CLI11 takes them last first
        std::string& word = words.emplace_back(argv[i]);
        if (word.empty() || word.ends_with('=')) {
            word.push_back(empty_value_mark);
        }
    }
    return words;
}

std::string unmarked(std::string word) {
    if (!word.empty() && word.back() == empty_value_mark) {
        word.pop_back();
    }
    return word;
}

std::vector<std::string> unmarked(std::vector<std::string> words) {
    for (auto& word : words) {
        word = unmarked(std::move(word));
    }
    return words;
}

} // namespace redlockrun
