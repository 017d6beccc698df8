// --list [PATTERN]: every redlockrun lock whose key matches PATTERN, with the state --status gives,
// one line (or one JSON object) per lock, sorted by key.
//
// Locks are found by their companion keys (lock/keys.hpp), with SCAN, never KEYS: KEYS blocks the
// server for as long as it walks the whole keyspace, SCAN a little at a time. A lock whose key
// alone exists (one that only clients of the classic algorithm ever took) has no companion and is
// not listed; a lock that was ever granted keeps its fence counter, and is. As SCAN promises, a
// lock that exists throughout the listing is listed; one created or deleted meanwhile may or may
// not be.
//
// On Redis Cluster every master holds the keys of its own slots: each is scanned and asked for
// its locks' states, pipelined, on a connection of its own (the masters are read from CLUSTER
// NODES, which also tells a single server, whose answer is an error, from a cluster node).
#pragma once

#include "base/log.hpp"
#include "redis/settings.hpp"
#include "status/status_report.hpp"

#include <string>

namespace redlockrun {

// Which of the locks found the list shows: every one (used within the last week: the fence
// counter's life), or those held now (--held), also after their command ended (--min-hold).
enum class ListOnly { every_lock, held };

// Prints the list; returns 75 if any listed lock is held (also after its command ended), else 0.
// Throws Fatal (69 or 71) if Redis fails at any point: nothing is printed then.
int list_locks(const std::string& pattern, StatusFormat format, ListOnly only,
               const redis::ConnectionSettings& settings);

} // namespace redlockrun
