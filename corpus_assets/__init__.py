"""The Dagster layer: assets, checks, partitions, jobs, sensors' flow and the Definitions.

Dagster marks several APIs this project relies on (backfill policies, code references,
automation sensors) as beta/preview and warns about them in every process that loads the
code: ten lines per run subprocess that hide the run's own log. They are silenced here, by
message, so nothing else is (and the Pipes worker still never imports dagster).
"""

import warnings

warnings.filterwarnings("ignore", message=r".* is currently in (beta|preview)")
