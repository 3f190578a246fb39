"""Delivery batches: inbox discovery, the sensor that turns batches into partitions, per-batch config,
and the score-drift warning. No model: these run in seconds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import dagster as dg
import numpy as np
import polars as pl
import pytest

from curation.core.config import ConfigError, CurationConfig, load_config
from curation.core.warehouse import Warehouse
from curation.gates.release_gates import population_stability_index, score_drift
from curation.ingest.inbox import find_batch, new_ready_batches, scan_inbox


def _batch(inbox: Path, name: str, n: int = 2) -> Path:
    path = inbox / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"{name}-{i}", "text": f"hello {i}"}) + "\n" for i in range(n)))
    return path


def _age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.utime(p, (past, past))


# -- inbox -------------------------------------------------------------------------------------
def test_scan_finds_files_and_folders_and_explains_skips(tmp_path):
    _batch(tmp_path, "acme-2026-11.jsonl")
    _batch(tmp_path, "folder_batch/part1.jsonl")
    _batch(tmp_path, ".hidden.jsonl")
    _batch(tmp_path, "_partial.jsonl")
    (tmp_path / "notes.txt").write_text("not a batch")
    _batch(tmp_path, "bad name!.jsonl")
    scan = scan_inbox(tmp_path)
    assert sorted(b.key for b in scan.batches) == ["acme-2026-11", "folder_batch"]
    assert any(s.startswith("notes.txt") for s in scan.skipped)
    assert any(s.startswith("bad name!.jsonl") for s in scan.skipped)
    assert find_batch(tmp_path, "folder_batch").path == tmp_path / "folder_batch"
    assert find_batch(tmp_path, "missing") is None


def test_duplicate_batch_key_is_skipped_not_merged(tmp_path):
    _batch(tmp_path, "b1.jsonl")
    _batch(tmp_path, "b1.csv")
    scan = scan_inbox(tmp_path)
    assert [b.key for b in scan.batches] == ["b1"]
    assert any("already comes from" in s for s in scan.skipped)


def test_batches_wait_until_settled_or_marked_ready(tmp_path):
    fresh = _batch(tmp_path, "fresh.jsonl")
    folder = tmp_path / "marked"
    _batch(folder, "a.jsonl")
    now = time.time()
    assert new_ready_batches(tmp_path, [], now, settle_seconds=60) == []
    (folder / "_READY").touch()
    assert [b.key for b in new_ready_batches(tmp_path, [], now, 60)] == ["marked"]
    _age(fresh, 120)
    assert sorted(b.key for b in new_ready_batches(tmp_path, [], now, 60)) == ["fresh", "marked"]
    assert [b.key for b in new_ready_batches(tmp_path, ["marked"], now, 60)] == ["fresh"]


def test_missing_inbox_is_empty(tmp_path):
    assert scan_inbox(tmp_path / "nope").batches == []


def test_ready_marker_is_not_ingested(tmp_path):
    from curation.ingest.readers import ingest

    folder = tmp_path / "b"
    _batch(folder, "a.jsonl", n=3)
    (folder / "_READY").touch()
    result = ingest(folder, batch_id="b")
    assert result.documents.height == 3 and result.quarantine.height == 0


# -- per-batch config --------------------------------------------------------------------------
def test_for_batch_maps_partition_to_inbox_entry(tmp_path):
    (tmp_path / "c.yaml").write_text("batch_id: main\ninput: corpus.jsonl\ninbox: drop\n")
    config = load_config(tmp_path / "c.yaml")
    assert config.for_batch("main") is config
    entry = _batch(tmp_path / "drop", "nov.jsonl")
    nov = config.for_batch("nov")
    assert nov.batch_id == "nov" and Path(nov.input) == entry.resolve()
    with pytest.raises(ConfigError, match=r"'dec'.*inbox"):
        config.for_batch("dec")


# -- sensor ------------------------------------------------------------------------------------
@pytest.fixture()
def inbox_project(tmp_path):
    (tmp_path / "curation.yaml").write_text("inbox: inbox\ninbox_settle_seconds: 0\n")
    return tmp_path


def _evaluate(instance, project: Path):
    from automation import inbox_sensor
    from resources import CurationSettings

    context = dg.build_sensor_context(
        instance=instance, resources={"settings": CurationSettings(config_path=str(project / "curation.yaml"))}
    )
    return inbox_sensor(context)


def _apply(instance, result) -> None:
    for request in result.dynamic_partitions_requests:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))


def test_sensor_adds_one_partition_and_run_per_new_batch(inbox_project):
    instance = dg.DagsterInstance.ephemeral()
    assert isinstance(_evaluate(instance, inbox_project), dg.SkipReason)

    _batch(inbox_project / "inbox", "b1.jsonl")
    _batch(inbox_project / "inbox", "b2/part.jsonl")
    first = _evaluate(instance, inbox_project)
    assert sorted(r.partition_key for r in first.run_requests) == ["b1", "b2"]
    assert [sorted(r.partition_keys) for r in first.dynamic_partitions_requests] == [["b1", "b2"]]
    assert len({r.run_key for r in first.run_requests}) == 2
    _apply(instance, first)

    again = _evaluate(instance, inbox_project)
    assert isinstance(again, dg.SkipReason), "already-seen batches must not be requested again"

    _batch(inbox_project / "inbox", "b3.jsonl")
    third = _evaluate(instance, inbox_project)
    assert [r.partition_key for r in third.run_requests] == ["b3"]
    _apply(instance, third)
    assert sorted(instance.get_dynamic_partitions("delivery_batch")) == ["b1", "b2", "b3"]


def test_sensor_and_schedule_target_real_jobs():
    from definitions import defs

    assert defs.resolve_sensor_def("inbox_sensor").job_name == "curation_job"
    schedule = defs.resolve_schedule_def("recalibration_schedule")
    job = defs.resolve_job_def(schedule.job_name)
    keys = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    calibration_group = {"validation_set", "validation_scores", "validation_detections", "pii_tagger"}
    assert keys == calibration_group | {"threshold_calibration"}


# -- drift -------------------------------------------------------------------------------------
def test_psi_zero_for_identical_and_large_for_shifted():
    a = np.array([10.0, 20.0, 30.0, 40.0])
    assert population_stability_index(a, a) == pytest.approx(0.0)
    assert population_stability_index(a, a * 3) == pytest.approx(0.0)  # scale-free
    shifted = np.array([40.0, 30.0, 20.0, 10.0])
    # hand-computed: sum (q - p) ln(q / p) with p = .1,.2,.3,.4 and q reversed = 2 * (.3 ln 4 + .1 ln 1.5)
    assert population_stability_index(a, shifted) == pytest.approx(2 * (0.3 * np.log(4) + 0.1 * np.log(1.5)))


def _scores(warehouse: Warehouse, sha: str, nll: np.ndarray) -> None:
    n = len(nll)
    warehouse.append(
        "token_scores",
        pl.DataFrame(
            {
                "model_key": ["m"] * n,
                "doc_sha256": [sha] * n,
                "token_idx": np.arange(n, dtype=np.int32),
                "char_start": np.arange(n, dtype=np.int32),
                "char_end": np.arange(1, n + 1, dtype=np.int32),
                "nll": nll.astype(np.float32),
            }
        ),
    )


def _doc(warehouse: Warehouse, batch: str, sha: str) -> None:
    warehouse.append(
        "documents",
        pl.DataFrame({"doc_id": [sha], "batch_id": [batch], "text": ["x"], "sha256": [sha], "n_chars": [1]}),
    )


def _calibrated(tmp_path, rng: np.random.Generator) -> Warehouse:
    """A warehouse whose calibration data has 4,000 token scores."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.append(
        "validation_docs",
        pl.DataFrame({"dataset": ["validation"], "doc_id": ["v"], "text": ["x"], "sha256": ["v"], "n_chars": [1]}),
    )
    _scores(warehouse, "v", rng.gamma(2.0, 1.5, 4000))
    return warehouse


def test_score_drift_flags_a_shifted_batch(tmp_path):
    rng = np.random.default_rng(0)
    warehouse = _calibrated(tmp_path, rng)
    _doc(warehouse, "similar", "s")
    _scores(warehouse, "s", rng.gamma(2.0, 1.5, 2000))
    _doc(warehouse, "shifted", "x")
    _scores(warehouse, "x", rng.gamma(2.0, 1.5, 2000) + 5.0)
    similar = score_drift(warehouse, CurationConfig(batch_id="similar"), "m")
    shifted = score_drift(warehouse, CurationConfig(batch_id="shifted"), "m")
    assert similar.passed and similar.detail["psi_vs_calibration"] < 0.1
    assert not shifted.passed and shifted.detail["psi_vs_calibration"] > 0.25
    assert shifted.detail["psi_vs_other_batches"] > 0.25  # the two batches differ from each other too
    empty = score_drift(warehouse, CurationConfig(batch_id="nothing"), "m")
    assert not empty.passed and "cannot be judged" in empty.detail["reason"]


def test_score_drift_is_not_judged_on_too_few_tokens(tmp_path):
    """A 1-document batch (121 tokens) drawn from the calibration distribution itself is not 'drifted':
    PSI over 33 bins is noise at that size, so the warning says drift was not judged, and why."""
    rng = np.random.default_rng(1)
    warehouse = _calibrated(tmp_path, rng)
    _doc(warehouse, "tiny", "t")
    _scores(warehouse, "t", rng.gamma(2.0, 1.5, 121))
    tiny = score_drift(warehouse, CurationConfig(batch_id="tiny"), "m")
    assert not tiny.passed and "psi_vs_calibration" not in tiny.detail
    assert "drift not judged: 121 tokens" in tiny.detail["reason"] and ">= 2000" in tiny.detail["reason"]
    assert tiny.detail["limit"] == ">= 2000 tokens"


def test_release_partition_names_every_gate_that_blocked_it_in_the_run(tmp_path):
    """The latest `release` observation (what the partition's panel shows) must list every failed blocking
    gate of the run with its reason, not just the last gate to fail; warnings and other runs do not count."""
    from curation.gates.release_gates import GateResult, record_gate, run_blocking_failures

    warehouse = Warehouse(tmp_path / "w.duckdb")
    record_gate(warehouse, "b", "d", GateResult("masked_fraction_budget", False, {"reason": "too much"}), "run-1")
    record_gate(warehouse, "b", "d", GateResult("score_drift", False, {"reason": "drifted"}), "run-1")
    record_gate(warehouse, "b", "d", GateResult("residual_leak_scan", False, {"reason": "2 values left"}), "run-1")
    record_gate(warehouse, "b", "d", GateResult("document_contract", True, {}), "run-1")
    record_gate(warehouse, "b", "d", GateResult("calibration_health", False, {"reason": "old"}), "run-0")
    record_gate(warehouse, "other", "d", GateResult("residual_leak_scan", False, {"reason": "x"}), "run-1")
    assert run_blocking_failures(warehouse, "b", "run-1") == {
        "masked_fraction_budget": "too much",
        "residual_leak_scan": "2 values left",
    }
