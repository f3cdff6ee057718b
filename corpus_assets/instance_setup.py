"""``python -m corpus_assets.instance_setup``: the instance state the UI reads, set to what this
project runs (``make ui`` calls it before starting Dagster).

The job pages tag every job whose assets have automation conditions with "Auto-materialize off"
or "on", read from the instance's pause flag of Dagster's pre-sensor asset daemon, which is
paused until someone unpauses it. With sensor-based automation (``auto_materialize: use_sensors``,
Dagster's default) that flag no longer pauses anything, and the UI offers no switch for it (the
switch is on each sensor's page), so the tag said "off" while the ``corpus_automation`` sensor
ran. The flag is set to "not paused" here: the tag then says "on", and whether automation runs
is each sensor's own running/stopped state.
"""

from __future__ import annotations


def main() -> int:
    import dagster as dg

    from corpus_assets.dagster_internals import auto_materialize_paused, set_auto_materialize_paused

    with dg.DagsterInstance.get() as instance:
        if instance.auto_materialize_use_sensors and auto_materialize_paused(instance):
            set_auto_materialize_paused(instance, False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
