#include "redis/redirect.hpp"

#include <charconv>

namespace redlockrun::redis {

namespace {

// "127.0.0.1:7001", "node-3.cache:7001", ":7001", "::1:7001" (an IPv6 address, unbracketed, as
// Redis writes it) or "[::1]:7001": the port follows the last ':'.
std::optional<std::pair<std::string, int>> address_of(std::string_view text) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view host = text.substr(0, colon);
    const std::string_view port_text = text.substr(colon + 1);
    int port = 0;
    auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || error != std::errc{} || end != port_text.data() + port_text.size() ||
        port < 1 || port > 65535) {
        return std::nullopt;
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    if (host == "?") {
        host = {}; // a node whose address is unknown to the cluster: the same host, as for ""
    }
    if (host.find_first_of(" \t\r\n") != std::string_view::npos) {
        return std::nullopt;
    }
    return std::pair{std::string(host), port};
}

} // namespace

std::optional<Redirect> redirect_of(const Reply& reply) {
    if (!reply.is_error()) {
        return std::nullopt;
    }
    const std::string_view code = reply.error_code();
    if (code == "TRYAGAIN" || code == "CLUSTERDOWN") {
        return Redirect{Redirect::Kind::try_again, {}, 0};
    }
    if (code != "MOVED" && code != "ASK") {
        return std::nullopt;
    }
    // "MOVED 3999 127.0.0.1:6381"
    std::string_view text = reply.text;
    const auto slot_start = text.find(' ');
    const auto address_start =
        slot_start == std::string_view::npos ? slot_start : text.find(' ', slot_start + 1);
    if (address_start == std::string_view::npos) {
        return std::nullopt;
    }
    auto address = address_of(text.substr(address_start + 1));
    if (!address) {
        return std::nullopt;
    }
    return Redirect{code == "MOVED" ? Redirect::Kind::moved : Redirect::Kind::ask,
                    std::move(address->first), address->second};
}

std::optional<Redirect> redirect_among(const std::vector<Reply>& replies) {
    for (const auto& reply : replies) {
        if (auto redirect = redirect_of(reply)) {
            return redirect;
        }
    }
    return std::nullopt;
}

Endpoint redirected(const Endpoint& from, const Redirect& redirect) {
    Endpoint to = from;
    to.unix_socket = false; // cluster nodes name TCP addresses
    if (!redirect.host.empty()) {
        to.host = redirect.host;
    }
    to.port = redirect.port;
    return to;
}

} // namespace redlockrun::redis
