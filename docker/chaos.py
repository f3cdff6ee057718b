"""Faults for the chaos test of the compose stack (docker/test_chaos.py).

A :class:`Chaos` drives a :class:`stack.Stack` through rounds: a round is one job backfill of
the test's landing days (the TEI cache emptied first, so Grobid is asked again). Faults are
injected one at a time, each when the round reaches the point the seed picked for it (the k-th
start of a step, of ``grobid_tei`` for Grobid's faults), and each is over before the next: its
service is back and every run that was in flight when it struck has ended, by itself (restart
policies, step and run retries, run monitoring) or by the one operator action docker/README.md
("When things fail") documents for it, which this module performs when Dagster shows what the
README says it shows. A round is then checked on data: every daily partition of every day was
materialised again during the round, with the same rows as the fault-free reference.

What each fault did is kept in :attr:`Chaos.report` (when, what Dagster showed, recovery time,
evidence). Standard library only, like stack.py; every wait is bounded, every loop counted.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from stack import LOCATION, RUN_ID_LABEL, WORKER_LABEL, Stack, StackError

HOLDER = "corpus-chaos-holder"  # keeps the tmpfs data volume mounted while the stack is down
CHAOS_LABEL = "io.corpus.chaos"
FILL = "/data/.chaos-fill"
ROUND_TIMEOUT_S = 600
RECOVERY_TIMEOUT_S = 420
# The Grobid client of the chaos backfills gives up sooner than its defaults (120 s timeout, 8
# retries of a 503): the faults need last only ~20-40 s to outlast it. Nothing else differs.
GROBID_CLIENT = {"timeout_s": 15.0, "max_retries": 3, "backoff_s": 0.5}
# Columns that differ between two fault-free builds of a day: Grobid's answer time, and the
# attempts a 503 costs. Every other column of every daily partition must be equal.
VOLATILE = {"grobid_tei": ["seconds", "attempts"]}
RESTARTS_DAEMON = {"daemon-kill", "stop-start", "down-up"}
GROBID_TRANSIENT = ("pending", "busy", "timeout", "connect_error", "grobid_unavailable")

BACKFILL = """
mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) { __typename
  ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }
"""
REEXECUTE_BACKFILL = """
mutation($p: ReexecutionParams!) { reexecutePartitionBackfill(reexecutionParams: $p) { __typename
  ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }
"""
DAEMONS = (
    "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy required lastHeartbeatTime } } } }"
)
LOCATION_STATUS = (
    "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus "
    "locationOrLoadError { __typename ... on PythonError { message } } } } } }"
)

# Per (asset, day): rows, and a digest of the rows sorted, volatile columns left out.
DIGESTS = """
import glob, hashlib, json, sys
import polars as pl
assets, days, volatile = sys.argv[1].split(","), sys.argv[2].split(","), json.loads(sys.argv[3])
out = {}
for asset in assets:
    for day in days:
        files = sorted(glob.glob(f"/data/{asset}/date={day}/*.parquet"))
        if not files:
            out[f"{asset}/{day}"] = None
            continue
        frame = pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")
        frame = frame.drop([c for c in volatile.get(asset, []) if c in frame.columns])
        rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in frame.select(sorted(frame.columns)).to_dicts())
        out[f"{asset}/{day}"] = [len(rows), hashlib.sha256("\\n".join(rows).encode()).hexdigest()[:16]]
print(json.dumps(out))
"""

# Anything half-written under the data root: temporary files left outside scratch/, and
# Parquet files that do not read whole.
HALF_WRITTEN = """
import glob, json, os
import pyarrow.parquet as pq
left, unreadable = [], []
for root, dirs, files in os.walk("/data"):
    dirs[:] = [d for d in dirs if d not in ("scratch", "blobs")]
    left += [os.path.join(root, f) for f in files if f.endswith(".tmp") or ".staging-" in root]
for path in glob.glob("/data/*/date=*/*.parquet"):
    try:
        pq.read_table(path)
    except Exception as exc:
        unreadable.append(f"{path}: {type(exc).__name__}: {exc}"[:300])
print(json.dumps({"temp_files": left, "unreadable": unreadable}))
"""


def retrying(fn: Callable, seconds: float, what: str, every: float = 2.0):
    """``fn()`` until it does not raise (the webserver or Postgres may be restarting)."""
    deadline, last = time.monotonic() + seconds, None
    for _ in range(int(seconds / every) + 2):
        try:
            return fn()
        except (StackError, OSError, KeyError, TypeError, ValueError) as exc:
            last = exc
        if time.monotonic() > deadline:
            break
        time.sleep(every)
    raise StackError(f"{what}: no answer within {seconds:.0f} s: {last}")


@dataclass
class Fault:
    """One fault of the plan: its name, what triggers it and the seed's choice of when."""

    name: str
    trigger_step: str | None  # a step key, or None for any step
    k: int  # the k-th start of that step in the round (grobid_tei: of a day that sends PDFs)
    params: dict = field(default_factory=dict)


@dataclass
class Round:
    backfill: str
    days: list[str]
    mark: int  # the event log's highest id before the round
    started: float
    extra_backfills: list[str] = field(default_factory=list)  # operator re-runs within the round
    reruns: dict = field(default_factory=dict)  # Grobid re-run backfill -> (fault, its start, days)


class Chaos:
    def __init__(self, stack: Stack, days: list[str], daily: list[str], grobid_days: list[str]) -> None:
        self.s, self.days, self.daily, self.grobid_days = stack, days, daily, grobid_days
        self.profiles: tuple[str, ...] = ()
        self.reference: dict = {}
        self.report: list[dict] = []
        self.round: Round | None = None

    # ------------------------------------------------------------------ reading the stack

    def psql(self, sql: str) -> list[list[str]]:
        return retrying(lambda: self.s.psql(sql), 120, "psql")

    def gql(self, query: str, variables: dict | None = None) -> dict:
        return retrying(lambda: self.s.gql(query, variables), 180, "GraphQL")

    def max_event_id(self) -> int:
        return int(self.psql("select coalesce(max(id), 0) from event_logs")[0][0])

    def backfills(self) -> list[str]:
        return [self.round.backfill, *self.round.extra_backfills] if self.round else []

    def round_runs(self, backfills: list[str] | None = None) -> list[dict]:
        """The round's runs (or ``backfills``'): their runs and retries (which keep the tag)."""
        backfills = backfills or self.backfills()
        if not backfills:
            return []
        keys = ",".join(f"'{b}'" for b in backfills)
        rows = self.psql(
            "select r.run_id, r.status, coalesce(s.value, ''), coalesce(e.value, ''), coalesce(f.value, ''), b.value "
            "from runs r join run_tags b on b.run_id = r.run_id and b.key = 'dagster/backfill' "
            "left join run_tags s on s.run_id = r.run_id and s.key = 'dagster/asset_partition_range_start' "
            "left join run_tags e on e.run_id = r.run_id and e.key = 'dagster/asset_partition_range_end' "
            "left join run_tags f on f.run_id = r.run_id and f.key = 'dagster/failure_reason' "
            f"where b.value in ({keys}) order by r.id"
        )
        names = ("run_id", "status", "day", "end", "reason", "backfill")
        return [dict(zip(names, r, strict=True)) for r in rows]

    def starts(self, step: str | None) -> int:
        """How many times ``step`` (any step: None) has started in the round's runs."""
        runs = self.round_runs()
        if step == "grobid_tei":  # only the runs of days that send PDFs to Grobid
            runs = [r for r in runs if any(r["day"] <= d <= r["end"] for d in self.grobid_days)]
        if not runs:
            return 0
        ids = ",".join(f"'{r['run_id']}'" for r in runs)
        where = f"and step_key = '{step}'" if step else ""
        sql = f"select count(*) from event_logs where dagster_event_type = 'STEP_START' and run_id in ({ids}) {where}"
        return int(self.psql(sql)[0][0])

    def events_since(self, mark: int, run_ids: list[str] | None = None) -> list[str]:
        """What Dagster recorded after ``mark`` that a user would look at: step failures and
        retries, run failures, and the engine events of retries, monitoring and Celery."""
        where = f"and run_id in ({','.join(repr(r) for r in run_ids)})" if run_ids else ""
        rows = self.psql(
            "select run_id, dagster_event_type, coalesce(step_key, ''), event from event_logs "
            f"where id > {mark} {where} and dagster_event_type in ('STEP_FAILURE', 'STEP_UP_FOR_RETRY', "
            "'PIPELINE_FAILURE', 'ENGINE_EVENT', 'STEP_RESTARTED', 'RUN_CANCELED') order by id"
        )
        seen: list[str] = []
        for run_id, kind, step, event in rows:
            text = _event_text(event)
            if kind == "ENGINE_EVENT" and not any(
                w in text
                for w in (
                    "etry",
                    "Container status",
                    "exited",
                    "celery",
                    "ot retrying",
                    "Interrupt",
                    "killed",
                )
            ):
                continue
            line = f"{run_id[:8]} {kind} {step}: {text}".strip()[:240]
            if line not in seen:
                seen.append(line)
        return seen[:30]

    # ------------------------------------------------------------------ the data

    def digests(self, days: list[str] | None = None) -> dict:
        args = (",".join(self.daily), ",".join(days or self.days), json.dumps(VOLATILE))
        return retrying(lambda: self.s.code_python(DIGESTS, *args, timeout=300), 300, "digests")

    def half_written(self) -> dict:
        return retrying(lambda: self.s.code_python(HALF_WRITTEN, timeout=300), 300, "half-written check")

    def materialised_since(self, mark: int, days: list[str]) -> set[str]:
        """``asset/day`` pairs with a materialisation after ``mark``."""
        rows = self.psql(
            "select distinct asset_key, partition from event_logs where dagster_event_type = "
            f"'ASSET_MATERIALIZATION' and id > {mark} and partition is not null"
        )
        return {f"{json.loads(a)[0]}/{p}" for a, p in rows if p in days}

    def tei_incomplete_days(self) -> dict[str, str]:
        """Days whose latest grobid_tei materialisation says some PDF has no TEI for a transient
        reason (Grobid down, busy or hanging): what the asset's metadata shows in the UI
        (tei_available below the PDFs that went to Grobid, a pending count)."""
        found = {}
        for day in self.grobid_days:
            rows = self.psql(
                "select event from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION' and "
                f"asset_key = '[\"grobid_tei\"]' and partition = '{day}' order by id desc limit 1"
            )
            if not rows:
                continue
            meta = _metadata(rows[0][0])
            reasons = _table_counts(meta.get("reasons"), "reason")
            if int(meta.get("pending") or 0) or any(r in reasons for r in GROBID_TRANSIENT):
                found[day] = (
                    f"pending {meta.get('pending')}, tei_available {meta.get('tei_available')}, "
                    f"reasons {', '.join(f'{r} {n}' for r, n in reasons.items()) or 'none'}"
                )
        return found

    # ------------------------------------------------------------------ rounds

    def launch(self, days: list[str]) -> str:
        params = {
            "selector": {"partitionSetName": "corpus_daily_partition_set", "repositorySelector": LOCATION},
            "partitionNames": days,
            "runConfigData": {"resources": {"grobid": {"config": GROBID_CLIENT}}},
            "tags": [{"key": "corpus/chaos", "value": "1"}],
        }
        data = self.gql(BACKFILL, {"p": params})["launchPartitionBackfill"]
        if data["__typename"] != "LaunchBackfillSuccess":
            raise StackError(f"backfill not launched: {data}")
        return data["backfillId"]

    def start_round(self) -> Round:
        self.wait_no_daily_runs()
        self.holder("rm -rf /data/blobs/tei")  # Grobid is asked again for every PDF
        mark = self.max_event_id()
        self.round = Round(self.launch(self.days), list(self.days), mark, time.monotonic())
        return self.round

    def round_busy(self, backfills: list[str] | None = None) -> bool:
        """Until each backfill has launched its runs, while one is unfinished, and while a
        failed one is still to be retried (the retry daemon launches it within seconds). Not the
        backfills' own status: Dagster marks one complete up to 30 s after its last run."""
        backfills = backfills or self.backfills()
        runs = self.round_runs(backfills)
        if {r["backfill"] for r in runs} != set(backfills):
            return True
        if any(r["status"] not in ("SUCCESS", "FAILURE", "CANCELED") for r in runs):
            return True
        failed = [r["run_id"] for r in runs if r["status"] == "FAILURE"]
        if not failed:
            return False
        # A failed run tagged to be retried is waited for until its retry exists, unless the
        # retry daemon said it will not retry it: its backfill was marked complete first ("Not
        # retrying run since it is part of a backfill that is in a terminal state"; the tag stays
        # true). finish_round then does what the README says for such a run.
        ids = ",".join(f"'{r}'" for r in failed)
        waiting = self.psql(
            f"select t.run_id from run_tags t where t.run_id in ({ids}) and t.key = 'dagster/will_retry' "
            "and t.value = 'true' and not exists (select 1 from run_tags c where c.key = 'dagster/parent_run_id' "
            "and c.value = t.run_id) and not exists (select 1 from event_logs n where n.run_id = t.run_id "
            "and n.dagster_event_type = 'ENGINE_EVENT' and n.event like '%Not retrying run%')"
        )
        return bool(waiting)

    def wait_round_runs(self, timeout_s: float = ROUND_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        for _ in range(int(timeout_s / 5) + 2):
            if not self.round_busy():
                return
            if time.monotonic() > deadline:
                break
            time.sleep(5)
        raise StackError(f"the round's runs did not end within {timeout_s} s: {self.round_runs()}")

    def finish_round(self) -> dict:
        """Wait for the round's runs; do what the README says for what is left (a failed run
        its backfill no longer retries, days whose TEI Grobid could not give); then check every
        day on data. Returns what was done and found."""
        self.wait_round_runs()
        done: dict = {"operator": []}
        unrecovered = self.unrecovered_failures()
        if unrecovered:
            for backfill in {r["backfill"] for r in unrecovered}:
                self.wait_backfill(backfill, terminal=True)  # only a finished one can be re-executed
            # README: a failed run of a backfill Dagster marked complete is not retried
            # ("Not retrying run since it is part of a backfill that is in a terminal state"):
            # re-execute the backfill from failure.
            for backfill in {r["backfill"] for r in unrecovered}:
                data = self.gql(
                    REEXECUTE_BACKFILL, {"p": {"parentRunId": backfill, "strategy": "FROM_FAILURE"}}
                )
                new = data["reexecutePartitionBackfill"]
                assert new["__typename"] == "LaunchBackfillSuccess", new
                self.round.extra_backfills.append(new["backfillId"])
                done["operator"].append(f"re-executed backfill {backfill} from failure: {new['backfillId']}")
            self.wait_round_runs()
        for backfill, (name, started, days) in self.round.reruns.items():
            # a Grobid fault's recovery ends when the operator's re-run of its days has
            ended = self.psql(
                "select max(end_time) from runs where run_id in (select run_id from run_tags where "
                f"key = 'dagster/backfill' and value = '{backfill}')"
            )[0][0]
            entry = next(e for e in reversed(self.report) if e.get("fault") == name)
            entry["recovered_s"] = round(float(ended) - started, 1)
            entry["rerun_days"] = days
        incomplete = self.tei_incomplete_days()
        if incomplete:
            # README: once Grobid answers again, re-run the days whose grobid_tei shows PDFs
            # without TEI (pending, or failed busy/timeout): one backfill of those days.
            backfill = self.launch(sorted(incomplete))
            self.round.extra_backfills.append(backfill)
            done["operator"].append(f"re-ran {sorted(incomplete)} ({incomplete}) as backfill {backfill}")
            self.wait_round_runs()
        done |= self.check_round()
        done["seconds"] = round(time.monotonic() - self.round.started, 1)
        return done

    def unrecovered_failures(self) -> list[dict]:
        """Failed runs of the round with no successful retry or re-execution of their days."""
        runs = self.round_runs()
        succeeded_days = {r["day"] for r in runs if r["status"] == "SUCCESS"}
        return [r for r in runs if r["status"] in ("FAILURE", "CANCELED") and r["day"] not in succeeded_days]

    def check_round(self) -> dict:
        """Every daily partition of the round's days materialised during the round, with the
        reference's rows; nothing half-written; no run of the round left unfinished."""
        rnd = self.round
        built = self.materialised_since(rnd.mark, rnd.days)
        expected = {f"{a}/{d}" for a in self.daily for d in rnd.days}
        assert expected <= built, f"not materialised in the round: {sorted(expected - built)}"
        now = self.digests(rnd.days)
        differ = {k: (v, self.reference[k]) for k, v in now.items() if v != self.reference[k]}
        assert not differ, f"rows differ from the fault-free reference: {differ}"
        leftovers = self.half_written()
        assert leftovers == {"temp_files": [], "unreadable": []}, leftovers
        runs = self.round_runs()
        assert all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs), runs
        return {
            "runs": {s: sum(1 for r in runs if r["status"] == s) for s in {r["status"] for r in runs}},
            "partitions_checked": len(expected),
            "rows_equal_reference": True,
        }

    def wait_no_daily_runs(self, timeout_s: float = 300) -> None:
        """No daily run (of an earlier round, or a re-run) in flight: a round starts clean."""
        deadline = time.monotonic() + timeout_s
        for _ in range(int(timeout_s / 5) + 2):
            busy = self.psql(
                "select count(*) from runs where pipeline_name = 'corpus_daily' and status in "
                "('QUEUED', 'NOT_STARTED', 'STARTING', 'STARTED', 'CANCELING')"
            )
            if busy[0][0] == "0":
                return
            if time.monotonic() > deadline:
                break
            time.sleep(5)
        raise StackError(f"daily runs still going after {timeout_s} s")

    # ------------------------------------------------------------------ faults

    def run_fault(self, fault: Fault) -> dict:
        """Wait for the fault's point in a round (a new round when the last one ended first),
        inject it, wait until it is over: every service answers and the work in flight when it
        struck is done (each step then running has succeeded since, in its run or in the retry
        or re-run of its days). The next fault may follow while the rest of the round goes on."""
        if self.round is None:
            self.start_round()
        point = None
        for _ in range(3):  # the point is reached within a round: at most one more round
            point = self.wait_point(fault)
            if point is not None:
                break
            self.report.append({"round": self.round.backfill, **self.finish_round()})
            self.start_round()
        assert point is not None, f"{fault.name}: its point was never reached"
        mark = self.max_event_id()
        work = self.work_in_flight()
        t0 = time.time()
        injected = getattr(self, f"inject_{fault.name.replace('-', '_')}")(fault)
        injected_s = time.time() - t0
        back = self.wait_back(fault, injected)
        self.wait_work_done(work, mark)
        entry = {
            "fault": fault.name,
            "point": f"start #{fault.k} of {fault.trigger_step or 'any step'} after the previous fault, "
            f"backfill {self.round.backfill}",
            "progress_at_injection": point,
            "injection": injected,
            "injection_s": round(injected_s, 1),
            "service_back_s": back.get("seconds"),
            "recovered_s": round(time.time() - t0, 1),
            "work_in_flight": sorted(f"{day} {step}" for day, step in work),
            "dagster_showed": back.get("observed", []) + self.events_since(mark),
            "operator": self.operator_action(fault, started=t0),
        }
        self.report.append(entry)
        return entry

    def work_in_flight(self) -> set[tuple[str, str]]:
        """(first day of the run, step) of every step started and not ended in the round's runs."""
        day = {r["run_id"]: r["day"] for r in self.round_runs() if r["status"] in ("STARTING", "STARTED")}
        if not day:
            return set()
        rows = self.psql(
            "select run_id, step_key, dagster_event_type from event_logs where run_id in ({}) and "
            "dagster_event_type in ('STEP_START', 'STEP_RESTARTED', 'STEP_SUCCESS') order by id".format(
                ",".join(f"'{r}'" for r in day)
            )
        )
        open_steps: set[tuple[str, str]] = set()
        for run_id, step, kind in rows:
            if kind == "STEP_SUCCESS":
                open_steps.discard((day[run_id], step))
            else:
                open_steps.add((day[run_id], step))
        return open_steps

    def wait_work_done(
        self, work: set[tuple[str, str]], mark: int, timeout_s: float = RECOVERY_TIMEOUT_S
    ) -> None:
        """Until each (day, step) of ``work`` has succeeded after ``mark`` in a run of that day
        (the same run, its retry, a re-execution), or the round has nothing left that could do
        it (a run its backfill did not retry: finish_round does what the README says)."""
        if not work:
            return
        deadline, left = time.monotonic() + timeout_s, work
        for _ in range(int(timeout_s / 2) + 2):
            runs = {r["run_id"]: r["day"] for r in self.round_runs()}
            rows = self.psql(
                "select run_id, step_key from event_logs where dagster_event_type = 'STEP_SUCCESS' "
                "and id > {} and run_id in ({})".format(mark, ",".join(f"'{r}'" for r in runs))
            )
            left = work - {(runs[r], step) for r, step in rows}
            if not left or not self.round_busy():
                return
            if time.monotonic() > deadline:
                break
            time.sleep(2)
        raise StackError(f"work in flight at the fault not done within {timeout_s} s: {sorted(left)}")

    def operator_action(self, fault: Fault, started: float) -> list[str]:
        """What docker/README.md tells the operator to do after this fault, when Dagster shows
        what the README says: Grobid down, busy or hanging left days whose grobid_tei has PDFs
        without TEI (its pending count, reasons busy/timeout): once Grobid answers, re-run
        those days (one backfill). It runs beside the round; the round's end waits for it, and
        the fault's recovery time then counts until it is done. Other faults need nothing here (a
        run its backfill did not retry is re-executed at the end of the round: finish_round)."""
        if not fault.name.startswith("grobid"):
            return []
        incomplete = self.tei_incomplete_days()
        if not incomplete:
            return []
        backfill = self.launch(sorted(incomplete))
        self.round.extra_backfills.append(backfill)
        self.round.reruns[backfill] = (fault.name, started, sorted(incomplete))
        return [
            f"re-ran {', '.join(sorted(incomplete))} ({'; '.join(incomplete.values())}) as backfill {backfill}"
        ]

    def wait_backfill(
        self, backfill: str, terminal: bool = False, timeout_s: float = ROUND_TIMEOUT_S
    ) -> None:
        """Until the backfill's runs have ended (``terminal``: and Dagster marked it complete)."""
        deadline = time.monotonic() + timeout_s
        for _ in range(int(timeout_s / 3) + 2):
            status = self.psql(f"select status from bulk_actions where key = '{backfill}'")
            done = not self.round_busy([backfill])
            if done and (
                not terminal or (status and status[0][0].startswith(("COMPLETED", "FAILED", "CANCELED")))
            ):
                return
            if time.monotonic() > deadline:
                break
            time.sleep(3)
        raise StackError(f"backfill {backfill} did not end within {timeout_s} s")

    def wait_point(self, fault: Fault, timeout_s: float = ROUND_TIMEOUT_S) -> dict | None:
        """Until the k-th start of the fault's step from now on in the round; None when the
        round ends first."""
        deadline = time.monotonic() + timeout_s
        base = self.starts(fault.trigger_step)  # the point counts from here (the last fault's end)
        for _ in range(int(timeout_s) + 2):
            count = self.starts(fault.trigger_step) - base
            # pipes-kill: the step has started, and now its worker container must be up
            if count >= fault.k and (fault.name != "pipes-kill" or self.pipes_container()):
                return {"starts": count, "steps_started": self.starts(None)}
            if not self.round_busy():
                return None
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        raise StackError(f"{fault.name}: no point within {timeout_s} s")

    def pipes_container(self) -> str | None:
        run_ids = {r["run_id"] for r in self.round_runs()}
        for c in self.s.live_containers(WORKER_LABEL):
            labels = dict(kv.split("=", 1) for kv in c["Labels"].split(",") if "=" in kv)
            if c["State"] == "running" and labels.get(RUN_ID_LABEL) in run_ids:
                return c["ID"]
        return None

    def kill9(self, service: str) -> dict:
        """``kill -9`` of the service's main process from the host, as the OOM killer or a crash
        would end it (``docker kill`` counts as a manual stop: no restart policy after it)."""
        cid = self.s.container(service)
        pid, started = self.s.docker(
            "inspect", "-f", "{{.State.Pid}} {{.State.StartedAt}}", cid
        ).stdout.split()
        os.kill(int(pid), signal.SIGKILL)
        return {"container": cid[:12], "pid": int(pid), "started_at": started, "at": time.time()}

    inject_postgres_kill = lambda self, f: self.kill9("postgres")  # noqa: E731
    inject_daemon_kill = lambda self, f: self.kill9("daemon")  # noqa: E731
    inject_code_kill = lambda self, f: self.kill9("code")  # noqa: E731
    inject_webserver_kill = lambda self, f: self.kill9("webserver")  # noqa: E731
    inject_celery_worker_kill = lambda self, f: self.kill9("celery-worker")  # noqa: E731
    inject_redis_kill = lambda self, f: self.kill9("redis")  # noqa: E731
    inject_grobid_kill = lambda self, f: self.kill9("grobid")  # noqa: E731

    def inject_pipes_kill(self, fault: Fault) -> dict:
        """kill -9 of a Pipes worker container of the round while it runs (they live seconds: the
        first one seen may have ended already, then the next one is taken)."""
        deadline = time.monotonic() + 120
        for _ in range(600):
            cid = self.pipes_container()
            if cid:
                info = self.s.docker(
                    "inspect",
                    "-f",
                    '{{index .Config.Labels "dagster/run_id"}} {{.State.Pid}}',
                    cid,
                    check=False,
                ).stdout.split()
                if len(info) == 2 and info[1] != "0":
                    try:
                        os.kill(int(info[1]), signal.SIGKILL)
                        return {
                            "container": cid[:12],
                            "run": info[0][:8],
                            "pid": int(info[1]),
                            "at": time.time(),
                        }
                    except ProcessLookupError:
                        pass  # it ended just now
            assert time.monotonic() < deadline and self.round_busy(), "no Pipes container to kill"
            time.sleep(0.2)
        raise StackError("no Pipes container to kill")

    def grobid_stats(self) -> dict:
        probe = (
            "import urllib.request; "
            "print(urllib.request.urlopen('http://grobid:8070/fake/stats', timeout=5).read().decode())"
        )
        return retrying(lambda: self.s.code_python(probe, timeout=60), 60, "Grobid stats").get("answered", {})

    def inject_grobid_503(self, fault: Fault) -> dict:
        """Every engine busy: each PDF gets 503 for ``seconds`` (the stand-in between a SIGUSR1
        and a SIGUSR2; it keeps answering /api/isalive, as a busy Grobid does)."""
        cid = self.s.container("grobid")
        before = self.grobid_stats()
        t0 = time.time()
        self.s.docker("kill", "--signal", "USR1", cid)
        try:
            time.sleep(fault.params["seconds"])
        finally:
            self.s.docker("kill", "--signal", "USR2", cid)
        after = self.grobid_stats()
        answered = {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}
        return {"answered_503_for_s": round(time.time() - t0, 1), "grobid_answered": answered, "at": t0}

    def inject_grobid_hang(self, fault: Fault) -> dict:
        """Grobid stops answering (its processes frozen) for longer than the client's timeout."""
        cid = self.s.container("grobid")
        t0 = time.time()
        self.s.docker("pause", cid)
        try:
            time.sleep(fault.params["seconds"])
        finally:
            self.s.docker("unpause", cid)
        return {
            "hung_for_s": round(time.time() - t0, 1),
            "client_timeout_s": GROBID_CLIENT["timeout_s"],
            "at": t0,
        }

    def holder(self, script: str, check: bool = True):
        return self.s.docker("exec", HOLDER, "sh", "-c", script, check=check, timeout=300)

    def inject_disk_full(self, fault: Fault) -> dict:
        """The data volume full until a step has failed on it, then space freed."""
        t0 = time.time()
        mark = self.max_event_id()
        filled = self.holder(f"dd if=/dev/zero of={FILL} bs=1M 2>&1; df -k /data | tail -1", check=False)
        reason, deadline = None, time.monotonic() + RECOVERY_TIMEOUT_S
        try:
            for _ in range(RECOVERY_TIMEOUT_S):
                rows = self.psql(
                    "select event from event_logs where dagster_event_type in ('STEP_FAILURE', "
                    f"'STEP_UP_FOR_RETRY') and id > {mark} and event like '%No space left%' limit 1"
                )
                if rows:
                    reason = _event_text(rows[0][0], "No space left")
                    break
                assert self.round_busy(), "the round ended and no step failed on the full volume"
                assert time.monotonic() < deadline, "no step failed on the full volume"
                time.sleep(1)
            half = self.half_written()  # while full: nothing half-written left behind
        finally:
            self.holder(f"rm -f {FILL}")
        assert half == {"temp_files": [], "unreadable": []}, half
        return {
            "filled": filled.stdout.strip().splitlines()[-1],
            "step_failed_with": reason,
            "full_for_s": round(time.time() - t0, 1),
            "half_written_while_full": half,
            "at": t0,
        }

    def inject_stop_start(self, fault: Fault) -> dict:
        t0 = time.time()
        stop = self.s.dc("stop", profiles=self.profiles, timeout=300)
        start = self.s.dc("start", profiles=self.profiles, timeout=300)
        return {"stop_rc": stop.returncode, "start_rc": start.returncode, "at": t0}

    def inject_down_up(self, fault: Fault) -> dict:
        """``down`` (no -v) and ``up``: while run containers are attached, down cannot remove the
        network and says so (exit 1); up finds it and the volumes as they were."""
        t0 = time.time()
        down = self.s.dc("down", "--timeout", "20", profiles=self.profiles, timeout=300, check=False)
        up = self.s.dc("up", "-d", profiles=self.profiles, timeout=600)
        said = [line for line in down.stderr.splitlines() if "error" in line.lower()]
        return {"down_rc": down.returncode, "down_said": said[-2:], "up_rc": up.returncode, "at": t0}

    # ------------------------------------------------------------------ recovery

    def wait_grobid(self, timeout_s: float = 120) -> float:
        t0 = time.monotonic()
        probe = "import urllib.request; print(urllib.request.urlopen('http://grobid:8070/api/isalive', timeout=5).read().decode())"
        retrying(lambda: self.s.exec("code", "python", "-c", probe, timeout=30), timeout_s, "Grobid")
        return time.monotonic() - t0

    def wait_back(self, fault: Fault, injected: dict) -> dict:
        """Until every service answers again; what Dagster showed meanwhile is noted. After a
        fault that restarts the daemon, its daemons must have heartbeated since."""
        t0, observed = time.monotonic(), []
        since = injected["at"] if fault.name in RESTARTS_DAEMON else 0.0
        deadline = t0 + RECOVERY_TIMEOUT_S
        for _ in range(RECOVERY_TIMEOUT_S):
            state = self.stack_state(since)
            for note in state["notes"]:
                if note not in observed:
                    observed.append(note)
            if state["ok"]:
                return {"seconds": round(time.monotonic() - t0, 1), "observed": observed}
            assert time.monotonic() < deadline, f"{fault.name}: the stack is not back: {state}"
            time.sleep(1)
        raise StackError(f"{fault.name}: not back")

    def stack_state(self, since: float) -> dict:
        """Each service answering, the daemons heartbeating since ``since`` (a restarted daemon's
        old heartbeats do not count), the code location loaded in the webserver."""
        notes, ok = [], True
        try:
            self.s.psql("select 1")
        except StackError:
            notes.append("Postgres not answering")
            ok = False
        try:
            statuses = self.s.gql(DAEMONS)["instance"]["daemonHealth"]["allDaemonStatuses"]
            stale = [
                d["daemonType"]
                for d in statuses
                if d["required"] and (not d["healthy"] or (d["lastHeartbeatTime"] or 0) < since)
            ]
            if stale:
                notes.append(f"daemons not heartbeating since the fault: {', '.join(sorted(stale))}")
                ok = False
            for entry in self.s.gql(LOCATION_STATUS)["workspaceOrError"]["locationEntries"]:
                err = entry["locationOrLoadError"] or {}
                if entry["loadStatus"] != "LOADED" or err.get("__typename") != "RepositoryLocation":
                    notes.append(
                        f"code location {entry['name']}: {entry['loadStatus']} {err.get('message', '')[:120]}".strip()
                    )
                    ok = False
        except (StackError, OSError, KeyError, TypeError) as exc:
            notes.append(f"webserver: {str(exc)[:120]}")
            ok = False
        services = ["postgres", "grobid", "code", "webserver", "daemon", "docker-proxy"]
        if "celery" in self.profiles:
            services += ["redis", "celery-worker"]
        for service in services:
            try:
                state = self.s.docker(
                    "inspect", "-f", "{{.State.Status}}", self.s.container(service)
                ).stdout.strip()
            except StackError:
                state = "gone"
            if state != "running":
                notes.append(f"{service} {state}")
                ok = False
        if ok:
            try:
                self.wait_grobid(10)
                if "celery" in self.profiles:
                    self.s.exec("redis", "redis-cli", "ping", timeout=10)
            except StackError as exc:
                notes.append(str(exc)[:120])
                ok = False
        return {"ok": ok, "notes": notes}


def _event(event: str) -> dict:
    try:
        return json.loads(event)
    except ValueError:
        return {}


def _event_text(event: str, look_for: str | None = None) -> str:
    """The user message of a stored event, and what its error says: the line naming
    ``look_for`` (or a telling cause: a worker's exit, a lost connection, a full disk), else the
    innermost error's first line."""
    data = _event(event)
    text = (data.get("user_message") or "").replace("\n", " ")[:140]
    specific = (data.get("dagster_event") or {}).get("event_specific_data") or {}
    error = specific.get("error") if isinstance(specific, dict) else None
    lines: list[str] = []
    for _ in range(6):  # the cause chain: the useful line is often the innermost
        if not isinstance(error, dict):
            break
        message = error.get("message") or ""
        lines += [f"{error.get('cls_name')}: {line.strip()}" for line in message.splitlines() if line.strip()]
        error = error.get("cause") or error.get("context")
    wanted = [look_for] if look_for else list(TELLING)
    telling = [line for line in lines if any(w in line for w in wanted)]
    if telling or lines:
        text += f" [{(telling or lines[-1:])[0][:220]}]"
    return text.strip()


TELLING = ("No space left", "exited with code", "137", "closed the connection", "Connection refused", "Errno")


def _table_counts(entry, key: str) -> dict[str, int]:
    """``{value of key: count}`` of a stored table metadata value (the assets' count tables)."""
    records = entry.get("records", []) if isinstance(entry, dict) else []
    data = [r.get("data", {}) for r in records if isinstance(r, dict)]
    return {str(d.get(key)): int(d.get("count") or 0) for d in data if key in d}


def _metadata(event: str) -> dict:
    data = _event(event)
    mat = data["dagster_event"]["event_specific_data"]["materialization"]
    out = {}
    for m in mat.get("metadata_entries", []):
        entry = m["entry_data"]
        out[m["label"]] = entry.get("value", entry.get("text", entry.get("md_str", entry)))
    return out
