// What redlockrun answers to a command line written with another tool's habits or a typo:
// redis-cli's -h HOST, -p PORT, -a PASSWORD and -n DB, an unknown option close to a real one,
// --help or
// --version among other words. Each answer is one usage error (64) that says what to write
// instead; none lets a job run, or exit 0, by mistake. The messages are for the usage error's
// first words: the caller adds where to read more.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace redlockrun {

// Refuses (UsageError) the first option that `app`'s parse left over, as getopt_long would: the
// first one, before anything that came after it; with unknown_option_message()'s answer.
void refuse_unknown_options(const CLI::App& app);

// --help (or --version, `help` false) given with other words (`words`: argv after the program's
// name): the message of the usage error it makes. After redis-cli's -h HOST it says to name the
// server with -u, with the port that -p gave, if any.
std::string not_alone_message(bool help, const std::vector<std::string>& words);

// The message for `option` ("-p", "--timout"), which redlockrun does not know: what to write
// instead, for redis-cli's -p and -a, or the nearest of the `known` long names ("--timeout").
std::string unknown_option_message(const std::string& option,
                                   const std::vector<std::string>& known);

// The nearest of `known` (long option names, "--timeout") to `unknown`, if it is close: one or two
// edits (a letter missing, extra, changed, or two swapped), or a known name with a few letters
// more ("--nonblocking" for "--nonblock").
std::optional<std::string> nearest_option(std::string_view unknown,
                                          const std::vector<std::string>& known);

// `option` followed by `next`, the first word of the command: the message if `option` is -n,
// flock's no-wait, and `next` looks like redis-cli's database number.
std::optional<std::string> database_after_no_wait(std::string_view option, const std::string& next);

// A config file's "wait = 15 m", which TOML reads as two values (`words`): if they make a duration
// once put together, that is what was meant, and the message says how to write it ("'15 m' is not
// a duration: write 15m"); none otherwise ("1s 2s" is two values).
std::optional<std::string> spaced_duration_message(const std::vector<std::string>& words);

} // namespace redlockrun
