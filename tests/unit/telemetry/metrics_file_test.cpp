#include "telemetry/metrics_file.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace redlockrun;
using namespace redlockrun::telemetry;
using redlockrun::testing::TempDir;

namespace {

RunFigures figures(const std::string& key, Outcome outcome, int status) {
    RunFigures run;
    run.key = key;
    run.outcome = outcome;
    run.started_ms = 1795938184477;
    run.waited_ms = 1500;
    run.held_ms = 62005;
    run.exit_status = status;
    return run;
}

size_t count_of(const std::string& text, const std::string& line) {
    size_t found = 0;
    for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1)) {
        ++found;
    }
    return found;
}

} // namespace

TEST_CASE("metrics: a first run writes every family, its outcome counted and the others at 0") {
    const std::string text = merged_metrics("", figures("deploy", Outcome::busy, 75));
    CHECK(text.starts_with("# HELP redlockrun_runs_total "));
    CHECK(count_of(text, "# TYPE redlockrun_runs_total counter\n") == 1);
    CHECK(count_of(text,
                   "redlockrun_runs_total{key=\"deploy\",kind=\"run\",outcome=\"busy\"} 1\n") == 1);
    for (const char* other : {"ran", "lost", "error"}) {
        CHECK(count_of(text, std::string("redlockrun_runs_total{key=\"deploy\",kind=\"run\","
                                         "outcome=\"") +
                                 other + "\"} 0\n") == 1);
    }
    CHECK(count_of(text, "redlockrun_last_start_timestamp_seconds{key=\"deploy\",kind=\"run\"} "
                         "1795938184.477\n") == 1);
    CHECK(count_of(text, "redlockrun_last_wait_seconds{key=\"deploy\",kind=\"run\"} 1.500\n") == 1);
    CHECK(count_of(text, "redlockrun_last_hold_seconds{key=\"deploy\",kind=\"run\"} 62.005\n") ==
          1);
    CHECK(count_of(text, "redlockrun_last_exit_status{key=\"deploy\",kind=\"run\"} 75\n") == 1);
    CHECK(count_of(text, "# TYPE redlockrun_last_exit_status gauge\n") == 1);
}

TEST_CASE(
    "metrics: runs add up, other keys and kinds are kept, and the gauges are the last run's") {
    std::string text = merged_metrics("", figures("deploy", Outcome::ran, 0));
    text = merged_metrics(text, figures("backup", Outcome::lost, 76));
    RunFigures hold = figures("deploy", Outcome::ran, 0);
    hold.hold = true;
    text = merged_metrics(text, hold);
    RunFigures again = figures("deploy", Outcome::ran, 3);
    again.held_ms = 10;
    text = merged_metrics(text, again);
    CHECK(count_of(text,
                   "redlockrun_runs_total{key=\"deploy\",kind=\"run\",outcome=\"ran\"} 2\n") == 1);
    CHECK(count_of(text,
                   "redlockrun_runs_total{key=\"deploy\",kind=\"hold\",outcome=\"ran\"} 1\n") == 1);
    CHECK(count_of(text,
                   "redlockrun_runs_total{key=\"backup\",kind=\"run\",outcome=\"lost\"} 1\n") == 1);
    CHECK(count_of(text, "redlockrun_last_exit_status{key=\"deploy\",kind=\"run\"} 3\n") == 1);
    CHECK(count_of(text, "redlockrun_last_hold_seconds{key=\"deploy\",kind=\"run\"} 0.010\n") == 1);
    CHECK(count_of(text, "redlockrun_last_exit_status{key=\"backup\",kind=\"run\"} 76\n") == 1);
    CHECK(count_of(text, "# HELP ") == 5); // each family once, whatever the number of keys
}

TEST_CASE("metrics: lines that are not redlockrun's samples are dropped") {
    const std::string text =
        merged_metrics("# a comment\nnode_load1 3\ngarbage\nredlockrun_unknown{key=\"x\"} 1\n"
                       "redlockrun_runs_total{key=\"old\",kind=\"run\",outcome=\"ran\"} 7\n",
                       figures("new", Outcome::ran, 0));
    CHECK(text.find("node_load1") == std::string::npos);
    CHECK(text.find("garbage") == std::string::npos);
    CHECK(text.find("redlockrun_unknown") == std::string::npos);
    CHECK(count_of(text, "redlockrun_runs_total{key=\"old\",kind=\"run\",outcome=\"ran\"} 7\n") ==
          1);
}

TEST_CASE("metrics: a key is a label value: escaped, and valid UTF-8") {
    CHECK(label_value("plain") == "plain");
    CHECK(label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
    CHECK(label_value("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(label_value("bad\xff") == "bad\xEF\xBF\xBD");
    const std::string text = merged_metrics("", figures("we\"ird\n", Outcome::ran, 0));
    CHECK(count_of(text, "key=\"we\\\"ird\\n\"") == 8);
    // Read back, the escaped key is the same sample, not a new one.
    const std::string again = merged_metrics(text, figures("we\"ird\n", Outcome::ran, 0));
    CHECK(count_of(again, "outcome=\"ran\"} 2\n") == 1);
}

TEST_CASE("metrics: the file is replaced whole, beside a lock file, and readable by others") {
    const TempDir dir;
    const std::string path = dir.path + "/redlockrun.prom";
    REQUIRE_FALSE(update_metrics_file(path, figures("deploy", Outcome::ran, 0)));
    REQUIRE_FALSE(update_metrics_file(path, figures("deploy", Outcome::ran, 0)));
    std::ifstream file(path);
    std::stringstream read;
    read << file.rdbuf();
    CHECK(count_of(read.str(), "outcome=\"ran\"} 2\n") == 1);
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    CHECK((info.st_mode & 0044) == 0044); // node_exporter runs as another user
    CHECK(::stat((path + ".lock").c_str(), &info) == 0);
}

TEST_CASE("metrics: a file that cannot be written is a message, not an exception") {
    const TempDir dir;
    const auto failed =
        update_metrics_file(dir.path + "/missing-folder/x.prom", figures("k", Outcome::ran, 0));
    REQUIRE(failed);
    CHECK(failed->find("missing-folder/x.prom.lock") != std::string::npos);
}

TEST_CASE("metrics: a file found where the new one goes is never written to") {
    // A hard link there to someone else's file (another user's, in a shared directory) must not be
    // truncated, nor renamed into place: it is removed, and a new file made.
    const TempDir dir;
    const std::string path = dir.path + "/redlockrun.prom";
    const std::string other = dir.path + "/someone-elses";
    { std::ofstream(other) << "not yours\n"; }
    const std::string temporary = path + "." + std::to_string(::getpid()) + ".tmp";
    REQUIRE(::link(other.c_str(), temporary.c_str()) == 0);
    REQUIRE_FALSE(update_metrics_file(path, figures("deploy", Outcome::ran, 0)));
    std::ifstream kept(other);
    std::stringstream read;
    read << kept.rdbuf();
    CHECK(read.str() == "not yours\n");
    struct stat mine {};
    struct stat theirs {};
    REQUIRE(::stat(path.c_str(), &mine) == 0);
    REQUIRE(::stat(other.c_str(), &theirs) == 0);
    CHECK(mine.st_ino != theirs.st_ino);
    CHECK(theirs.st_nlink == 1);
    CHECK(::access(temporary.c_str(), F_OK) != 0);
}
