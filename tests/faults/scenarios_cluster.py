"""Redis Cluster: the lock's slot migrated from master to master while a holder runs, waiters of
both kinds (exclusive, --limit 2) wait and more runs queue, with the migration's end told to the
nodes in either order. cluster_group.py sets up the three masters and makes the migrations."""
from cluster_group import Group
from harness import scenario


@scenario("cluster-slot-migration", runs=(1, 10), timeout=150, sections=(20, 60), promise="""
    Three masters; the lock's slot is migrated from one to the next (IMPORTING, MIGRATING, the
    keys moved with MIGRATE, then SETSLOT NODE to every node) while a holder runs, two exclusive
    waiters and a --limit 2 waiter wait, and more exclusive and --limit 2 runs queue, all through
    URLs naming the three nodes in turn; round after round, so the slot goes back and forth. The
    migration's end is told to the target first (as redis-cli does) in one round and to the source
    first in the next, the target 1.5 s later: until then each node sends the slot's requests to
    the other with -MOVED. The holder's command ends just after the first node is told, so that its
    release meets the migration. Promise: redirects are ridden out (followed after growing
    pauses, for as long as a request may take): renewals keep the holder's lock, the release gets
    through and wakes the next waiter, the waiters and queued runs acquire on the new owner; no
    overlap beyond the semaphore's two, no lost lock, every run exits 0, nothing is left
    locked.""")
def cluster_slot_migration(s):
    g = Group(s)
    for round_number in range(6 if s.long else 2):
        source_first = (s.run_index + round_number) % 2 == 1
        tag = f"end-{round_number}"
        nodes = len(g.nodes)

        def run(i, **extra):
            return s.redlockrun(url=g.url(i % nodes), ttl="4s", **extra)
        holder = run(round_number, name="holder", until=tag, options=["-v"])
        s.wait_for("the holder's section", lambda: s.began(holder))
        owner = g.owner(s.key)
        for i in range(2):
            run(round_number + 1 + i, name="waiter", steps=3)
        run(round_number + 2, name="counted", limit=2, steps=3)
        s.wait_for("the waiters to block", lambda: owner.blocked_clients() >= 3)
        exclusive = s.load(lambda: run(s.counter, name="load"), workers=2, sections=2)
        counted = s.load(lambda: run(s.counter, name="load-counted", limit=2), workers=1,
                         sections=2)
        source = g.owner(s.key)
        moved_before = g.redirects_answered()
        target = g.migrate(s.key, source_first=source_first, meanwhile=lambda: s.fire(tag))
        s.confirm(f"round {round_number}: the slot of {s.key} moved from {source.name} to "
                  f"{target.name}", lambda: source is not target and g.owner(s.key) is target)
        if source_first:
            s.confirm(f"round {round_number}: the nodes answered -MOVED while they disagreed",
                      lambda: g.redirects_answered() > moved_before)
        s.wait_exit(holder, timeout=30)
        for started in (exclusive, counted):
            started.join(timeout=90)
    for contender in list(s.contenders):
        s.wait_exit(contender, timeout=60)
    if any(contender.status != 0 for contender in s.contenders):
        return  # the checker names each unexpected exit status
    g.expect_free(s.key)
