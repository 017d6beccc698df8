// Seeds for the jitter of retries: they only keep many clients from retrying in step.
#pragma once

#include <cstdint>

namespace redlockrun {

// A seed from getrandom(), or from the clock if the system has no randomness to spare. One system
// call, where std::random_device first probes the CPU with CPUID, which is slow in a VM.
std::uint32_t random_seed();

} // namespace redlockrun
