#include "hold/process_stat.hpp"

#include <fmt/core.h>

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
    // The fields after the command name, which may hold spaces and parentheses: the state is the
    // first, the parent pid the second, the start time the twentieth.
    const auto name_end = text.rfind(')');
    if (name_end == std::string::npos) {
        return false;
    }
    std::istringstream fields(text.substr(name_end + 1));
    std::string skipped;
    fields >> stat.state >> stat.parent;
    for (int i = 0; i < 17 && fields; ++i) { // pgrp ... itrealvalue
        fields >> skipped;
    }
    fields >> stat.start_time;
    return static_cast<bool>(fields);
}

} // namespace redlockrun::hold
