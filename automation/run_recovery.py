"""Dead-run recovery: a run whose process is gone (`kill -9`, OOM, a closed laptop) is marked failed and gives
back its concurrency-pool slots, so it never blocks later runs.

Dagster records the pid of the process that emitted each event; the run worker is the process that emitted the
run's RUN_START (RUN_STARTING while it is being launched). A run in progress whose worker is no longer alive
(or whose pid now belongs to a younger process) is dead: it is reported failed, and its claimed and pending
pool slots are freed through the instance's event-log storage (the same call as "free slots" in the UI). Slots
still held by finished or deleted runs are freed as well.

Used three ways: once at the start of `curation run` (`reclaim_dead_runs`), by a watcher thread in that
process that keeps reclaiming and reports a step waiting for a pool slot with the run that holds it (so a wait
is never silent), and by `dead_run_sensor` under `make dev`. Pids are only meaningful on this host, so runs
are judged only on an instance whose storage is local (SQLite, as `make` configures, or in memory).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg
import psutil

from assets._common import PARTITION_TAG

IN_PROGRESS = (dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING)
# A run being launched has only its launcher's pid until the worker starts: give the worker this long.
STARTING_GRACE_S = 120.0
WATCH_INTERVAL_S = 15.0
WAIT_REPORT_INTERVAL_S = 60.0


@dataclass(frozen=True)
class Reclaimed:
    """One run found dead (or finished) that held pool slots or was still marked in progress."""

    run_id: str
    batch: str
    status: str  # the status it was left in
    reason: str
    slots_freed: int

    def describe(self) -> str:
        slots = f"freed {self.slots_freed} pool slot(s)" if self.slots_freed else "held no pool slot"
        return f"run {self.run_id[:8]} (batch {self.batch}, was {self.status}): {self.reason}; {slots}"


@dataclass(frozen=True)
class Worker:
    """The process running a run, as its events recorded it."""

    pid: int
    since: float  # timestamp of the event that recorded it

    def alive(self) -> bool:
        """True while that very process runs: a pid reused by a younger process does not count."""
        try:
            process = psutil.Process(self.pid)
            if process.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                return False
            return process.create_time() <= self.since + 1.0
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return False

    def describe(self) -> str:
        started = dt.datetime.fromtimestamp(self.since, dt.UTC).strftime("%H:%M:%SZ")
        return f"pid {self.pid}, since {started}"


def judges_pids(instance: dg.DagsterInstance) -> bool:
    """Whether this instance's runs execute on this host (local storage), so their pids can be checked."""
    storage = type(instance.run_storage).__name__.lower()
    return instance.is_ephemeral or "sqlite" in storage or "inmemory" in storage


def run_worker(instance: dg.DagsterInstance, run: dg.DagsterRun) -> Worker | None:
    """The worker process of a run in progress: the pid on its latest RUN_START (else RUN_STARTING) event."""
    for event_type in (dg.DagsterEventType.RUN_START, dg.DagsterEventType.RUN_STARTING):
        entries = instance.event_log_storage.get_logs_for_run(run.run_id, of_type=event_type, limit=1, ascending=False)
        for entry in entries:
            if entry.dagster_event is not None and entry.dagster_event.pid is not None:
                return Worker(entry.dagster_event.pid, entry.timestamp)
    return None


def is_dead(instance: dg.DagsterInstance, run: dg.DagsterRun, now: float | None = None) -> str | None:
    """Why a run in progress is dead, or None while its worker runs (or cannot be judged yet)."""
    worker = run_worker(instance, run)
    if worker is None or worker.alive():
        return None
    if run.status == dg.DagsterRunStatus.STARTING and (now or time.time()) - worker.since < STARTING_GRACE_S:
        return None  # launched moments ago: its worker may still be coming up
    return f"its process ({worker.describe()}) is gone"


def slot_holders(instance: dg.DagsterInstance) -> dict[str, set[str]]:
    """Run id -> pools in which it holds (or waits for) a slot."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return {}
    holders: dict[str, set[str]] = {}
    for pool in storage.get_concurrency_keys():
        info = storage.get_concurrency_info(pool)
        for run_id in {s.run_id for s in info.claimed_slots} | {s.run_id for s in info.pending_steps}:
            holders.setdefault(run_id, set()).add(pool)
    return holders


def reclaim_dead_runs(
    instance: dg.DagsterInstance, report: Callable[[str], None] | None = None, watch: bool = True
) -> list[Reclaimed]:
    """Mark runs whose process is gone as failed and free every pool slot held by a run that is not alive;
    report what was reclaimed and which live run holds a model slot. With ``watch`` (a persistent instance
    only), a daemon thread keeps doing so while this process runs, reporting steps that wait for a slot."""
    report = report or _stderr
    if not judges_pids(instance):
        return []
    reclaimed = _sweep(instance)
    for item in reclaimed:
        report(f"recovered {item.describe()}")
    for line in pool_report(instance):
        report(line)
    if watch and not instance.is_ephemeral:
        _start_watcher(instance, report)
    return reclaimed


def _sweep(instance: dg.DagsterInstance) -> list[Reclaimed]:
    holders = slot_holders(instance)
    out = []
    now = time.time()
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=list(IN_PROGRESS))):
        run = record.dagster_run
        reason = is_dead(instance, run, now)
        if reason is None:
            continue
        message = f"Marked failed by the dead-run sweep: {reason} (killed or crashed); its pool slots are freed."
        if run.status == dg.DagsterRunStatus.CANCELING:
            instance.report_run_canceled(run, message=message)
        else:
            instance.report_run_failed(run, message=message, job_failure_data=_unexpected_termination())
        freed = _free(instance, run.run_id) if run.run_id in holders else 0
        out.append(Reclaimed(run.run_id, run.tags.get(PARTITION_TAG, "-"), run.status.value, reason, freed))
    swept = {item.run_id for item in out}
    for run_id in sorted(set(holders) - swept):
        run = instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            continue  # alive (or not judged dead above): its slots are its own
        freed = _free(instance, run_id)
        status = run.status.value if run is not None else "deleted"
        batch = run.tags.get(PARTITION_TAG, "-") if run is not None else "-"
        out.append(Reclaimed(run_id, batch, status, "the run has ended but kept its slots", freed))
    return out


def _free(instance: dg.DagsterInstance, run_id: str) -> int:
    storage = instance.event_log_storage
    before = sum(_claimed(instance, run_id).values())
    storage.free_concurrency_slots_for_run(run_id)
    return before


def _claimed(instance: dg.DagsterInstance, run_id: str) -> dict[str, int]:
    storage = instance.event_log_storage
    counts = {}
    for pool in storage.get_concurrency_keys():
        info = storage.get_concurrency_info(pool)
        counts[pool] = sum(1 for slot in info.claimed_slots if slot.run_id == run_id)
    return counts


def _unexpected_termination():
    try:
        from dagster._core.events import JobFailureData, RunFailureReason
    except ImportError:  # the reason only labels the failure in the UI
        return None
    return JobFailureData(error=None, failure_reason=RunFailureReason.UNEXPECTED_TERMINATION)


def pool_report(instance: dg.DagsterInstance, waiting_only: bool = False) -> list[str]:
    """One line per pool that has a step waiting (or, unless ``waiting_only``, a slot taken): who holds it."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return []
    lines = []
    for pool in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(pool)
        waiting = [s for s in info.pending_steps if s.assigned_timestamp is None]
        if not info.claimed_slots or (waiting_only and not waiting):
            continue
        held = "; ".join(_describe_holder(instance, s.run_id, s.step_key) for s in info.claimed_slots)
        limit = info.limit if info.limit is not None else info.slot_count
        line = f"pool {pool} (limit {limit}): slot held by {held}"
        if waiting:
            queue = ", ".join(f"{_short(instance, s.run_id)} {s.step_key}" for s in waiting)
            line += f"; waiting for it: {queue}"
        lines.append(line)
    return lines


def _short(instance: dg.DagsterInstance, run_id: str) -> str:
    run = instance.get_run_by_id(run_id)
    batch = run.tags.get(PARTITION_TAG, "-") if run is not None else "-"
    return f"run {run_id[:8]} (batch {batch})"


def _describe_holder(instance: dg.DagsterInstance, run_id: str, step_key: str) -> str:
    run = instance.get_run_by_id(run_id)
    if run is None:
        return f"deleted run {run_id[:8]} (step {step_key})"
    worker = run_worker(instance, run)
    where = f", {worker.describe()}" if worker else ""
    return f"{_short(instance, run_id)}, step {step_key}, {run.status.value}{where}"


def _stderr(line: str) -> None:
    print(f"curation: {line}", file=sys.stderr, flush=True)


_WATCHERS: set[str] = set()
_WATCHERS_LOCK = threading.Lock()


def _start_watcher(instance: dg.DagsterInstance, report: Callable[[str], None]) -> None:
    """One daemon thread per process and instance: reclaim dead runs, and report waits for a pool slot."""
    root = instance.root_directory
    with _WATCHERS_LOCK:
        if root in _WATCHERS:
            return
        _WATCHERS.add(root)
    own = dg.DagsterInstance.from_ref(instance.get_ref())  # its own storage handles, used by the thread only

    def watch() -> None:
        last_report: dict[str, float] = {}
        while True:
            time.sleep(WATCH_INTERVAL_S)
            if not os.path.isdir(root):  # the instance is gone (a test's temporary home): nothing to watch
                return
            try:
                for item in _sweep(own):
                    report(f"recovered {item.describe()}")
                for line in pool_report(own, waiting_only=True):
                    key = line.split(";")[0]
                    if time.monotonic() - last_report.get(key, -1e9) >= WAIT_REPORT_INTERVAL_S:
                        last_report[key] = time.monotonic()
                        report(line)
            except Exception as exc:  # never take the run down with the watcher; say so once per kind
                problem = f"dead-run watcher: {type(exc).__name__}: {exc}"
                if problem not in last_report:
                    last_report[problem] = time.monotonic()
                    report(problem)

    threading.Thread(target=watch, name="curation-dead-run-watcher", daemon=True).start()


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Marks runs whose process is gone as failed and frees their concurrency-pool slots, so a "
    "killed run never blocks later runs; reports which run holds a model slot while others wait.",
)
def dead_run_sensor(context: dg.SensorEvaluationContext):
    lines: list[str] = []
    reclaimed = reclaim_dead_runs(context.instance, report=lines.append, watch=False)
    for line in lines:
        (context.log.warning if line.startswith("recovered") else context.log.info)(line)
    summary = f"reclaimed {len(reclaimed)} run(s)" if reclaimed else "no dead runs"
    return dg.SkipReason(f"{summary}; " + (" | ".join(lines[len(reclaimed) :]) or "no pool slot held"))
