#include "options/hide_password.hpp"

#include "redis/endpoint.hpp"

#include <cstring>
#include <string_view>

namespace redlockrun {

void hide_url_passwords(int argc, char** argv, const std::vector<std::string>& urls) {
    for (const auto& url : urls) {
        const auto span = redis::password_span(url);
        if (!span) {
            continue;
        }
        for (int i = 1; i < argc; ++i) {
            const std::string_view word = argv[i];
            if (!word.ends_with(url) || (word.size() != url.size() && !word.starts_with('-'))) {
                continue;
            }
            char* written = argv[i] + (word.size() - url.size());
            std::memset(written + span->start, 'x', span->length);
        }
    }
}

} // namespace redlockrun
