"""The --limit variants of the exclusive scenarios: the same function, run on a semaphore."""
import functools

from harness import scenario

# The variants' --limit: more than one holder at once, and few enough that a waiter can be made to
# wait.
LIMIT = 2


def semaphore_variant(name, function, *, runs, sections, promise, timeout=90):
    """Registers `semaphore-NAME`, which runs FUNCTION(s, limit=LIMIT): the exclusive scenario
    NAME's function, written to fill every slot where it holds the lock and to give every run the
    limit."""
    scenario(f"semaphore-{name}", runs=runs, sections=sections, timeout=timeout,
             promise=promise)(functools.partial(function, limit=LIMIT))
