"""Launch a run of a job in the code location the UI serves (`workspace.yaml`, location `curation`).

What `curation run` does: it creates the run from the remote job (so the run records its code origin, is
listed in the job's history and can be re-executed or relaunched from the UI), submits it to the instance
(the run queue when a daemon serves it, else straight to the run launcher), streams the run's events
and waits for it to end. SIGINT/SIGTERM cancel the run; a run that does not stop is marked failed, never
left "started" with nothing behind it.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.events import DagsterEvent
from dagster._core.remote_representation.external import RemoteJob
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import WorkspaceFileTarget

LOCATION = "curation"  # the location name in workspace.yaml
DAEMON_FRESH_SECONDS = 60  # a run-queue daemon heartbeat younger than this means queued runs get launched
STOP_WAIT_SECONDS = 60  # after a cancel request, how long the run gets to stop before it is marked failed
LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40}


@dataclass
class LaunchedRun:
    """The outcome of a launched run, shaped like an in-process result where `curation run` reads it."""

    run_id: str
    status: DagsterRunStatus
    all_events: list[DagsterEvent] = field(default_factory=list)
    interrupted_by: int | None = None  # the signal number that cancelled the run, if any

    @property
    def success(self) -> bool:
        return self.status == DagsterRunStatus.SUCCESS


def daemon_serves_queue(instance: dg.DagsterInstance) -> bool:
    """True when a run-queue daemon (`dagster dev`, `dagster-daemon run`) heartbeats on this instance."""
    beat = instance.get_daemon_heartbeats().get("QUEUED_RUN_COORDINATOR")
    return beat is not None and time.time() - beat.timestamp < DAEMON_FRESH_SECONDS


def _remote_job(request, job_name: str, asset_selection: Iterable[dg.AssetKey] | None) -> tuple[RemoteJob, Any, Any]:
    location = request.get_code_location(LOCATION)
    repositories = list(location.get_repositories().values())
    if len(repositories) != 1:
        raise RuntimeError(f"code location {LOCATION!r} must hold exactly one repository")
    repo = repositories[0]
    selector = JobSubsetSelector(
        location_name=LOCATION,
        repository_name=repo.name,
        job_name=job_name,
        op_selection=None,
        asset_selection=set(asset_selection) if asset_selection is not None else None,
    )
    return location.get_job(selector), location, repo


def launch_and_wait(
    instance: dg.DagsterInstance,
    workspace_file: Path,
    job_name: str,
    *,
    partition_key: str | None,
    run_config: Mapping,
    tags: Mapping[str, str],
    asset_selection: Iterable[dg.AssetKey] | None = None,
    log_level: str = "INFO",
    echo: Callable[[str], None] = print,
) -> LaunchedRun:
    """Create the run from the remote job, submit it, stream its log and wait until it ends."""
    received: list[int] = []  # SIGINT/SIGTERM from here on end the run cleanly (see `_stop`)

    def on_signal(signum, _frame):
        received.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _launch_and_wait(
            instance,
            workspace_file,
            job_name,
            partition_key,
            run_config,
            tags,
            asset_selection,
            log_level,
            echo,
            received,
        )
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _launch_and_wait(
    instance, workspace_file, job_name, partition_key, run_config, tags, asset_selection, log_level, echo, received
) -> LaunchedRun:
    if received:
        raise SystemExit(128 + received[0])
    run_tags = {**tags, **({"dagster/partition": partition_key} if partition_key else {})}
    with WorkspaceProcessContext(
        instance, WorkspaceFileTarget(paths=[str(workspace_file)]), version=dg.__version__
    ) as process_context:
        request = process_context.create_request_context()
        errors = request.get_code_location_error(LOCATION)
        if errors is not None:
            raise RuntimeError(f"code location {LOCATION!r} failed to load: {errors.message}")
        remote_job, location, repo = _remote_job(request, job_name, asset_selection)
        plan = location.get_execution_plan(
            remote_job, dict(run_config), step_keys_to_execute=None, known_state=None, instance=instance
        )
        run = instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config=dict(run_config),
            resolved_op_selection=None,
            step_keys_to_execute=plan.execution_plan_snapshot.step_keys_to_execute,
            op_selection=None,
            status=DagsterRunStatus.NOT_STARTED,
            root_run_id=None,
            parent_run_id=None,
            tags={**remote_job.tags, **run_tags},
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=plan.execution_plan_snapshot,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=frozenset(asset_selection) if asset_selection is not None else None,
            asset_check_selection=None,
            asset_graph=repo.asset_graph,
        )
        if received:  # interrupted before the launch: the run never starts
            instance.report_run_canceled(run, f"`curation run` received {signal.Signals(received[0]).name}")
            return LaunchedRun(run.run_id, DagsterRunStatus.CANCELED, [], received[0])
        queued = daemon_serves_queue(instance)
        if queued:
            instance.submit_run(run.run_id, request)
            echo(f"run {run.run_id} queued (the daemon of `dagster dev` launches it when a slot is free)")
        else:
            instance.launch_run(run.run_id, request)
            echo(f"run {run.run_id} launched")
        # A run this process launched writes its console log to this terminal already (the code server's
        # output is ours); a queued run's worker belongs to the daemon, so its log is echoed from the events.
        min_level = LEVELS.get(log_level, 20) if queued else None
        return _wait(instance, run.run_id, min_level, echo, received)


def _wait(
    instance: dg.DagsterInstance, run_id: str, min_level: int | None, echo: Callable[[str], None], received: list[int]
) -> LaunchedRun:
    """Stream the run's log until it ends; the first SIGINT/SIGTERM cancels it (see `_stop`)."""
    events: list[DagsterEvent] = []
    cursor = None
    while True:
        connection = instance.get_records_for_run(run_id, cursor=cursor)
        cursor = connection.cursor
        for record in connection.records:
            entry = record.event_log_entry
            if entry.dagster_event is not None:
                events.append(entry.dagster_event)
            if min_level is not None and entry.level >= min_level and entry.user_message:
                where = f" {entry.step_key}" if entry.step_key else ""
                echo(f"  [{logging.getLevelName(entry.level)}{where}] {entry.user_message}")
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished and not connection.has_more:
            return LaunchedRun(run_id, run.status, events, received[0] if received else None)
        if received:
            return _stop(instance, run_id, received[0], events, echo)
        if not connection.has_more:
            time.sleep(0.5)


def _stop(
    instance: dg.DagsterInstance, run_id: str, signum: int, events: list[DagsterEvent], echo: Callable[[str], None]
) -> LaunchedRun:
    """Cancel the run (dequeue or terminate its process); mark it failed if it is not over in time."""
    name = signal.Signals(signum).name
    echo(f"{name}: cancelling run {run_id}")
    try:
        instance.run_coordinator.cancel_run(run_id)
    except Exception as exc:  # the run must not be left hanging, whatever went wrong with the request
        echo(f"cancel request failed ({type(exc).__name__}: {exc})")
    deadline = time.time() + STOP_WAIT_SECONDS
    run = instance.get_run_by_id(run_id)
    while run is not None and not run.is_finished and time.time() < deadline:
        time.sleep(0.5)
        run = instance.get_run_by_id(run_id)
    if run is not None and not run.is_finished:
        instance.report_run_failed(
            run, f"`curation run` received {name} and the run did not stop within {STOP_WAIT_SECONDS}s; marked failed"
        )
        run = instance.get_run_by_id(run_id)
    status = run.status if run is not None else DagsterRunStatus.FAILURE
    echo(f"run {run_id} {status.value.lower()}")
    return LaunchedRun(run_id, status, events, signum)
