#include "options/names_in_use.hpp"

namespace redlockrun {

NamesInUse NamesInUse::every_name() {
    NamesInUse names;
    names.every_name_ = true;
    return names;
}

NamesInUse NamesInUse::in_words(int argc, const char* const* argv) {
    NamesInUse names;
    for (int i = 1; i < argc; ++i) {
        const std::string_view word = argv[i];
        if (word.starts_with("--")) {
            names.add_long_name(word.substr(2));
            continue;
        }
        if (!word.starts_with('-')) {
            continue;
        }
        for (size_t at = 1; at < word.size(); ++at) {
            names.short_names_.set(static_cast<unsigned char>(word[at]));
            if (word[at] == '-') {
                names.add_long_name(word.substr(at + 1));
            }
        }
    }
    return names;
}

NamesInUse NamesInUse::in_entries(const std::vector<std::string>& entry_names) {
    NamesInUse names;
    names.long_names_ = entry_names;
    return names;
}

bool NamesInUse::any_of(std::string_view option_names) const {
    if (every_name_) {
        return true;
    }
    while (!option_names.empty()) {
        const auto comma = option_names.find(',');
        const std::string_view name = option_names.substr(0, comma);
        option_names =
            comma == std::string_view::npos ? std::string_view{} : option_names.substr(comma + 1);
        if (name.starts_with("--")) {
            for (const std::string& long_name : long_names_) {
                if (long_name == name.substr(2)) {
                    return true;
                }
            }
        } else if (name.size() == 2 && short_names_.test(static_cast<unsigned char>(name[1]))) {
            return true;
        }
    }
    return false;
}

void NamesInUse::add_long_name(std::string_view text) {
    long_names_.emplace_back(text.substr(0, text.find('=')));
}

} // namespace redlockrun
