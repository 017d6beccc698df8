// Config files (/etc/redlockrun.conf, ~/.config/redlockrun/config, --config FILE): whatever they
// hold, reading one returns its entries or throws a usage error (64) naming the file, never another
// exception, an exit() or an abort; only connection and lock settings come out of a file; and the
// settings a file gives, under a command line that gives only a key and a command, convert and
// check with the same outcome; declaring only the options the entries name reads a file alike.
#include "base/exit_status.hpp"
#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "options/option_text.hpp"
#include "options/options.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

using namespace redlockrun;

namespace {

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

void check_usage_error(const Fatal& error, std::string_view file) {
    check(error.status() == to_int(ExitStatus::usage));
    check(std::string_view(error.what()).find(file) != std::string_view::npos);
}

// What the reading that declares only the options the entries name makes of a file, if it
// accepts it.
std::optional<OptionText> read_declaring_named_options(std::string_view text,
                                                       const std::string& file) {
    try {
        return parse_config_text_declaring_named_options(text, file);
    } catch (const Fatal&) {
        return std::nullopt;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string file = "/fuzz/redlockrun.conf";
    OptionText from_file;
    try {
        from_file = parse_config_text(text, file);
    } catch (const Fatal& error) {
        check_usage_error(error, file);
        return 0; // a refusal from both readings: the one declaring every option said it
    }
    // Declaring only the options the entries name changes nothing CLI11 reads.
    check(read_declaring_named_options(text, file) == from_file);
    // The command line's own: a file could not turn a flag off again (man page, FILES).
    check(!from_file.key && !from_file.shell_command && !from_file.config);
    check(!from_file.no_wait && !from_file.no_renew && !from_file.status && !from_file.quiet &&
          !from_file.verbose && from_file.command.empty());

    OptionText line;
    line.key = Setting{"job", "-k"};
    line.command = {"true"};
    fill_in_from_file(line, from_file);
    try {
        Options options = to_options(line);
        validate(options);
        check(options.ttl >= min_ttl && options.ttl <= max_duration);
    } catch (const Fatal& error) {
        check_usage_error(error, file);
    }
    return 0;
}
