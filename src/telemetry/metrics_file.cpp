#include "telemetry/metrics_file.hpp"

#include "base/unique_fd.hpp"
#include "base/utf8.hpp"

#include <fmt/core.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace redlockrun::telemetry {

namespace {

struct Family {
    std::string_view name;
    std::string_view type;
    std::string_view help;
};

constexpr std::string_view runs_total = "redlockrun_runs_total";
constexpr std::string_view last_start = "redlockrun_last_start_timestamp_seconds";
constexpr std::string_view last_wait = "redlockrun_last_wait_seconds";
constexpr std::string_view last_hold = "redlockrun_last_hold_seconds";
constexpr std::string_view last_status = "redlockrun_last_exit_status";

constexpr std::array<Family, 5> families{{
    {runs_total, "counter",
     "Runs and holds of a lock by redlockrun on this host, by how they ended: ran (the lock was "
     "held to the end), busy (not acquired), lost (lost while held), error."},
    {last_start, "gauge", "When the last run or hold of the key started (Unix time)."},
    {last_wait, "gauge", "How long the last run or hold of the key waited for the lock."},
    {last_hold, "gauge", "How long the last run or hold of the key held the lock."},
    {last_status, "gauge", "The exit status of the last run or hold of the key."},
}};

constexpr std::array<std::string_view, 4> outcome_names{"ran", "busy", "lost", "error"};

std::string_view name_of(Outcome outcome) {
    return outcome_names[static_cast<size_t>(outcome)];
}

std::string seconds(long long ms) {
    return fmt::format("{}.{:03}", ms / 1000, ms % 1000);
}

// The samples of each family: its label text ("key=\"a\",kind=\"run\"") -> value.
using Samples = std::map<std::string_view, std::map<std::string, std::string>>;

// One sample line, "name{labels} value", if it is one of redlockrun's.
bool read_sample(std::string_view line, Samples& samples) {
    const auto brace = line.find('{');
    const auto close = line.rfind("} ");
    if (brace == std::string_view::npos || close == std::string_view::npos || close < brace) {
        return false;
    }
    const std::string_view name = line.substr(0, brace);
    for (const Family& family : families) {
        if (family.name == name) {
            samples[family.name][std::string(line.substr(brace + 1, close - brace - 1))] =
                std::string(line.substr(close + 2));
            return true;
        }
    }
    return false;
}

std::string text_of(const Samples& samples) {
    std::string text;
    for (const Family& family : families) {
        const auto found = samples.find(family.name);
        if (found == samples.end() || found->second.empty()) {
            continue;
        }
        text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name, family.help, family.name,
                            family.type);
        for (const auto& [labels, value] : found->second) {
            text += fmt::format("{}{{{}}} {}\n", family.name, labels, value);
        }
    }
    return text;
}

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t written = ::write(fd, text.data(), text.size());
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {
            return false;
        }
        text.remove_prefix(static_cast<size_t>(written));
    }
    return true;
}

std::optional<std::string> read_file(const std::string& path, std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) {
        return errno == ENOENT ? std::nullopt : std::optional(std::string(std::strerror(errno)));
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
        return std::string("not a regular file");
    }
    std::array<char, 65536> buffer{};
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return std::string(std::strerror(errno));
        }
        if (got == 0) {
            return std::nullopt;
        }
        text.append(buffer.data(), static_cast<size_t>(got));
    }
}

// Waits for the lock beside the file, up to `patience_ms`.
bool lock_within(int fd, long long patience_ms) {
    for (long long waited = 0;; waited += 10) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            return true;
        }
        if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= patience_ms) {
            return false;
        }
        const timespec pause{0, 10 * 1000 * 1000};
        ::nanosleep(&pause, nullptr);
    }
}

} // namespace

long long now_ms() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

std::string label_value(std::string_view key) {
    std::string out;
    for (size_t at = 0; at < key.size();) {
        const auto byte = static_cast<unsigned char>(key[at]);
        if (byte < 0x80) {
            if (byte == '\\' || byte == '"') {
                out.push_back('\\');
                out.push_back(static_cast<char>(byte));
            } else if (byte == '\n') {
                out += "\\n";
            } else {
                out.push_back(static_cast<char>(byte));
            }
            ++at;
            continue;
        }
        char32_t code_point = 0;
        const size_t length = utf8_sequence(key, at, code_point);
        if (length == 0) {
            out += "\xEF\xBF\xBD"; // U+FFFD
            ++at;
        } else {
            out.append(key.substr(at, length));
            at += length;
        }
    }
    return out;
}

std::string merged_metrics(std::string_view existing, const RunFigures& run) {
    Samples samples;
    while (!existing.empty()) {
        const auto end = existing.find('\n');
        read_sample(existing.substr(0, end), samples);
        existing = end == std::string_view::npos ? std::string_view{} : existing.substr(end + 1);
    }
    const std::string labels =
        fmt::format("key=\"{}\",kind=\"{}\"", label_value(run.key), run.hold ? "hold" : "run");
    for (const std::string_view outcome : outcome_names) {
        std::string& count = samples[runs_total][fmt::format("{},outcome=\"{}\"", labels, outcome)];
        long long value = std::atoll(count.c_str());
        if (outcome == name_of(run.outcome)) {
            ++value;
        }
        count = std::to_string(value);
    }
    samples[last_start][labels] = seconds(run.started_ms);
    samples[last_wait][labels] = seconds(run.waited_ms.value_or(0));
    samples[last_hold][labels] = seconds(run.held_ms.value_or(0));
    samples[last_status][labels] = std::to_string(run.exit_status);
    return text_of(samples);
}

std::optional<std::string> update_metrics_file(const std::string& path, const RunFigures& run,
                                               long long patience_ms) {
    const std::string lock_path = path + ".lock";
    UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (lock.get() < 0) {
        return fmt::format("cannot open {}: {}", lock_path, std::strerror(errno));
    }
    if (!lock_within(lock.get(), patience_ms)) {
        return fmt::format("{} stayed locked for {} ms; this run is not counted", lock_path,
                           patience_ms);
    }
    std::string existing;
    if (auto failed = read_file(path, existing)) {
        return fmt::format("cannot read {}: {}", path, *failed);
    }
    const std::string text = merged_metrics(existing, run);
    // A new file, never one found there: one that another user left in a shared directory would
    // otherwise be written to and renamed into place, still theirs. What is found is a leftover
    // of a run that was killed (the lock beside the file keeps out every other run): it goes.
    const std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
    const auto create = [&] {
        return ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                      0644);
    };
    UniqueFd out(create());
    if (out.get() < 0 && errno == EEXIST && ::unlink(temporary.c_str()) == 0) {
        out = UniqueFd(create());
    }
    if (out.get() < 0) {
        return fmt::format("cannot write {}: {}", temporary, std::strerror(errno));
    }
    if (!write_all(out.get(), text) || ::fsync(out.get()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(temporary.c_str());
        return fmt::format("cannot write {}: {}", temporary, why);
    }
    out.reset();
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(temporary.c_str());
        return fmt::format("cannot replace {}: {}", path, why);
    }
    return std::nullopt;
}

} // namespace redlockrun::telemetry
