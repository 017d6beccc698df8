// The reporting options converted: --log-format, --syslog (a yes or no in a config file) and
// --syslog-facility. Each throws UsageError naming where a bad value was written.
#pragma once

#include "base/log.hpp"
#include "options/option_text.hpp"

namespace redlockrun {

LogSettings log_settings_of(const OptionText& text);

} // namespace redlockrun
