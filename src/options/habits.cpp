#include "options/habits.hpp"

#include "base/duration.hpp"
#include "base/fatal.hpp"
#include "options/marked_words.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace redlockrun {

namespace {

bool all_digits(std::string_view word) {
    return !word.empty() && std::all_of(word.begin(), word.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

// The word after `option` in `words`, if it is not an option itself.
std::optional<std::string> value_after(const std::vector<std::string>& words,
                                       std::string_view option) {
    const auto found = std::find(words.begin(), words.end(), option);
    if (found == words.end() || found + 1 == words.end() || (found + 1)->starts_with("-")) {
        return std::nullopt;
    }
    return *(found + 1);
}

// Edits between a and b: insertions, deletions, substitutions and swaps of two neighbours (the
// optimal string alignment distance).
size_t edits(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= b.size(); ++j) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

// A word CLI11 left over that is an option, not the command: "-x", "--bogus=1".
bool is_option_word(const std::string& word) {
    return word.size() > 1 && word.front() == '-' && word != "--";
}

} // namespace

void refuse_unknown_options(const CLI::App& app) {
    const auto rest = app.remaining();
    if (rest.empty() || !is_option_word(rest.front())) {
        return;
    }
    const std::string word = unmarked(rest.front());
    std::vector<std::string> known;
    for (const CLI::Option* option : app.get_options()) {
        for (const auto& name : option->get_lnames()) {
            known.push_back("--" + name);
        }
    }
    // "-xk" is -x (then -k); "--bogus=1" is --bogus.
    throw UsageError(unknown_option_message(
        word[1] == '-' ? word.substr(0, word.find('=')) : word.substr(0, 2), known));
}

std::string not_alone_message(bool help, const std::vector<std::string>& words) {
    const char* name = help ? "--help" : "--version";
    if (help) {
        if (auto host = value_after(words, "-h")) {
            const auto port = value_after(words, "-p");
            // A host word that may hold a login ('@', "redis://:PASSWORD@...") is not repeated.
            const bool plain = host->find_first_of("@:/") == std::string::npos;
            return fmt::format("-h is --help here, and it runs nothing: to name a Redis server, "
                               "write -u redis://{}:{}",
                               plain ? *host : "HOST", port && all_digits(*port) ? *port : "6379");
        }
    }
    return fmt::format("{} takes nothing else, and runs nothing: write redlockrun {} alone", name,
                       name);
}

std::string unknown_option_message(const std::string& option,
                                   const std::vector<std::string>& known) {
    if (option == "-p") {
        return "unknown option -p: name the server and its port with a URL, -u redis://HOST:PORT";
    }
    if (option == "-a") {
        // The password is not repeated: it is in the shell's history already.
        return "unknown option -a: a password is never taken on the command line, where ps shows "
               "it to every user: use --password-file FILE or $REDISCLI_AUTH";
    }
    if (auto nearest = nearest_option(option, known)) {
        return fmt::format("unknown option {}: did you mean {}?", option, *nearest);
    }
    return fmt::format("unknown option {}", option);
}

std::optional<std::string> nearest_option(std::string_view unknown,
                                          const std::vector<std::string>& known) {
    if (!unknown.starts_with("--") || unknown.size() < 4) {
        return std::nullopt;
    }
    std::optional<std::string> best;
    size_t best_edits = 3;
    for (const std::string& name : known) {
        // A known name with up to four letters more: --nonblocking, --listing.
        size_t distance = unknown.starts_with(name) && unknown.size() - name.size() <= 4
                              ? 1
                              : edits(unknown, name);
        // Two edits only where the names are long enough for two to leave them alike.
        if (distance == 2 && name.size() < 8) {
            continue;
        }
        if (distance < best_edits) {
            best_edits = distance;
            best = name;
        }
    }
    return best;
}

std::optional<std::string> database_after_no_wait(std::string_view option,
                                                  const std::string& next) {
    if (option != "-n" || !all_digits(next) || next.size() > 2) {
        return std::nullopt;
    }
    return fmt::format("-n is --nonblock here (flock's spelling), not redis-cli's database, and "
                       "{} would be the command: choose the database in the URL, -u "
                       "redis://HOST:PORT/{}",
                       next, next);
}

std::optional<std::string> spaced_duration_message(const std::vector<std::string>& words) {
    std::string given;
    std::string joined;
    for (const std::string& word : words) {
        given += (given.empty() ? "" : " ") + word;
        joined += word;
    }
    if (!parse_duration(joined)) {
        return std::nullopt;
    }
    return fmt::format("'{}' {}", given, explain_bad_duration(given));
}

} // namespace redlockrun
