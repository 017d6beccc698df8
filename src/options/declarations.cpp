#include "options/declarations.hpp"

#include "base/version.hpp"
#include "options/marked_words.hpp"
#include "options/options.hpp"

#include <fmt/core.h>

#include <utility>

namespace redlockrun {

Declarations::Declarations(NamesInUse names) : names_in_use_(std::move(names)) {
    // No CLI11 --help flag (Parser): CLI11's would act only after everything was parsed.
    // As in flock(1): the first word that is not an option starts the command, and options that
    // are not known stay in what is left over, in front of it.
    app.prefix_command();

    group_ = "Lock";
    value("-k,--key", "<key>", InConfigFile::no, "name of the lock (a Redis key)",
          &OptionText::key);
    // flock(1)'s names beside redlockrun's own: --nb and --nonblock, --timeout, -x.
    flag("-n,--no-wait,--nb,--nonblock", "fail at once if the lock is held", &OptionText::no_wait);
    value("-w,--wait,--timeout", "<duration>", InConfigFile::yes,
          "give up after waiting this long, for the lock\nor for Redis at start (0: same as "
          "-n;\ndefault: wait forever)",
          &OptionText::wait);
    // As in flock(1): -s shares the lock with other -s runs, -x (the default) takes it alone.
    flag("-s,--shared",
         "share the lock with other --shared runs\n(readers), never with an exclusive one;\n"
         "waiters of both kinds are served in the\norder they came",
         &OptionText::shared);
    flag("-x,--exclusive", "an exclusive lock: the default, as in flock(1)",
         &OptionText::exclusive);
    value(
        "-t,--ttl", "<duration>", InConfigFile::yes,
        "how long the lock stays valid (default 30s);\nrenewed every ttl/3 while the command runs",
        &OptionText::ttl);
    flag("--no-renew",
         "let the lock lapse after the TTL: with\n--on-lost term, the TTL bounds the run",
         &OptionText::no_renew);
    value("--timestamp-unit", "<unit>", InConfigFile::yes,
          "write the key's timestamp in ms (default) or s", &OptionText::timestamp_unit);
    value("--min-hold", "<duration>", InConfigFile::no,
          "keep the lock at least this long after it\nwas granted, even if the command ends\n"
          "sooner (once per cron tick across hosts)",
          &OptionText::min_hold);
    if (CLI::Option* limit = value("--limit", "<n>", InConfigFile::no, "", &OptionText::limit)) {
        limit->description(fmt::format("let up to <n> runs hold the lock at once\n(a counting "
                                       "semaphore; 1 to {}, default 1);\n"
                                       "each one's slot is in $REDLOCKRUN_SLOT",
                                       max_limit));
    }
    flag("--supersede",
         "newest wins: when this run has to wait, end\nevery earlier waiter of the key that also\n"
         "asked for --supersede (of the same mode);\nthey give up at once, as if busy",
         &OptionText::supersede);
    // A note says why this run holds the lock: it belongs to the run, never to a config file.
    if (CLI::Option* note = value("--note", "<text>", InConfigFile::no, "", &OptionText::note)) {
        note->description(fmt::format("why this run holds the lock (a deploy id, a\nCI job's "
                                      "URL; at most {} bytes), shown to\nwhoever finds it held, "
                                      "and by --status",
                                      max_note_bytes));
    }
    value("-E,--conflict-exit-code", "<n>", InConfigFile::yes,
          "exit status when the lock is not acquired\n(default 75)",
          &OptionText::conflict_exit_code);

    group_ = "Command";
    value("-c,--command", "<string>", InConfigFile::no, "run <string> with /bin/sh -c",
          &OptionText::shell_command);
    value("--on-lost", "<action>", InConfigFile::yes,
          "if the lock is lost while the command runs:\nterm (default) stops the command,\n"
          "ignore lets it run on with a warning",
          &OptionText::on_lost);
    value("--kill-after", "<duration>", InConfigFile::yes,
          "send SIGKILL this long after SIGTERM\n(default 10s)", &OptionText::kill_after);
    value("--lost-exit-code", "<n>", InConfigFile::yes,
          "exit status when the lock was lost (default 76)", &OptionText::lost_exit_code);

    group_ = "Holding";
    flag("--hold",
         "take the lock and leave a keeper holding it\nfor the script: prints assignments to eval",
         &OptionText::hold);
    value("--owner", "<pid|none>", InConfigFile::no,
          "with --hold: the process whose exit ends\nthe hold (default: the script that ran\n"
          "--hold); none: only --release or\n--max-hold ends it",
          &OptionText::owner);
    value("--max-hold", "<duration>", InConfigFile::no,
          "with --hold: release after this long at the\nlatest, 1s or more (needed with --owner "
          "none)",
          &OptionText::max_hold);
    optional_value("--release", "<handle>", "",
                   "end a hold: 0 if it was kept to the end,\n76 if it was lost (default: "
                   "$REDLOCKRUN_HOLD)",
                   &OptionText::release);
    optional_value(
        "--check", "<handle>", "",
        "ask Redis: 0 while a hold is intact, 76\nonce it was lost, 69 if Redis cannot be\n"
        "asked (default: $REDLOCKRUN_HOLD)",
        &OptionText::check);

    group_ = "Redis";
    url = value("-u,--url", "<url>", InConfigFile::yes,
                "redis://[[user:]password@]host[:port][/db],\nrediss://... (TLS), "
                "unix:///path[?db=N], or\nredis-sentinel://host[:port][,host[:port]...]\n"
                "[/db]#master (rediss-sentinel:// for TLS);\ndefault: $REDLOCKRUN_URL, then the "
                "config\nfiles, then $REDIS_URL, then\nredis://127.0.0.1:6379. The password: "
                "from\n--password-file, else --url, else\n$REDLOCKRUN_URL, else "
                "$REDISCLI_AUTH, else\nthe config files, else $REDIS_URL (a URL's\n"
                "password only if that URL is used)",
                &OptionText::url);
    value("--password-file", "<file>", InConfigFile::yes,
          "read the password from <file> (or set\n$REDISCLI_AUTH); never put one on the\n"
          "command line",
          &OptionText::password_file);
    value("--sentinel-user", "<name>", InConfigFile::yes,
          "log in to the sentinels as this ACL user\n(or set $REDLOCKRUN_SENTINEL_USER)",
          &OptionText::sentinel_user);
    value("--sentinel-password-file", "<file>", InConfigFile::yes,
          "read the sentinels' password from <file>\n(or set $REDLOCKRUN_SENTINEL_PASSWORD)",
          &OptionText::sentinel_password_file);
    value("--tls-ca-file", "<file>", InConfigFile::yes,
          "trust the CA certificates in <file> (PEM)\ninstead of the system's",
          &OptionText::tls_ca_file);
    value("--tls-cert", "<file>", InConfigFile::yes,
          "present the client certificate in <file> (PEM)", &OptionText::tls_cert);
    value("--tls-key", "<file>", InConfigFile::yes, "the client certificate's private key (PEM)",
          &OptionText::tls_key);
    value("--tls-server-name", "<name>", InConfigFile::yes,
          "the name the server's certificate must be\nissued for (default: the URL's host)",
          &OptionText::tls_server_name);
    value("--connect-timeout", "<duration>", InConfigFile::yes,
          "give up connecting, or waiting for a reply,\nafter this long (default 5s)",
          &OptionText::connect_timeout);
    value("--replicas", "<n>", InConfigFile::yes,
          "after every grant and renewal, wait until <n>\nreplicas have it (WAIT; default 0)",
          &OptionText::replicas);

    group_ = "Reporting";
    value("--metrics-file", "<file>", InConfigFile::yes,
          "keep counters and the last run's figures for\nthe key in <file>, in Prometheus' text "
          "format\n(node_exporter's textfile collector), shared\nwith other runs",
          &OptionText::metrics_file);
    switch_flag("--syslog",
                "send redlockrun's messages to syslog too, -q\nor not (ident redlockrun)",
                &OptionText::syslog);
    value("--syslog-facility", "<name>", InConfigFile::yes,
          "with --syslog: user (default), daemon, cron\nor local0 to local7",
          &OptionText::syslog_facility);
    value("--log-format", "<format>", InConfigFile::yes,
          "text (default), or json: one JSON object per\nmessage on stderr",
          &OptionText::log_format);

    group_ = "Other";
    if (CLI::Option* config =
            value("--config", "<file>", InConfigFile::no, "", &OptionText::config)) {
        config->description(
            fmt::format("read settings from <file> instead of\n{} and\n~/.config/redlockrun/config",
                        system_config_file));
    }
    flag("--status", "show who holds the lock and exit:\n0 if free, 75 if held",
         &OptionText::status);
    list = optional_value("--list", "<pattern>", "*",
                          "list the locks whose keys match <pattern>\n(default: all) and exit: "
                          "0 if none is\nheld, 75 if one is",
                          &OptionText::list);
    flag("--held", "with --list: only the locks that are held", &OptionText::held);
    flag("--break",
         "end every holder's claim on the lock now, and\nwake the waiters (for an operator; "
         "each\nholder is stopped at its next renewal)",
         &OptionText::break_lock);
    flag("--json",
         "with --status or --list: print a JSON\nobject per lock, one per line; with --hold:\n"
         "print the hold as one JSON object",
         &OptionText::json);
    flag("-q,--quiet", "no message when the lock is busy, nor that a\nrun waits and got it",
         &OptionText::quiet);
    flag("-v,--verbose",
         "name the server, its version and where its\nURL came from; report waiting, acquiring,\n"
         "renewing, releasing and forwarded signals,\neach with what it timed",
         &OptionText::verbose);
    stop("-h,--help", "display this help", [] { throw CLI::CallForHelp(); });
    stop("-V,--version", "display version", [] { throw CLI::CallForVersion(); });
}

CLI::Option* Declarations::value(const char* names, const char* type, InConfigFile in_config_file,
                                 const char* description,
                                 std::optional<Setting> OptionText::*field) {
    if (!names_in_use_.any_of(names)) {
        return nullptr;
    }
    CLI::Option* option = app.add_option(names)
                              ->description(description)
                              ->type_name(type)
                              ->group(group_)
                              ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
                              ->configurable(in_config_file == InConfigFile::yes);
    bindings.push_back({option, field, nullptr});
    return option;
}

CLI::Option* Declarations::optional_value(const char* names, const char* type, const char* implied,
                                          const char* description,
                                          std::optional<Setting> OptionText::*field) {
    if (!names_in_use_.any_of(names)) {
        return nullptr;
    }
    CLI::Option* option = app.add_option(names)
                              ->description(description)
                              ->type_name(type)
                              ->group(group_)
                              ->expected(0, 1)
                              ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
                              ->configurable(false);
    bindings.push_back({option, field, nullptr, implied});
    return option;
}

void Declarations::flag(const char* names, const char* description, bool OptionText::*field) {
    if (!names_in_use_.any_of(names)) {
        return;
    }
    // No "--flag=value": CLI11 would take any value, and "--no-renew=no" would renew nothing.
    CLI::Option* option = app.add_flag(names)
                              ->description(description)
                              ->group(group_)
                              ->disable_flag_override()
                              ->configurable(false);
    bindings.push_back({option, nullptr, field});
}

void Declarations::switch_flag(const char* names, const char* description,
                               std::optional<Setting> OptionText::*field) {
    if (!names_in_use_.any_of(names)) {
        return;
    }
    // Without disable_flag_override(), which would let only "true" into a config file.
    CLI::Option* option = app.add_flag(names)
                              ->description(description)
                              ->group(group_)
                              ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
                              ->configurable(true);
    bindings.push_back({option, field, nullptr, nullptr, true});
}

void Declarations::stop(const char* names, const char* description,
                        std::function<void()> stop_parsing) {
    if (!names_in_use_.any_of(names)) {
        return;
    }
    CLI::Option* option = app.add_flag_callback(names, std::move(stop_parsing), description)
                              ->group(group_)
                              ->disable_flag_override()
                              ->configurable(false)
                              ->trigger_on_parse();
    bindings.push_back({option, nullptr, nullptr});
}

OptionText
Declarations::collect(const std::function<std::string(const CLI::Option&)>& origin_of) const {
    OptionText text;
    for (const Binding& binding : bindings) {
        if (binding.option->count() == 0) {
            continue;
        }
        if (binding.value != nullptr) {
            // Left out, the value is empty; "--name=" is marked, and stays an empty value.
            std::string value = binding.switch_value ? binding.option->results().back()
                                                     : binding.option->as<std::string>();
            if (value.empty() && binding.implied_value != nullptr) {
                value = binding.implied_value;
            }
            text.*binding.value = Setting{unmarked(std::move(value)), origin_of(*binding.option)};
        } else if (binding.flag != nullptr) {
            text.*binding.flag = true;
        }
    }
    return text;
}

} // namespace redlockrun
