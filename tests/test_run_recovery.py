"""A killed run never blocks later runs: its process is gone, so the dead-run sweep marks it failed and frees
its `reference_model` pool slot, while a live run (even a waiting one) keeps its slot.

Real processes, a real persistent Dagster instance (SQLite, the pool limit `make` configures) and a real
`kill -9`: first with a one-op job holding the pool (fast), then with a real `curation run` killed during
`reference_scores` and run again (slow: the real model).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from automation.run_recovery import dead_run_sensor, pool_report, reclaim_dead_runs

REPO = Path(__file__).resolve().parent.parent
POOL = "reference_model"
INSTANCE_YAML = "telemetry:\n  enabled: false\nconcurrency:\n  pools:\n    default_limit: 1\n"

HOLDER = textwrap.dedent(
    """
    import sys, time
    import dagster as dg

    @dg.op(pool="reference_model")
    def reference_scores():
        print("holding", flush=True)
        time.sleep(float(sys.argv[1]))

    @dg.job
    def holder():
        reference_scores()

    result = holder.execute_in_process(instance=dg.DagsterInstance.get(), raise_on_error=False)
    print("success" if result.success else "failure", flush=True)
    """
)


def _instance_home(tmp_path: Path) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(INSTANCE_YAML, encoding="utf-8")
    return home


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1", "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": ""}


def _holders(instance: dg.DagsterInstance) -> set[str]:
    return {slot.run_id for slot in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots}


def _wait_for(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process exited with {proc.returncode} before {what}")
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def _kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)

@pytest.mark.slow

def test_sweep_keeps_a_live_run_and_reclaims_a_killed_one(tmp_path: Path) -> None:
    home = _instance_home(tmp_path)
    script = tmp_path / "holder.py"
    script.write_text(HOLDER, encoding="utf-8")
    start = dict(env=_env(home), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.get_runs(limit=1)  # the fresh SQLite storages are created here, not by two processes at once
    first = subprocess.Popen([sys.executable, str(script), "600"], start_new_session=True, **start)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            (holder,) = _wait_for(lambda: _holders(instance), 120, "the first run to claim the pool slot", first)
            # Alive: the sweep must leave it alone, and say who holds the slot.
            assert reclaim_dead_runs(instance, report=lambda line: None, watch=False) == []
            assert instance.get_run_by_id(holder).status == dg.DagsterRunStatus.STARTED
            assert any(holder[:8] in line and "step reference_scores" in line for line in pool_report(instance))

            os.killpg(first.pid, signal.SIGKILL)
            first.wait(30)
            # Dagster alone never notices: the run stays STARTED and keeps the slot.
            assert instance.get_run_by_id(holder).status == dg.DagsterRunStatus.STARTED
            assert _holders(instance) == {holder}

            # The sensor `make dev` runs every minute reclaims it (`curation run` calls the same sweep first).
            tick = dead_run_sensor(dg.build_sensor_context(instance=instance))
            assert isinstance(tick, dg.SkipReason) and tick.skip_message.startswith("reclaimed 1 run(s)")
            assert instance.get_run_by_id(holder).status == dg.DagsterRunStatus.FAILURE
            (failure,) = instance.event_log_storage.get_logs_for_run(holder, of_type=dg.DagsterEventType.RUN_FAILURE)
            assert "dead-run sweep: its process (pid" in failure.dagster_event.message
            assert _holders(instance) == set()
            assert reclaim_dead_runs(instance, report=lambda line: None, watch=False) == []  # nothing left

        # The next run gets the slot and completes.
        rerun = [sys.executable, str(script), "0"]
        second = subprocess.run(rerun, env=_env(home), cwd=tmp_path, capture_output=True, text=True, timeout=180)
        assert second.returncode == 0 and "success" in second.stdout, second.stdout[-2000:]
    finally:
        _kill_group(first)


@pytest.mark.slow
def test_killed_curation_run_does_not_block_the_rerun(scored_copy: Path, tmp_path: Path) -> None:
    """`kill -9` of a real `curation run` during `reference_scores`, then the same command again: it
    completes unattended, the killed run is marked failed and the pool slot is free."""
    home = _instance_home(tmp_path)
    corpus = scored_copy / "corpus.jsonl"
    # One new, longer text, so scoring has real work while the earlier texts stay cached.
    text = " ".join(f"Item {i}: the committee reviewed the quarterly figures and approved the plan." for i in range(60))
    corpus.write_text(corpus.read_text() + json.dumps({"id": "long-new", "kind": "text", "text": text}) + "\n")
    command = [str(REPO / ".venv" / "bin" / "curation"), "run", "--config", str(scored_copy / "curation.yaml")]
    if not Path(command[0]).exists():
        command[:1] = [sys.executable, "-m", "curation.cli"]
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(
        command, cwd=REPO, env=_env(home), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:

            def scoring_run():
                for run_id in _holders(instance):
                    steps = instance.event_log_storage.get_concurrency_info(POOL).claimed_slots
                    if any(s.run_id == run_id and s.step_key.startswith("reference_scores.") for s in steps):
                        return run_id
                return None

            killed = _wait_for(scoring_run, 900, "reference_scores to hold the model slot", first)
            time.sleep(1.0)  # inside the step
            worker = _worker_pid(instance, killed)
            os.killpg(first.pid, signal.SIGKILL)
            if worker is not None and worker != first.pid:  # a launched run worker dies with it
                _kill_pid(worker)
            first.wait(30)
            assert instance.get_run_by_id(killed).status == dg.DagsterRunStatus.STARTED
            assert _holders(instance) == {killed}

            rerun = subprocess.run(command, cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=1200)
            output = rerun.stdout + rerun.stderr
            assert rerun.returncode == 0, output[-3000:]
            assert f"recovered run {killed[:8]}" in output
            assert "materialized release" in output
            assert instance.get_run_by_id(killed).status == dg.DagsterRunStatus.FAILURE
            assert _holders(instance) == set()
            latest = instance.get_runs(limit=1)[0]
            assert latest.run_id != killed and latest.status == dg.DagsterRunStatus.SUCCESS
    finally:
        _kill_group(first)
        log.close()


def _worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    from automation.run_recovery import run_worker

    worker = run_worker(instance, instance.get_run_by_id(run_id))
    return worker.pid if worker else None


def _kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
