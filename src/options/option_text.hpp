// The options as written, before anything is converted: what cli.cpp reads from the command line,
// and from each config file. Every value keeps where it was written, so that the message about a
// bad one names the option, or the file and line.
#pragma once

#include "base/setting.hpp"

#include <optional>
#include <string>
#include <vector>

namespace redlockrun {

struct OptionText {
    std::optional<Setting> key;
    bool no_wait = false;
    std::optional<Setting> wait;
    std::optional<Setting> ttl;
    bool no_renew = false;
    std::optional<Setting> timestamp_unit;
    std::optional<Setting> min_hold;
    std::optional<Setting> limit;
    bool shared = false;
    bool exclusive = false;
    bool supersede = false;
    std::optional<Setting> note;
    std::optional<Setting> conflict_exit_code;
    std::optional<Setting> shell_command;
    std::optional<Setting> on_lost;
    std::optional<Setting> kill_after;
    std::optional<Setting> lost_exit_code;
    std::optional<Setting> url;
    std::optional<Setting> password_file;
    std::optional<Setting> sentinel_user;
    std::optional<Setting> sentinel_password_file;
    std::optional<Setting> tls_ca_file;
    std::optional<Setting> tls_cert;
    std::optional<Setting> tls_key;
    std::optional<Setting> tls_server_name;
    std::optional<Setting> connect_timeout;
    std::optional<Setting> replicas;
    std::optional<Setting> config;
    bool status = false;
    bool json = false;
    bool held = false;
    std::optional<Setting> list; // "*" when --list is given without a pattern
    bool hold = false;
    bool break_lock = false;
    std::optional<Setting> owner;
    std::optional<Setting> max_hold;
    std::optional<Setting> release; // "" when --release is given without a handle
    std::optional<Setting> check;   // "" when --check is given without a handle
    bool quiet = false;
    bool verbose = false;
    std::optional<Setting> metrics_file;
    std::optional<Setting> syslog; // "true" for --syslog; yes or no (and their likes) otherwise
    std::optional<Setting> syslog_facility;
    std::optional<Setting> log_format;
    std::vector<std::string> command; // the words after the options

    bool operator==(const OptionText&) const = default;
};

// Fills in, from a config file, the lock and reporting settings that `options` leaves out: call it
// for each file, the one that wins first. A wait the command line gives in any form (-n, -w) is not
// filled in. Connection settings are left alone: the environment comes between them and the command
// line, and redis/settings.cpp puts them in order.
void fill_in_from_file(OptionText& options, const OptionText& file);

} // namespace redlockrun
