#include "run/child.hpp"

#include "run/exec_failure.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace redlockrun::run {

namespace {

std::vector<char*> pointers(const std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (const auto& s : strings) {
        out.push_back(const_cast<char*>(s.c_str()));
    }
    out.push_back(nullptr);
    return out;
}

// The child runs on a stack of its own in redlockrun's memory: sanitizers must keep out of it.
#define REDLOCKRUN_CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

// Everything the child needs, prepared before it exists.
struct ChildSetup {
    const char* path;
    char* const* argv;
    char* const* shell_argv; // for a script without a #! line
    char* const* envp;
    pid_t parent;
    // Set by the child if exec fails. CLONE_VM shares it, and CLONE_VFORK makes redlockrun wait
    // until the child has exec'd or exited, so it is read only once the child is done with it.
    int exec_error;
    const SignalPipe* signals;
    const Terminal* terminal;
};

// Runs in the child between clone and exec, in redlockrun's memory (CLONE_VM) while redlockrun
// waits: async-signal-safe calls only, no allocation, nothing written but the kernel's state and
// setup.exec_error.
[[noreturn]] REDLOCKRUN_CHILD_CODE void exec_child(ChildSetup& setup) {
    auto& [path, argv, shell_argv, envp, parent, exec_error, signals, terminal] = setup;
    ::setpgid(0, 0);
    if (terminal->active()) {
        // Every signal is still blocked here, so this does not raise SIGTTOU.
        ::tcsetpgrp(terminal->fd(), ::getpid());
    }
#ifdef __linux__
    // The command must not run on without its lock: if redlockrun dies, even by SIGKILL, so does
    // the command.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
        ::_exit(to_int(ExitStatus::os_error));
    }
#else
    (void)parent;
#endif
    signals->restore_in_child();
    ::execve(path, argv, envp);
    if (errno == ENOEXEC) {
        // A script without a #! line: run it with the shell, as execvp(3) does.
        ::execve("/bin/sh", shell_argv, envp);
    }
    exec_error = errno;
    ::_exit(exec_error == ENOENT || exec_error == ENOTDIR ? 127 : 126);
}

REDLOCKRUN_CHILD_CODE int child_entry(void* setup) {
    exec_child(*static_cast<ChildSetup*>(setup));
}

// The child's own stack: with CLONE_VM it must not run on redlockrun's.
constexpr size_t child_stack_size = 64 * 1024;

NotRunnable os_failure(const char* what) {
    return NotRunnable{ExitStatus::os_error, fmt::format("{}: {}", what, std::strerror(errno))};
}

} // namespace

Expected<pid_t, NotRunnable> spawn_child(const ChildSpec& spec, const SignalPipe& signals,
                                         const Terminal& terminal) {
    // Everything the child needs is built before fork().
    std::vector<char*> argv = pointers(spec.argv);
    std::vector<char*> envp =
        child_environment(spec.inherited_environment, spec.environment_overrides);
    std::vector<std::string> shell_args{"/bin/sh", spec.path};
    shell_args.insert(shell_args.end(), spec.argv.begin() + 1, spec.argv.end());
    std::vector<char*> shell_argv = pointers(shell_args);

    ChildSetup setup{spec.path.c_str(), argv.data(), shell_argv.data(), envp.data(),
                     ::getpid(),        0,           &signals,          &terminal};
    // Not zeroed: the child touches only the few pages it uses, and zeroing all of them would
    // cost a page fault each on the way to every command.
    auto stack = std::make_unique_for_overwrite<char[]>(child_stack_size);
    pid_t pid;
    {
        SignalPipe::BlockAll no_handlers_in_child;
        // Like vfork(): no copy of redlockrun's page tables, and redlockrun resumes once the child
        // has exec'd or exited. That makes starting the command a fraction of fork()'s cost.
        pid = ::clone(child_entry, stack.get() + child_stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      &setup);
    }
    if (pid < 0) {
        return unexpected(os_failure("cannot start the command"));
    }
    // Also done by the child; whichever comes first wins, so no signal forwarded to the group can
    // miss the child. EACCES once the child has exec'd is fine.
    ::setpgid(pid, pid);
    terminal.give_to(pid);
    const int exec_error = setup.exec_error;
    if (exec_error == 0) {
        return pid; // exec'd: the command runs
    }
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    terminal.take_back();
    return unexpected(describe_exec_failure(spec.path, exec_error));
}

std::vector<char*> child_environment(char** environ_in, const std::vector<std::string>& overrides) {
    auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
    size_t inherited = 0;
    for (char** entry = environ_in; entry && *entry; ++entry) {
        ++inherited;
    }
    std::vector<char*> environment;
    environment.reserve(inherited + overrides.size() + 1);
    for (char** entry = environ_in; entry && *entry; ++entry) {
        std::string_view name = name_of(*entry);
        bool overridden = false;
        for (const auto& override_entry : overrides) {
            overridden = overridden || name_of(override_entry) == name;
        }
        if (!overridden) {
            environment.push_back(*entry);
        }
    }
    for (const auto& override_entry : overrides) {
        environment.push_back(const_cast<char*>(override_entry.c_str()));
    }
    environment.push_back(nullptr);
    return environment;
}

} // namespace redlockrun::run
