#include "base/fatal.hpp"
#include "full_descriptor_table.hpp"
#include "redis/settings.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace redlockrun;
using namespace redlockrun::redis;

namespace {

struct FakeEnvironment {
    std::map<std::string, std::string> variables;
    Environment function() const {
        return [this](const char* name) -> const char* {
            auto found = variables.find(name);
            return found == variables.end() ? nullptr : found->second.c_str();
        };
    }
};

struct TempFile {
    std::string path;
    explicit TempFile(const std::string& content) {
        char name[] = "/tmp/redlockrun-test-XXXXXX";
        int fd = ::mkstemp(name);
        REQUIRE(fd >= 0);
        ::close(fd);
        path = name;
        std::ofstream(path, std::ios::binary) << content;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

} // namespace

TEST_CASE("settings: URL precedence --url, $REDLOCKRUN_URL, config files, $REDIS_URL, default") {
    FakeEnvironment env;
    auto resolved = resolve_settings({}, env.function());
    REQUIRE(resolved);
    CHECK(resolved->endpoint.display() == "127.0.0.1:6379");
    CHECK(resolved->url_source == "default");

    env.variables["REDIS_URL"] = "redis://from-redis-url:1";
    auto from_redis_url = resolve_settings({}, env.function());
    CHECK(from_redis_url->endpoint.host == "from-redis-url");
    CHECK(from_redis_url->url_source == "$REDIS_URL");
    ConnectionRequest request;
    FileConnection file;
    file.url = Setting{"redis://from-file:1", "f.conf, line 2: url"};
    request.files = {file};
    // An application's $REDIS_URL does not overrule the fleet's config file...
    auto from_file = resolve_settings(request, env.function());
    CHECK(from_file->endpoint.host == "from-file");
    CHECK(from_file->url_source == "f.conf, line 2: url");
    // ...but $REDLOCKRUN_URL, set for redlockrun, does.
    env.variables["REDLOCKRUN_URL"] = "redis://from-redlockrun-url:1";
    CHECK(resolve_settings(request, env.function())->endpoint.host == "from-redlockrun-url");
    CHECK(resolve_settings(request, env.function())->url_source == "$REDLOCKRUN_URL");
    request.url = "redis://from-option:1";
    auto explicit_url = resolve_settings(request, env.function());
    CHECK(explicit_url->endpoint.host == "from-option");
    CHECK(explicit_url->url_source == "--url");
    env.variables["REDLOCKRUN_URL"] = "";
    CHECK(resolve_settings({}, env.function())->endpoint.host == "from-redis-url");
}

TEST_CASE("settings: where the URL and the password came from, for messages and -v") {
    FakeEnvironment env;
    auto by_default = resolve_settings({}, env.function());
    REQUIRE(by_default);
    CHECK(describe_url_source(by_default->url_source) ==
          "the default URL; set --url, $REDLOCKRUN_URL or url in a config file");
    CHECK(describe_connection(*by_default) ==
          "using Redis at 127.0.0.1:6379 (the default URL; set --url, $REDLOCKRUN_URL or url in "
          "a config file); no password");

    env.variables["REDIS_URL"] = "redis://:hunter2@h:7";
    auto from_redis_url = resolve_settings({}, env.function());
    REQUIRE(from_redis_url);
    CHECK(from_redis_url->password_source == "the URL");
    CHECK(describe_connection(*from_redis_url) ==
          "using Redis at h:7 (the URL from $REDIS_URL); password from the URL");

    env.variables["REDISCLI_AUTH"] = "hunter3";
    ConnectionRequest request;
    FileConnection file;
    file.url = Setting{"redis://:hunter4@f:8", "f.conf, line 2: url"};
    request.files = {file};
    auto from_file = resolve_settings(request, env.function());
    REQUIRE(from_file);
    CHECK(from_file->password_source == "$REDISCLI_AUTH");
    const std::string described = describe_connection(*from_file);
    CHECK(described == "using Redis at f:8 (the URL from f.conf, line 2: url); password from "
                       "$REDISCLI_AUTH");
    CHECK(described.find("hunter") == std::string::npos);
}

TEST_CASE("settings: a bad URL names where it came from, not its password") {
    FakeEnvironment env;
    env.variables["REDIS_URL"] = "redis://:hunter2@h:99999";
    auto resolved = resolve_settings({}, env.function());
    REQUIRE_FALSE(resolved);
    CHECK(resolved.error().find("$REDIS_URL") == 0);
    CHECK(resolved.error().find("hunter2") == std::string::npos);
}

TEST_CASE("settings: password precedence --password-file, URL, $REDISCLI_AUTH") {
    FakeEnvironment env;
    env.variables["REDISCLI_AUTH"] = "from-env";
    CHECK(resolve_settings({}, env.function())->endpoint.password == "from-env");

    ConnectionRequest request;
    request.url = "redis://:from-url@h";
    auto with_url = resolve_settings(request, env.function());
    CHECK(with_url->endpoint.password == "from-url");
    CHECK(with_url->password_from_command_line);

    TempFile file("from-file\n");
    request.password_file = file.path;
    auto with_file = resolve_settings(request, env.function());
    CHECK(with_file->endpoint.password == "from-file");
}

TEST_CASE("settings: password files") {
    FakeEnvironment env;
    ConnectionRequest request;
    TempFile crlf("pw\r\n");
    request.password_file = crlf.path;
    CHECK(resolve_settings(request, env.function())->endpoint.password == "pw");

    TempFile empty("\n");
    request.password_file = empty.path;
    auto refused = resolve_settings(request, env.function());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().find("is empty") != std::string::npos);

    TempFile two_lines("a\nb\n");
    request.password_file = two_lines.path;
    CHECK_FALSE(resolve_settings(request, env.function()));

    request.password_file = "/nonexistent/redlockrun-password";
    auto missing = resolve_settings(request, env.function());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().find("cannot read /nonexistent/redlockrun-password") !=
          std::string::npos);

    request.password_file = "/";
    auto directory = resolve_settings(request, env.function());
    REQUIRE_FALSE(directory);
    CHECK(directory.error() == "--password-file: cannot read /: Is a directory");

    // A device that never ends is refused, not read forever.
    request.password_file = "/dev/zero";
    auto endless = resolve_settings(request, env.function());
    REQUIRE_FALSE(endless);
    CHECK(endless.error() ==
          "--password-file: /dev/zero is a character device, not a regular file");

    // A long password survives reads in several pieces.
    const std::string long_password(5000, 'p');
    TempFile long_file(long_password + "\n");
    request.password_file = long_file.path;
    CHECK(resolve_settings(request, env.function())->endpoint.password == long_password);
}

TEST_CASE("settings: a file option that is a FIFO is refused without waiting for a writer") {
    char directory[] = "/tmp/redlockrun-test-XXXXXX";
    REQUIRE(::mkdtemp(directory) != nullptr);
    const std::string fifo = std::string(directory) + "/fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    FakeEnvironment env;
    ConnectionRequest request;
    request.password_file = fifo;
    auto password = resolve_settings(request, env.function());
    REQUIRE_FALSE(password);
    CHECK(password.error() == "--password-file: " + fifo + " is a FIFO, not a regular file");

    ConnectionRequest tls;
    tls.url = "rediss://h";
    tls.tls.ca_file = fifo;
    auto ca = resolve_settings(tls, env.function());
    REQUIRE_FALSE(ca);
    CHECK(ca.error() == "--tls-ca-file: " + fifo + " is a FIFO, not a regular file");
    tls.tls.ca_file.reset();
    tls.tls.cert_file = fifo;
    tls.tls.key_file = fifo;
    auto cert = resolve_settings(tls, env.function());
    REQUIRE_FALSE(cert);
    CHECK(cert.error() == "--tls-cert: " + fifo + " is a FIFO, not a regular file");
    std::remove(fifo.c_str());
    ::rmdir(directory);
}

TEST_CASE("settings: a user needs a password, and is never named in a message") {
    FakeEnvironment env;
    ConnectionRequest request;
    request.url = "redis://alice:@h";
    auto refused = resolve_settings(request, env.function());
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == "--url: the URL names a user but no password; give one with "
                             "--password-file, $REDISCLI_AUTH or in the URL");
    env.variables["REDISCLI_AUTH"] = "pw";
    auto resolved = resolve_settings(request, env.function());
    REQUIRE(resolved);
    CHECK(resolved->endpoint.user == "alice");
    CHECK(resolved->endpoint.password == "pw");
}

TEST_CASE("settings: a lone user information in the URL is a password") {
    FakeEnvironment env;
    ConnectionRequest request;
    request.url = "redis://S3cretPW@h";
    auto resolved = resolve_settings(request, env.function());
    REQUIRE(resolved);
    CHECK(resolved->endpoint.user.empty());
    CHECK(resolved->endpoint.password == "S3cretPW");
    CHECK(resolved->password_from_command_line);
}

TEST_CASE("settings: a password file that others can read gets a warning naming it and its mode") {
    FakeEnvironment env;
    ConnectionRequest request;
    TempFile file("pw-not-shown\n");
    request.password_file = file.path;
    REQUIRE(::chmod(file.path.c_str(), 0604) == 0);
    auto open_file = resolve_settings(request, env.function());
    REQUIRE(open_file);
    REQUIRE(open_file->warnings.size() == 1);
    CHECK(open_file->warnings[0] == "--password-file: " + file.path +
                                        " can be read by every user (mode 0604); make it "
                                        "unreadable to others with chmod o-r");
    // Readable by its group: the usual way to share it with a service group, and no warning.
    for (mode_t mode : {0600, 0640, 0660, 0440}) {
        CAPTURE(mode);
        REQUIRE(::chmod(file.path.c_str(), mode) == 0);
        auto private_file = resolve_settings(request, env.function());
        REQUIRE(private_file);
        CHECK(private_file->warnings.empty());
    }
    // The sentinels' password file alike.
    ConnectionRequest sentinel;
    sentinel.url = "redis-sentinel://s1#m";
    sentinel.sentinel_password_file = file.path;
    REQUIRE(::chmod(file.path.c_str(), 0640) == 0);
    auto group = resolve_settings(sentinel, env.function());
    REQUIRE(group);
    CHECK(group->warnings.empty());
    REQUIRE(::chmod(file.path.c_str(), 0644) == 0);
    auto others = resolve_settings(sentinel, env.function());
    REQUIRE(others);
    REQUIRE(others->warnings.size() == 1);
    CHECK(others->warnings[0].starts_with("--sentinel-password-file: " + file.path +
                                          " can be read by every user (mode 0644)"));
}

TEST_CASE("settings: a config file's password file that a higher place overrides is not read") {
    TempFile file("pw-not-shown\n");
    REQUIRE(::chmod(file.path.c_str(), 0644) == 0);
    TempFile given("other\n");
    FileConnection config;
    config.password_file = Setting{file.path, "c.conf, line 2: password-file"};
    ConnectionRequest request;
    request.files.push_back(config);
    FakeEnvironment env;
    auto from_file = resolve_settings(request, env.function());
    REQUIRE(from_file);
    CHECK(from_file->endpoint.password == "pw-not-shown");
    CHECK(from_file->warnings.size() == 1);
    request.password_file = given.path;
    auto from_command_line = resolve_settings(request, env.function());
    REQUIRE(from_command_line);
    CHECK(from_command_line->endpoint.password == "other");
    CHECK(from_command_line->warnings.empty());
    request.password_file.reset();
    env.variables["REDISCLI_AUTH"] = "from-env";
    auto from_environment = resolve_settings(request, env.function());
    REQUIRE(from_environment);
    CHECK(from_environment->endpoint.password == "from-env");
    CHECK(from_environment->warnings.empty());
}

TEST_CASE("settings: config files come after $REDLOCKRUN_URL and before $REDIS_URL, the first "
          "file first") {
    FakeEnvironment env;
    ConnectionRequest request;
    FileConnection user;
    user.url = Setting{"redis://from-user-file:1", "user.conf, line 1: url"};
    FileConnection system;
    system.url = Setting{"redis://from-system-file:1", "system.conf, line 1: url"};
    request.files = {user, system};
    auto from_user = resolve_settings(request, env.function());
    REQUIRE(from_user);
    CHECK(from_user->endpoint.host == "from-user-file");
    CHECK(from_user->url_source == "user.conf, line 1: url");
    request.files = {FileConnection{}, system};
    CHECK(resolve_settings(request, env.function())->endpoint.host == "from-system-file");
    env.variables["REDIS_URL"] = "redis://from-redis-url:1";
    CHECK(resolve_settings(request, env.function())->endpoint.host == "from-system-file");
    env.variables["REDLOCKRUN_URL"] = "redis://from-environment:1";
    CHECK(resolve_settings(request, env.function())->endpoint.host == "from-environment");
    request.url = "redis://from-option:1";
    CHECK(resolve_settings(request, env.function())->endpoint.host == "from-option");

    FileConnection bad;
    bad.url = Setting{"redis://:hunter2@h:0", "bad.conf, line 4: url"};
    request = {};
    request.files = {bad};
    auto refused = resolve_settings(request, FakeEnvironment{}.function());
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == "bad.conf, line 4: url: the port must be a number from 1 to 65535");
}

TEST_CASE("settings: the password comes from the first place that gives one") {
    FakeEnvironment env;
    TempFile file_password("from-file\n");
    FileConnection file;
    file.password_file = Setting{file_password.path, "c.conf, line 2: password-file"};

    // A config file's password file, when nothing else gives a password.
    ConnectionRequest request;
    request.files = {file};
    CHECK(resolve_settings(request, env.function())->endpoint.password == "from-file");
    // The environment wins over the file...
    env.variables["REDISCLI_AUTH"] = "from-env";
    CHECK(resolve_settings(request, env.function())->endpoint.password == "from-env");
    // ...and so does a password in $REDLOCKRUN_URL...
    env.variables.erase("REDISCLI_AUTH");
    env.variables["REDLOCKRUN_URL"] = "redis://:from-env-url@h";
    CHECK(resolve_settings(request, env.function())->endpoint.password == "from-env-url");
    // ...but not one in $REDIS_URL, which comes after the files.
    env.variables.erase("REDLOCKRUN_URL");
    env.variables["REDIS_URL"] = "redis://:from-redis-url@h";
    auto below_file = resolve_settings(request, env.function());
    REQUIRE(below_file);
    CHECK(below_file->endpoint.host == "h");
    CHECK(below_file->endpoint.password == "from-file");
    CHECK(below_file->password_source == "c.conf, line 2: password-file");
    // $REDIS_URL's password does not go to the server of a file's URL either.
    FileConnection file_url;
    file_url.url = Setting{"redis://fleet", "e.conf, line 1: url"};
    request.files = {file_url};
    auto fleet = resolve_settings(request, env.function());
    REQUIRE(fleet);
    CHECK(fleet->endpoint.host == "fleet");
    CHECK_FALSE(fleet->endpoint.password.has_value());
    CHECK(fleet->password_source.empty());
    // A URL's password goes only with that URL: a file's URL that is not used gives none.
    env.variables.erase("REDIS_URL");
    env.variables["REDLOCKRUN_URL"] = "redis://h";
    FileConnection url_only;
    url_only.url = Setting{"redis://:from-file-url@other", "d.conf, line 1: url"};
    request.files = {url_only};
    auto unused = resolve_settings(request, env.function());
    REQUIRE(unused);
    CHECK(unused->endpoint.host == "h");
    CHECK_FALSE(unused->endpoint.password.has_value());
    // Within one file, its password file wins over the password in its URL, as on the command
    // line.
    env.variables.erase("REDLOCKRUN_URL");
    url_only.password_file = file.password_file;
    request.files = {url_only};
    CHECK(resolve_settings(request, env.function())->endpoint.password == "from-file");

    // A config file's password file that cannot be read is named by where it was given.
    file.password_file->value = "/nonexistent/pw";
    request.files = {file};
    auto missing = resolve_settings(request, env.function());
    REQUIRE_FALSE(missing);
    CHECK(missing.error() == "c.conf, line 2: password-file: cannot read /nonexistent/pw: No such "
                             "file or directory");
}

TEST_CASE("settings: a config file's TLS entries are for rediss:// URLs only") {
    FakeEnvironment env;
    FileConnection file;
    file.tls.ca_file = "/nonexistent/ca.pem";
    ConnectionRequest request;
    request.files = {file};
    request.url = "redis://h";
    // Not an error: the file's TLS settings are defaults for another kind of URL.
    CHECK(resolve_settings(request, env.function()));
    request.url = "rediss://h";
    auto refused = resolve_settings(request, env.function());
    REQUIRE_FALSE(refused);
    CHECK(refused.error() ==
          "--tls-ca-file: cannot read /nonexistent/ca.pem: No such file or directory");
    // The command line's own --tls-* options win over the file's.
    request.tls.ca_file = "/nonexistent/other.pem";
    CHECK(resolve_settings(request, env.function()).error().find("other.pem") != std::string::npos);
}

namespace {

std::string tls_refusal(const std::string& url, const TlsOptions& tls) {
    FakeEnvironment env;
    ConnectionRequest request;
    request.url = url;
    request.tls = tls;
    auto resolved = resolve_settings(request, env.function());
    REQUIRE_FALSE(resolved);
    return resolved.error();
}

} // namespace

TEST_CASE("settings: TLS is set up for rediss:// only, and --tls-* want one") {
    FakeEnvironment env;
    ConnectionRequest request;
    request.url = "rediss://h";
    auto tls = resolve_settings(request, env.function());
    REQUIRE(tls);
    CHECK(tls->tls != nullptr);
    request.url = "redis://h";
    auto plain = resolve_settings(request, env.function());
    REQUIRE(plain);
    CHECK(plain->tls == nullptr);

    CHECK(tls_refusal("redis://h", {"ca.pem", {}, {}, {}}) ==
          "--tls-ca-file needs a rediss:// URL, and --url gives a redis:// one");
    CHECK(tls_refusal("unix:///s", {{}, {}, {}, "name"}) ==
          "--tls-server-name needs a rediss:// URL, and --url gives a unix:// one");
}

TEST_CASE("settings: unusable TLS files and options are refused before connecting") {
    TempFile not_pem("just text\n");
    CHECK(tls_refusal("rediss://h", {"/nonexistent/ca.pem", {}, {}, {}}) ==
          "--tls-ca-file: cannot read /nonexistent/ca.pem: No such file or directory");
    CHECK(tls_refusal("rediss://h", {"/tmp", {}, {}, {}}) ==
          "--tls-ca-file: cannot read /tmp: Is a directory");
    CHECK(tls_refusal("rediss://h", {not_pem.path, {}, {}, {}})
              .starts_with("--tls-ca-file: " + not_pem.path + " holds no usable PEM certificate"));
    CHECK(tls_refusal("rediss://h", {{}, not_pem.path, {}, {}}) == "--tls-cert needs --tls-key");
    CHECK(tls_refusal("rediss://h", {{}, {}, not_pem.path, {}}) == "--tls-key needs --tls-cert");
    CHECK(tls_refusal("rediss://h", {{}, not_pem.path, not_pem.path, {}})
              .starts_with("--tls-cert: " + not_pem.path + " holds no usable PEM certificate"));
    CHECK(tls_refusal("rediss://h", {{}, {}, {}, ""}) == "--tls-server-name: the name is empty");
}

// The end-to-end suites cannot leave the real binary without a free descriptor at this point: the
// dynamic loader needs one to start it. So the file options are tested here, in-process.
TEST_CASE("settings: a full descriptor table while reading a file option is an operating-system "
          "error") {
    TempFile password("secret\n");
    TempFile ca("not read as PEM: the open fails first\n");
    FakeEnvironment env;
    ConnectionRequest with_password;
    with_password.password_file = password.path;
    ConnectionRequest with_ca;
    with_ca.url = "rediss://h";
    with_ca.tls.ca_file = ca.path;
    for (const auto* request : {&with_password, &with_ca}) {
        int status = 0;
        std::string message;
        {
            const testing::FullDescriptorTable full;
            try {
                (void)resolve_settings(*request, env.function());
            } catch (const Fatal& error) {
                status = error.status();
                message = error.what();
            }
        }
        CHECK(status == 71);
        const std::string option = request == &with_ca ? "--tls-ca-file" : "--password-file";
        const std::string& path = request == &with_ca ? ca.path : password.path;
        CHECK(message == option + ": cannot read " + path + ": Too many open files");
    }
}

TEST_CASE("settings: the sentinels' login, from the first place that gives each part") {
    FakeEnvironment env;
    ConnectionRequest request;
    request.url = "redis-sentinel://:master-pw@s1,s2#m";
    auto none = resolve_settings(request, env.function());
    REQUIRE(none);
    CHECK(none->endpoint.password == "master-pw"); // the URL's login is the master's
    CHECK(none->sentinel_user.empty());
    CHECK_FALSE(none->sentinel_password.has_value());

    TempFile file_password("from-file\n");
    FileConnection file;
    file.sentinel_user = Setting{"file-user", "c.conf, line 3: sentinel-user"};
    file.sentinel_password_file =
        Setting{file_password.path, "c.conf, line 4: sentinel-password-file"};
    request.files = {file};
    auto from_file = resolve_settings(request, env.function());
    REQUIRE(from_file);
    CHECK(from_file->sentinel_user == "file-user");
    CHECK(from_file->sentinel_password == "from-file");

    env.variables["REDLOCKRUN_SENTINEL_USER"] = "env-user";
    env.variables["REDLOCKRUN_SENTINEL_PASSWORD"] = "from-env";
    auto from_env = resolve_settings(request, env.function());
    REQUIRE(from_env);
    CHECK(from_env->sentinel_user == "env-user");
    CHECK(from_env->sentinel_password == "from-env");

    TempFile option_password("from-option\n");
    request.sentinel_user = "option-user";
    request.sentinel_password_file = option_password.path;
    auto from_options = resolve_settings(request, env.function());
    REQUIRE(from_options);
    CHECK(from_options->sentinel_user == "option-user");
    CHECK(from_options->sentinel_password == "from-option");
    CHECK(from_options->endpoint.password == "master-pw");

    // A user without a password is refused, without naming the user.
    request = {};
    request.url = "redis-sentinel://s1#m";
    request.sentinel_user = "lonely";
    auto refused = resolve_settings(request, FakeEnvironment{}.function());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().find("--sentinel-password-file") != std::string::npos);
    CHECK(refused.error().find("lonely") == std::string::npos);

    // An unreadable file is named by the option or the config file entry that gave it.
    request = {};
    request.url = "redis-sentinel://s1#m";
    request.sentinel_password_file = "/nonexistent/sentinel-password";
    auto missing = resolve_settings(request, FakeEnvironment{}.function());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().rfind("--sentinel-password-file: cannot read", 0) == 0);
    request.sentinel_password_file.reset();
    FileConnection missing_in_file;
    missing_in_file.sentinel_password_file =
        Setting{"/nonexistent/sentinel-password", "c.conf, line 4: sentinel-password-file"};
    request.files = {missing_in_file};
    auto missing_from_file = resolve_settings(request, FakeEnvironment{}.function());
    REQUIRE_FALSE(missing_from_file);
    CHECK(missing_from_file.error().rfind("c.conf, line 4: sentinel-password-file: cannot read",
                                          0) == 0);
}

TEST_CASE("settings: sentinel options on the command line need a Sentinel URL") {
    TempFile password("pw\n");
    ConnectionRequest request;
    request.url = "redis://h";
    request.sentinel_password_file = password.path;
    auto refused = resolve_settings(request, FakeEnvironment{}.function());
    REQUIRE_FALSE(refused);
    CHECK(refused.error() ==
          "--sentinel-password-file needs a redis-sentinel:// URL, and --url gives another");
    // From the environment or a config file they are defaults, unused by a redis:// URL.
    request.sentinel_password_file.reset();
    FakeEnvironment env;
    env.variables["REDLOCKRUN_SENTINEL_PASSWORD"] = "pw";
    auto unused = resolve_settings(request, env.function());
    REQUIRE(unused);
    CHECK_FALSE(unused->sentinel_password.has_value());
}
