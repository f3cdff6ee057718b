"""The Dagster layer: assets, checks, partitions, jobs, sensors' flow and the Definitions.

Dagster marks several APIs this project relies on (backfill policies, code references,
automation sensors) as beta/preview and warns about them in every process that loads the
code: ten lines per run subprocess that hide the run's own log. They are silenced here, by
message, so nothing else is (and the Pipes worker still never imports dagster).

Polars' allocator (jemalloc) keeps freed pages for 10 s by default; every process that loads
this package (code server, run workers, their Pipes workers) hands them back at once: a run
worker's peak RSS drops by about 35 MB for about 2 % more system CPU. A user's own
``_RJEM_MALLOC_CONF`` wins. It must be set before polars is first imported, hence here.
Polars itself writes its own defaults into that variable when it is imported, and children
inherit them: a value made of those alone (a parent that imported polars first, such as a
notebook or a benchmark harness) is polars', not the user's, and is replaced too.

A Python process's shutdown garbage-collects its whole heap, object by object: ~0.2 CPU s for
a process that only loaded these definitions, ~0.45 s for a run worker after its run, while
its memory is still held and the run queue already starts the next run. Freezing the heap at
exit only takes it out of the collector's view: every ``atexit`` handler and every refcounted
finaliser still runs (runs and stages have written and fsynced their data before), objects
made after the freeze are still collected, and the kernel frees the rest at once.
"""

import atexit
import gc
import os
import warnings

POLARS_JEMALLOC_DEFAULTS = frozenset({"dirty_decay_ms:500", "muzzy_decay_ms:1000"})  # polars 1.x
PROMPT_RETURN = "dirty_decay_ms:0,muzzy_decay_ms:0"


def jemalloc_conf(current: str | None) -> str:
    """The ``_RJEM_MALLOC_CONF`` to run with: the user's own, else pages returned at once."""
    if current and not set(filter(None, current.split(","))) <= POLARS_JEMALLOC_DEFAULTS:
        return current
    return PROMPT_RETURN


os.environ["_RJEM_MALLOC_CONF"] = jemalloc_conf(os.environ.get("_RJEM_MALLOC_CONF"))

warnings.filterwarnings("ignore", message=r".* is currently in (beta|preview)")


atexit.register(gc.freeze)
