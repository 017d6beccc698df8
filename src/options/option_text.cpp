#include "options/option_text.hpp"

namespace redlockrun {

void fill_in_from_file(OptionText& options, const OptionText& file) {
    for (auto field :
         {&OptionText::ttl, &OptionText::timestamp_unit, &OptionText::conflict_exit_code,
          &OptionText::on_lost, &OptionText::kill_after, &OptionText::lost_exit_code,
          &OptionText::connect_timeout, &OptionText::replicas, &OptionText::metrics_file,
          &OptionText::syslog, &OptionText::syslog_facility, &OptionText::log_format}) {
        if (!(options.*field)) {
            options.*field = file.*field;
        }
    }
    if (!options.no_wait && !options.wait) {
        options.wait = file.wait;
    }
}

} // namespace redlockrun
