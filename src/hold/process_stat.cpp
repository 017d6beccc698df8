#include "hold/process_stat.hpp"

#include <fmt/core.h>

#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>

namespace redlockrun::hold {

bool read_process_stat(pid_t pid, ProcessStat& stat) {
    std::ifstream file(fmt::format("/proc/{}/stat", pid));
    std::string text;
    if (!file || !std::getline(file, text)) {
        return false;
    }
    // The fields after the command name, which may hold spaces and parentheses: the state, the
    // parent pid, the process group, the session, the terminal, its foreground group, then (after
    // thirteen more) the start time.
    const auto name_end = text.rfind(')');
    if (name_end == std::string::npos) {
        return false;
    }
    std::istringstream fields(text.substr(name_end + 1));
    std::string skipped;
    fields >> stat.state >> stat.parent >> stat.group >> stat.session >> stat.terminal >>
        stat.foreground_group;
    for (int i = 0; i < 13 && fields; ++i) { // flags ... itrealvalue
        fields >> skipped;
    }
    fields >> stat.start_time;
    stat.pid = pid;
    return static_cast<bool>(fields);
}

std::optional<ProcessStat> stat_of(pid_t pid) {
    ProcessStat stat;
    return read_process_stat(pid, stat) ? std::optional(stat) : std::nullopt;
}

std::vector<ProcessStat> all_processes() {
    std::vector<ProcessStat> processes;
    DIR* folder = ::opendir("/proc");
    if (folder == nullptr) {
        return processes;
    }
    while (const dirent* entry = ::readdir(folder)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        ProcessStat stat;
        if (pid > 0 && *end == '\0' && read_process_stat(static_cast<pid_t>(pid), stat)) {
            processes.push_back(stat);
        }
    }
    ::closedir(folder);
    return processes;
}

bool ignores(pid_t pid, int signal_number) {
    std::ifstream status(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(status, line)) {
        if (line.starts_with("SigIgn:")) {
            const unsigned long long ignored = std::stoull(line.substr(7), nullptr, 16);
            return (ignored >> (signal_number - 1) & 1U) != 0;
        }
    }
    return false;
}

} // namespace redlockrun::hold
