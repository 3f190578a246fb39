"""`curation run` launches its run in the UI's code location, and a SIGTERM on it ends that run cleanly
(cancelled or failed, never left "started")."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def test_sigterm_on_curation_run_ends_the_launched_run(tiny_project, tmp_path):
    import dagster as dg

    project = tmp_path / "project"
    shutil.copytree(tiny_project, project, ignore=shutil.ignore_patterns(".curation", "releases"))
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1", "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": ""}
    env["PYTHONUNBUFFERED"] = "1"  # its "run ... launched" line must reach the pipe when printed
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "curation"), "run", "--config", str(project / "curation.yaml")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    deadline = time.time() + 300
    for line in proc.stdout:
        lines.append(line)
        if " launched" in line and line.startswith("run "):
            break
        assert time.time() < deadline, "".join(lines)
    assert proc.poll() is None, "".join(lines)
    # as soon as the run worker executes steps (a tiny batch can finish within seconds of that)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        started = time.time() + 120
        while time.time() < started and not any(
            r.status == dg.DagsterRunStatus.STARTED for r in instance.get_runs(limit=1)
        ):
            time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=180)
    lines.append(out)
    assert proc.returncode == 128 + signal.SIGTERM, "".join(lines)[-3000:]
    assert "SIGTERM: cancelling run" in out

    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1
        run = runs[0]
        assert run.status in (dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.FAILURE), run.status
        assert run.remote_job_origin is not None, "a CLI run must carry the code location's origin (UI re-execute)"
        assert run.remote_job_origin.location_name == "curation"
        # a tiny batch runs its steps in the run's process (sharding.in_process_max_docs)
        assert run.run_config["execution"] == {"config": {"in_process": True}}
        assert run.tags["dagster/partition"] == "tiny"
