"""Several delivery batches at once through `curation run` into one instance: every one releases.

Three parallel runs deadlocked on the warehouse and vault files in one trial of four (the lock order,
tests/test_lock_order.py); this runs four batches at once end to end, bounded in count and time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.heavy, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BATCHES = 4
RUN_TIMEOUT_S = 1200


def test_four_batches_at_once_all_release(e2e, tmp_path):
    _, config = e2e
    root = tmp_path / "project"
    shutil.copytree(config.base_dir, root, ignore=shutil.ignore_patterns("releases"))
    home = root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(  # what `make` writes: 4 runs at once, one model step at a time
        "telemetry:\n  enabled: false\nconcurrency:\n  runs:\n    max_concurrent_runs: 4\n"
        "  pools:\n    default_limit: 1\n",
        encoding="utf-8",
    )
    # Forked steps (the path of a large batch, a sensor's or the UI's launch): many processes on one warehouse.
    config_file = root / "curation.yaml"
    config_file.write_text(config_file.read_text(encoding="utf-8") + "sharding:\n  in_process_max_docs: 0\n")
    records = [json.loads(line) for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    env = {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1", "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": ""}
    runs, logs = [], []
    for i in range(BATCHES):
        part = root / f"part{i}.jsonl"
        part.write_text("".join(json.dumps(r) + "\n" for r in records[i::BATCHES]), encoding="utf-8")
        command = [str(BIN / "curation"), "run", "--config", str(root / "curation.yaml"), "--input", str(part)]
        command += ["--batch-id", f"part{i}", "--log-level", "WARNING"]
        log = (root / f"part{i}.log").open("w")  # a file, not a pipe: a full pipe would stall a run
        logs.append(log)
        runs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
    try:
        for run in runs:
            run.wait(timeout=RUN_TIMEOUT_S)
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
        for log in logs:
            log.close()
    outputs = [(root / f"part{i}.log").read_text(encoding="utf-8") for i in range(BATCHES)]
    for i, (run, output) in enumerate(zip(runs, outputs, strict=True)):
        assert "Conflicting lock" not in output, output[-3000:]
        assert run.returncode == 0 and "\nrelease: " in output, f"batch part{i}:\n{output[-3000:]}"
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert all("execution" not in run.run_config for run in instance.get_runs()), "forked steps expected"
    released = sorted(p.name for p in (root / "releases").iterdir())
    assert len(released) == BATCHES and not any(name.startswith(".") for name in released), released
