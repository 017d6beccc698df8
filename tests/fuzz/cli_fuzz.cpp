// The command line: argv made of the input split at NUL bytes. Whatever it holds, parsing returns
// or throws a usage error (64) with a message, never another exception, an exit() or an abort; a
// command line that parses converts and checks (configure()) with the same outcome. A line that
// the short cut for --release and --check reads (options/hold_request.hpp) parses, and to the
// same options. Declaring only the options the words can name (options/names_in_use.hpp) comes to
// the same command line, or to a refusal too.
#include "base/exit_status.hpp"
#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/configuration.hpp"
#include "options/hold_request.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace redlockrun;

namespace {

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

void check_usage_error(const Fatal& error) {
    check(error.status() == to_int(ExitStatus::usage));
    check(error.what()[0] != '\0');
}

// What the parse that declares only the options the words can name makes of them, if it accepts
// them.
std::optional<CommandLine> parsed_declaring_named_options(size_t argc,
                                                          const std::vector<const char*>& argv) {
    try {
        return parse_command_line_declaring_named_options(static_cast<int>(argc), argv.data());
    } catch (const Fatal&) {
        return std::nullopt;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> words{"redlockrun"};
    std::string word;
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == '\0') {
            words.push_back(word);
            word.clear();
        } else {
            word.push_back(static_cast<char>(data[i]));
        }
    }
    words.push_back(word);
    std::vector<const char*> argv;
    for (const std::string& w : words) {
        argv.push_back(w.c_str());
    }
    argv.push_back(nullptr);

    const auto request = read_hold_request(static_cast<int>(words.size()), argv.data());
    CommandLine line;
    try {
        line = parse_command_line(static_cast<int>(words.size()), argv.data());
    } catch (const Fatal& error) {
        check(!request);
        check_usage_error(error);
        return 0; // a refusal from both parses: the one declaring every option said it
    }
    // Declaring only the options the words can name changes nothing CLI11 reads.
    check(parsed_declaring_named_options(words.size(), argv) == line);
    if (request) {
        check(line.action == CommandLine::Action::run);
        check(line.options == *request);
        check(line.url_values.empty());
    }
    if (line.action == CommandLine::Action::help) {
        check(!help_text().empty());
        return 0;
    }
    if (line.action == CommandLine::Action::version) {
        check(!version_text().empty());
        return 0;
    }
    // --config would read a file named by the input: the config file has its own target.
    line.options.config.reset();
    try {
        const Options options = configure(line.options, ConfigPlaces{});
        // What validate() promises the rest of the run: --list, --release and --check name no
        // lock and run nothing; --status, --hold and --break name one and run nothing; a run
        // names one and runs one command.
        const int commands = (options.command.empty() ? 0 : 1) + (options.shell_command ? 1 : 0);
        if (options.list_pattern || options.release_handle || options.check_handle) {
            check(options.key.empty());
            check(commands == 0);
        } else {
            check(!options.key.empty());
            check(options.status || options.hold || options.break_lock ? commands == 0
                                                                       : commands == 1);
        }
        check(!(options.no_wait && options.wait));
        check(options.ttl >= min_ttl && options.ttl <= max_duration);
        check(options.connect_timeout.count() > 0);
    } catch (const Fatal& error) {
        check_usage_error(error);
    }
    return 0;
}
