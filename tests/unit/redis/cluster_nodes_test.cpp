#include "redis/cluster_nodes.hpp"

#include <doctest/doctest.h>

using namespace redlockrun::redis;

TEST_CASE("cluster nodes: the masters that can be asked, as every supported server writes them") {
    // Redis 7 (",hostname" after the bus port), replicas, a failed master whose slots moved to
    // its replica, a node still in handshake, and one without an address.
    const auto masters = cluster_masters(
        "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@40001, myself,master - 0 0 1 "
        "connected 0-5460\n"
        "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@40002,node-2.internal master - "
        "0 1426238316232 2 connected 5461-10922 "
        "[10923->-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f]\n"
        "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f ::1:30003@40003 master - 0 1426238318243 3 "
        "connected 10923-16383\n"
        "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@40005 slave "
        "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected\n"
        "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@40006 master,fail - "
        "1426238316232 1426238316232 6 disconnected\n"
        "0000000000000000000000000000000000000000 127.0.0.1:30007@40007 master,handshake - 0 0 0 "
        "connected\n"
        "1111111111111111111111111111111111111111 :0@0 master,noaddr - 0 0 0 disconnected\n");
    REQUIRE(masters);
    REQUIRE(masters->size() == 3);
    CHECK((*masters)[0].address == HostPort{"127.0.0.1", 30001});
    CHECK((*masters)[0].myself);
    CHECK((*masters)[1].address == HostPort{"127.0.0.1", 30002});
    CHECK_FALSE((*masters)[1].myself);
    CHECK((*masters)[2].address == HostPort{"::1", 30003});
}

TEST_CASE("cluster nodes: a node that does not know its own address, and older layouts") {
    // A node alone writes no IP for itself; Redis before 4.0 wrote no bus port; CRLF line ends.
    const auto alone =
        cluster_masters("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :6379@16379 myself,master - 0 "
                        "0 0 connected\r\n"
                        "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.0.0.2:7000 master - 0 0 2 "
                        "connected 1-2\r\n");
    REQUIRE(alone);
    REQUIRE(alone->size() == 2);
    CHECK(alone->front().address == HostPort{"", 6379});
    CHECK(alone->front().myself);
    CHECK(alone->back().address == HostPort{"10.0.0.2", 7000});
}

TEST_CASE("cluster nodes: text that describes no node is an error, not an empty cluster") {
    CHECK_FALSE(cluster_masters(""));
    CHECK_FALSE(cluster_masters("\n"));
    CHECK_FALSE(cluster_masters("ERR This instance has cluster support disabled"));
    CHECK_FALSE(cluster_masters("e7d1 127.0.0.1:30001@40001 master - 0 0 1\n"));
    for (const char* address : {"127.0.0.1", "127.0.0.1:x@1", "127.0.0.1:0@1", "h:70000@1"}) {
        CAPTURE(address);
        const auto masters =
            cluster_masters(std::string("e7d1 ") + address + " master - 0 0 1 connected 0-16383\n");
        REQUIRE_FALSE(masters);
        CHECK(masters.error().find(address) != std::string::npos);
    }
    // Only replicas answer: no master can be asked, which is not a reading error.
    const auto replicas = cluster_masters("e7d1 127.0.0.1:30005@40005 myself,slave abc 0 0 5 "
                                          "connected\n");
    REQUIRE(replicas);
    CHECK(replicas->empty());
}
