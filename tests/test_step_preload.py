"""The step executor's fork server preloads imports only: the heavy libraries and the classes the Dagster
instance is built from (its SQL storages), never an instance, a database connection or a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import gc, json, sys
import automation.step_preload as preload
found = {
    "alembic": "alembic" in sys.modules,
    "sqlalchemy": "sqlalchemy" in sys.modules,
    "sqlite_runs": "dagster._core.storage.runs.sqlite.sqlite_run_storage" in sys.modules,
    "preloaded": [m for m in preload.PRELOADED if m in sys.modules],
}
from dagster._core.instance.instance import DagsterInstance
found["instances"] = sum(1 for o in gc.get_objects() if isinstance(o, DagsterInstance))
print(json.dumps(found))
"""


def _probe(env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])

@pytest.mark.slow

def test_fork_server_preloads_the_instance_storage_classes_without_building_an_instance(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1", "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": ""}
    found = _probe(env)
    assert found["alembic"] and found["sqlalchemy"] and found["sqlite_runs"], found
    assert found["instances"] == 0
    assert "torch" in found["preloaded"] and "great_expectations" in found["preloaded"]
    assert not any(home.glob("**/*.db")), "a storage was opened before the fork"
