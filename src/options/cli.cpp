#include "options/cli.hpp"

#include "base/fatal.hpp"
#include "base/version.hpp"
#include "options/config_lines.hpp"
#include "options/declarations.hpp"
#include "options/habits.hpp"
#include "options/help.hpp"
#include "options/marked_words.hpp"
#include "options/options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

namespace redlockrun {

namespace {

std::string long_name(const CLI::Option& option) {
    return "--" + option.get_lnames().front();
}

// CLI11's own words never reach the user: its two messages about an option's value are recognised
// by the option's name at their start, and said again in ours.
std::string usage_message(const Declarations& declarations, const CLI::ParseError& error) {
    const std::string text = error.what();
    for (const Binding& binding : declarations.bindings) {
        const CLI::Option& option = *binding.option;
        if (text.starts_with(option.get_name() + ": ")) {
            return fmt::format("{} needs a value", long_name(option));
        }
        for (const auto& name : option.get_lnames()) {
            if (text.starts_with(name + " was given")) {
                return fmt::format("--{} takes no value", name);
            }
        }
    }
    return "the command line cannot be parsed";
}

// A mistake in a config file: a usage error, but one that --help cannot explain.
Fatal config_error(const std::string& message) {
    return Fatal(ExitStatus::usage, message);
}

CommandLine parse_words(int argc, const char* const* argv, NamesInUse names) {
    Declarations declarations(std::move(names));
    CommandLine line;
    try {
        declarations.app.parse(marked_words(argc, argv));
    } catch (const CLI::CallForHelp&) {
        line.action = CommandLine::Action::help;
    } catch (const CLI::CallForVersion&) {
        line.action = CommandLine::Action::version;
    } catch (const CLI::ParseError& error) {
        refuse_unknown_options(declarations.app);
        throw UsageError(usage_message(declarations, error));
    }
    refuse_unknown_options(declarations.app);
    if (line.action != CommandLine::Action::run) {
        if (argc > 2) { // alone, they exit 0; a CI step must not go green on "-h HOST"
            throw Fatal(ExitStatus::usage,
                        not_alone_message(line.action == CommandLine::Action::help,
                                          std::vector<std::string>(argv + 1, argv + argc)));
        }
        return line;
    }
    line.options = declarations.collect(long_name);
    line.options.command = unmarked(declarations.app.remaining());
    if (const auto start = static_cast<size_t>(argc) - line.options.command.size();
        !line.options.command.empty() && start >= 2 && line.options.no_wait) {
        if (auto message = database_after_no_wait(argv[start - 1], line.options.command.front())) {
            throw Fatal(ExitStatus::usage, *message);
        }
    }
    if (!line.options.command.empty() && line.options.command.front() == "--") {
        line.options.command.erase(line.options.command.begin());
    } else if (line.options.command.size() == 1 && std::string_view(argv[argc - 2]) != "--" &&
               declarations.list != nullptr && declarations.list->count() > 0 &&
               declarations.list->as<std::string>().empty()) {
        // --list takes only the word right after it as its pattern, so in "--list --json held*"
        // the pattern comes out as a command. --list runs none: a lone last word there, not
        // after "--" (which CLI11 drops when it follows --list), is the pattern the user meant.
        line.options.list->value = std::move(line.options.command.front());
        line.options.command.clear();
    }
    if (declarations.url != nullptr) {
        line.url_values = unmarked(declarations.url->results());
    }
    return line;
}

} // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
    try {
        return parse_command_line_declaring_named_options(argc, argv);
    } catch (const Fatal&) {
        // A refusal is said as with every option declared: "did you mean" offers them all.
        return parse_command_line_declaring_every_option(argc, argv);
    }
}

CommandLine parse_command_line_declaring_named_options(int argc, const char* const* argv) {
    return parse_words(argc, argv, NamesInUse::in_words(argc, argv));
}

CommandLine parse_command_line_declaring_every_option(int argc, const char* const* argv) {
    return parse_words(argc, argv, NamesInUse::every_name());
}

namespace {

OptionText parse_config(std::string_view text, const std::string& file, bool declare_every) {
    // Every line is read here first: CLI11's reader would take one it cannot read for another.
    const ConfigLines lines = read_config_lines(text, file);
    std::map<std::string, const ConfigEntry*, std::less<>> entries;
    for (const ConfigEntry& entry : lines.entries) {
        entries.emplace(entry.name, &entry);
    }
    const auto where = [&](const std::string& name) {
        const auto found = entries.find(name);
        return found == entries.end() ? file
                                      : fmt::format("{}, line {}", file, found->second->line);
    };
    auto format = std::make_shared<CLI::ConfigTOML>();
    format->comment('\n'); // never in a line: the comments are gone already
    std::istringstream stream{lines.text};
    const std::vector<CLI::ConfigItem> items = format->from_config(stream);
    std::vector<std::string> names;
    for (const CLI::ConfigItem& item : items) {
        names.push_back(item.name);
    }
    Declarations declarations(declare_every ? NamesInUse::every_name()
                                            : NamesInUse::in_entries(names));
    for (const CLI::ConfigItem& item : items) {
        if (!item.parents.empty()) {
            throw config_error(fmt::format("{}: [{}]: redlockrun's settings have no sections",
                                           where(item.name), item.parents.front()));
        }
        const CLI::Option* option = declarations.app.get_option_no_throw("--" + item.name);
        if (option == nullptr) {
            throw config_error(fmt::format("{}: unknown entry '{}' (see FILES in redlockrun(1))",
                                           where(item.name), item.name));
        }
        if (!option->get_configurable()) {
            throw config_error(fmt::format("{}: {} can be given on the command line only",
                                           where(item.name), item.name));
        }
        // One name for each entry, the one FILES in the man page lists: flock(1)'s other names
        // (timeout) are for the command line.
        if (const std::string& entry_name = option->get_lnames().front(); entry_name != item.name) {
            throw config_error(fmt::format("{}: unknown entry '{}': write {} = ...",
                                           where(item.name), item.name, entry_name));
        }
        const auto entry = entries.find(item.name);
        if (entry != entries.end() && !entry->second->value) {
            throw config_error(fmt::format("{}: {} has no value: write {} = value",
                                           where(item.name), item.name, item.name));
        }
        if (auto spaced = item.inputs.size() > 1 && option->get_type_name() == "<duration>"
                              ? spaced_duration_message(item.inputs)
                              : std::nullopt) {
            throw config_error(fmt::format("{}: {}: {}", where(item.name), item.name, *spaced));
        }
        if (item.inputs.size() != 1) {
            throw config_error(
                fmt::format("{}: {} takes one value (put one with spaces or commas in quotes)",
                            where(item.name), item.name));
        }
    }
    // Every entry is known to be allowed by now: CLI11 assigns them as it would options.
    declarations.app.config_formatter(format);
    std::istringstream assigned{lines.text};
    try {
        declarations.app.parse_from_stream(assigned);
    } catch (const CLI::ParseError&) {
        throw config_error(fmt::format("{}: cannot be read as a config file", file));
    }
    return declarations.collect([&](const CLI::Option& option) {
        const std::string name = option.get_lnames().front();
        return fmt::format("{}: {}", where(name), name);
    });
}

} // namespace

OptionText parse_config_text(std::string_view text, const std::string& file) {
    try {
        return parse_config(text, file, false);
    } catch (const Fatal&) {
        return parse_config(text, file, true); // said as with every option declared
    }
}

OptionText parse_config_text_declaring_named_options(std::string_view text,
                                                     const std::string& file) {
    return parse_config(text, file, false);
}

OptionText parse_config_text_declaring_every_option(std::string_view text,
                                                    const std::string& file) {
    return parse_config(text, file, true);
}

std::string help_text() {
    const Declarations declarations(NamesInUse::every_name());
    std::vector<HelpEntry> entries;
    for (const std::string& group : declarations.app.get_groups()) {
        for (const CLI::Option* option : declarations.app.get_options(
                 [&group](const CLI::Option* o) { return o->get_group() == group; })) {
            HelpEntry& entry = entries.emplace_back();
            entry.group = group;
            if (!option->get_snames().empty()) {
                entry.short_name = option->get_snames().front();
            }
            entry.names = option->get_lnames();
            if (option->get_expected_max() > 0) {
                entry.value = option->get_type_name();
                entry.value_optional = option->get_expected_min() == 0;
            }
            entry.description = option->get_description();
        }
    }
    return format_help(entries);
}

std::string version_text() {
    return fmt::format("redlockrun {}\n", version_number);
}

std::vector<std::string> accepted_option_names() {
    const Declarations declarations(NamesInUse::every_name());
    std::vector<std::string> names;
    for (const Binding& binding : declarations.bindings) {
        for (const auto& name : binding.option->get_snames()) {
            names.push_back("-" + name);
        }
        for (const auto& name : binding.option->get_lnames()) {
            names.push_back("--" + name);
        }
    }
    return names;
}

std::vector<std::string> config_entry_names() {
    const Declarations declarations(NamesInUse::every_name());
    std::vector<std::string> names;
    for (const Binding& binding : declarations.bindings) {
        if (binding.option->get_configurable()) {
            names.push_back(binding.option->get_lnames().front());
        }
    }
    return names;
}

} // namespace redlockrun
