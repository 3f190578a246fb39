"""Parallel batches never deadlock on the two DuckDB files (warehouse, vault).

A batch's `surrogate_consistency` check used to hold the warehouse for its whole step and then open the
vault, while another batch's `surrogate_view` held the vault and then wrote the warehouse: each waited for
the other until the 300 s lock timeout. The documented order (docs/operations.md) is: never hold both.
These tests run the two steps of two batches at once, in separate processes (DuckDB's lock is per process),
many times over, with a short lock timeout so a deadlock fails fast instead of hanging.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from curation.core.config import CurationConfig
from curation.core.warehouse import Warehouse
from curation.views.convention import load_convention
from curation.views.stage import surrogate_stage
from curation.views.surrogates import SurrogateEngine
from curation.views.vault import Vault

KEY = bytes(range(32))
ROUNDS = 12
LOCK_TIMEOUT_S = 20.0

_STEP = """
import dataclasses, sys
from pathlib import Path
from curation.gates import release_gates as gates
from curation.core.config import CurationConfig
from curation.views.convention import load_convention
from curation.views.stage import surrogate_stage
from curation.views.surrogates import SurrogateEngine
from curation.views.vault import Vault
from curation.core.warehouse import Warehouse

role, root, batch, rounds, timeout = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
warehouse = Warehouse(root / "w.duckdb", lock_timeout_s=timeout)
open_vault = lambda: Vault(root / "v.duckdb", lock_timeout_s=timeout)
key = bytes(range(32))
config = dataclasses.replace(CurationConfig(base_dir=str(root)), batch_id=batch)
for _ in range(rounds):
    if role == "surrogates":
        surrogate_stage(config, warehouse, SurrogateEngine(key, load_convention(), "k1"), open_vault)
    else:
        result, _ = gates.batch_surrogate_consistency(warehouse, open_vault, key, batch)
        assert result.passed, result.detail
print("done", role, batch)
"""


def _batch(warehouse: Warehouse, batch: str, n: int = 30) -> None:
    texts = {f"{batch}-{i}": f"Ticket {i}: Dana Whitfield{i} called from dana{i}@corp.example" for i in range(n)}
    docs = pl.DataFrame(
        {
            "doc_id": list(texts),
            "batch_id": [batch] * n,
            "scope_id": [f"conv-{i}" for i in range(n)],
            "kind": ["text"] * n,
            "text": list(texts.values()),
        }
    )
    warehouse.replace("documents", docs, "batch_id = ?", [batch])
    rows = []
    for doc_id, text in texts.items():
        name = text.split(": ", 1)[1].split(" called")[0]
        rows.append((batch, doc_id, text.index(name), text.index(name) + len(name), "PERSON", 1.0, "detector", "c"))
    schema = ["batch_id", "doc_id", "start", "end", "label", "score", "source", "calibration_id"]
    warehouse.replace("mask_spans", pl.DataFrame(rows, schema=schema, orient="row"), "batch_id = ?", [batch])


def _start(role: str, root: Path, batch: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.Popen(
        [sys.executable, "-c", _STEP, role, str(root), batch, str(ROUNDS), str(LOCK_TIMEOUT_S)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

@pytest.mark.slow

def test_surrogate_stage_and_consistency_check_of_two_batches_interleave_without_deadlock(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    for batch in ("a", "b"):
        _batch(warehouse, batch)
    config = dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id="b")
    engine = SurrogateEngine(KEY, load_convention(), "k1")
    surrogate_stage(config, warehouse, engine, lambda: Vault(tmp_path / "v.duckdb"))
    started = time.monotonic()
    steps = [_start("surrogates", tmp_path, "a"), _start("consistency", tmp_path, "b")]
    outputs = [step.communicate(timeout=240)[0] for step in steps]
    for step, output in zip(steps, outputs, strict=True):
        assert step.returncode == 0, output[-3000:]
        assert "Conflicting lock" not in output and "done" in output
    # both really ran at once (each round reopens the files), and neither waited out a lock timeout
    assert time.monotonic() - started < ROUNDS * LOCK_TIMEOUT_S
    with Vault(tmp_path / "v.duckdb") as vault:
        assert vault.batch_records("a") and vault.batch_records("b")


_BUILD_INSTANCE = """
import sys
sys.path.insert(0, sys.argv[1])
from definitions import persistent_instance
with persistent_instance() as instance:
    instance.get_runs(limit=1)
print("ok")
"""

@pytest.mark.slow

def test_several_runs_starting_at_once_on_a_new_dagster_home_build_one_instance(tmp_path):
    """Four `curation run` started together on a new DAGSTER_HOME raced to create the instance's SQLite
    schema ("table alembic_version already exists"); building it under a file lock, all of them start."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    root = str(Path(__file__).resolve().parents[1])
    builders = [
        subprocess.Popen(
            [sys.executable, "-c", _BUILD_INSTANCE, root], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for _ in range(6)
    ]
    outputs = [b.communicate(timeout=300)[0].decode() for b in builders]
    assert all(b.returncode == 0 for b in builders), "\n".join(o[-1500:] for o in outputs)
