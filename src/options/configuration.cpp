#include "options/configuration.hpp"

#include "base/fatal.hpp"
#include "options/cli.hpp"
#include "redis/endpoint.hpp"

#include <fmt/core.h>

#include <sys/stat.h>

namespace redlockrun {

namespace {

std::optional<std::string> value_of(const std::optional<Setting>& setting) {
    return setting ? std::optional(setting->value) : std::nullopt;
}

// As ~/.pgpass: a password in a file that others can read is not used, and the run stops, so that
// the mistake is put right rather than forgotten.
void refuse_exposed_password(const ConfigFile& file, const OptionText& entries) {
    if (!entries.url || !redis::password_span(entries.url->value) ||
        (file.permissions & (S_IRGRP | S_IROTH)) == 0) {
        return;
    }
    throw Fatal(ExitStatus::usage,
                fmt::format("the config file {} holds a password in its url and can be read by "
                            "other users (mode {:04o}): make it private with chmod 600, or give "
                            "the password in a password-file",
                            file.path, file.permissions));
}

// A relative path in a config file names a file beside it, wherever the run starts: cron starts
// jobs in $HOME, a service manager in /.
std::string beside(const std::string& config_path, const std::string& path) {
    const auto slash = config_path.rfind('/');
    if (path.empty() || path.front() == '/' || slash == std::string::npos) {
        return path;
    }
    return config_path.substr(0, slash + 1) + path;
}

std::optional<Setting> path_beside(const std::string& config_path,
                                   const std::optional<Setting>& path) {
    if (!path) {
        return std::nullopt;
    }
    return Setting{beside(config_path, path->value), path->origin};
}

std::optional<std::string> path_value_beside(const std::string& config_path,
                                             const std::optional<Setting>& path) {
    return value_of(path_beside(config_path, path));
}

redis::FileConnection connection_part(const ConfigFile& file, const OptionText& entries) {
    return {entries.url,
            path_beside(file.path, entries.password_file),
            {path_value_beside(file.path, entries.tls_ca_file),
             path_value_beside(file.path, entries.tls_cert),
             path_value_beside(file.path, entries.tls_key), value_of(entries.tls_server_name)},
            entries.sentinel_user,
            path_beside(file.path, entries.sentinel_password_file)};
}

} // namespace

Options configure(const OptionText& command_line, const ConfigPlaces& places) {
    std::vector<std::string> paths; // the one that wins first
    const bool named = command_line.config.has_value();
    if (named) {
        paths.push_back(command_line.config->value);
    } else {
        for (const auto& place : {places.user_file, places.system_file}) {
            if (place) {
                paths.push_back(*place);
            }
        }
    }
    OptionText settings = command_line;
    std::vector<redis::FileConnection> connections;
    for (const auto& path : paths) {
        const auto file = read_config_file(path, named);
        if (!file) {
            continue;
        }
        OptionText entries = parse_config_text(file->text, file->path);
        refuse_exposed_password(*file, entries);
        entries.metrics_file = path_beside(file->path, entries.metrics_file);
        fill_in_from_file(settings, entries);
        connections.push_back(connection_part(*file, entries));
    }
    Options options = to_options(settings);
    options.config_files = std::move(connections);
    validate(options);
    return options;
}

} // namespace redlockrun
