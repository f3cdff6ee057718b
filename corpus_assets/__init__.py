"""The Dagster layer: assets, checks, partitions, jobs, sensors' flow and the Definitions.

Dagster marks several APIs this project relies on (backfill policies, code references,
automation sensors) as beta/preview and warns about them in every process that loads the
code: ten lines per run subprocess that hide the run's own log. They are silenced here, by
message, so nothing else is (and the Pipes worker still never imports dagster).

Polars' allocator (jemalloc) keeps freed pages for 10 s by default; every process that loads
this package (code server, run workers, their Pipes workers) hands them back at once: a run
worker's peak RSS drops by about 35 MB for about 2 % more system CPU. A user's own
``_RJEM_MALLOC_CONF`` wins. It must be set before polars is first imported, hence here.
"""

import os
import warnings

os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")

warnings.filterwarnings("ignore", message=r".* is currently in (beta|preview)")
