// redlockrun as a function: parse, validate, act, and map every outcome to an exit status. Failures
// that end the run are caught here, once.
#pragma once

namespace redlockrun {

int main_entry(int argc, const char* const* argv);

} // namespace redlockrun
