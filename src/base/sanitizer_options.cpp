// Built into every executable of the sanitizer build (REDLOCKRUN_SANITIZE) only: the sanitizers'
// defaults, so that a finding fails whatever found it however it is started (ctest, a test suite,
// by hand). A finding ends the process with status 86, which neither redlockrun nor any test's
// command uses, so a test that expects another status fails; a leak is a finding too. ASAN_OPTIONS
// and UBSAN_OPTIONS in the environment still override these (tests/sanitizer/check_reports.sh adds
// a log_path).

extern "C" {

const char* __asan_default_options();
const char* __ubsan_default_options();

const char* __asan_default_options() {
    return "detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86:strict_string_checks=1"
           ":detect_stack_use_after_return=1:check_initialization_order=1";
}

const char* __ubsan_default_options() {
    return "halt_on_error=1:abort_on_error=0:exitcode=86:print_stacktrace=1";
}

} // extern "C"
