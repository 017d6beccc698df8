#pragma once

namespace redlockrun {

extern const char* const version; // from the project version in CMakeLists.txt

} // namespace redlockrun
