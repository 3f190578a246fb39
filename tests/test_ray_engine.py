"""The model pass on a real 2-node Ray cluster started on this machine (`ray start --head` + a worker node
with its own resource tag): the same rows as the local path, bit for bit, and a run that survives its worker
node being killed mid-scoring. The cluster's processes are stopped by pid at the end, even on failure."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import duckdb
import pytest

from benchmarks.ray_cluster import kill, two_node_cluster
from tests.helpers import run_job, write_project

pytestmark = [pytest.mark.heavy, pytest.mark.slow]


@pytest.fixture()
def ray_cluster():
    """A head node and a worker node (resource `worker_node`), 1 CPU each; yields (address, worker pids)."""
    with two_node_cluster() as cluster:
        yield cluster


def _project(root: Path, engine: str = "") -> Path:
    return write_project(root, batch_id="raytest", per_kind=6, extra_config=engine)


def _engine(address: str) -> str:
    return f"engine:\n  kind: ray\n  address: '{address}'\n  actors: 2\n  num_cpus: 1\n  chunk_docs: 3\n"


def _facts(config_file: Path) -> dict[str, list]:
    con = duckdb.connect(str(config_file.parent / ".curation" / "warehouse.duckdb"), read_only=True)
    try:
        return {
            "token_scores": con.execute(
                "SELECT model_key, doc_sha256, token_idx, char_start, char_end, nll FROM token_scores ORDER BY ALL"
            ).fetchall(),
            "token_tags": con.execute("SELECT * FROM token_tags ORDER BY ALL").fetchall(),
            "detector_spans": con.execute(
                'SELECT dataset, doc_id, "start", "end", label, source FROM detector_spans ORDER BY ALL'
            ).fetchall(),
            "mask_spans": con.execute(
                'SELECT doc_id, "start", "end", label, source FROM mask_spans ORDER BY ALL'
            ).fetchall(),
            "surrogate_view": con.execute("SELECT doc_id, text FROM surrogate_view ORDER BY ALL").fetchall(),
            "redacted_view": con.execute("SELECT doc_id, text FROM redacted_view ORDER BY ALL").fetchall(),
        }
    finally:
        con.close()


def _labeled_shas(config_file: Path) -> set[str]:
    con = duckdb.connect(str(config_file.parent / ".curation" / "warehouse.duckdb"), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT sha256 FROM validation_docs").fetchall()}
    finally:
        con.close()


def _summary(config_file: Path, stage: str) -> dict:
    con = duckdb.connect(str(config_file.parent / ".curation" / "warehouse.duckdb"), read_only=True)
    try:
        (summary,) = con.execute(
            "SELECT summary FROM stage_summaries WHERE stage = ? ORDER BY created_at DESC LIMIT 1", [stage]
        ).fetchone()
    finally:
        con.close()
    return json.loads(summary)


def _materialized(result) -> set[str]:
    return {
        e.event_specific_data.materialization.asset_key.to_user_string()
        for e in result.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION"
    }


def test_ray_engine_equals_the_local_path_and_survives_a_killed_worker_node(ray_cluster, tmp_path, monkeypatch):
    address, worker_pids = ray_cluster
    monkeypatch.setenv("CURATION_CACHE_DIR", str(tmp_path / "cache"))  # no hidden states from other runs
    monkeypatch.setenv("CURATION_HMAC_KEY", "ab" * 32)  # one delivery key: the surrogates can be compared
    local = _project(tmp_path / "local")
    assert "release" in _materialized(run_job(local))
    expected = _facts(local)
    assert expected["token_scores"] and expected["mask_spans"]

    on_ray = _project(tmp_path / "ray", _engine(address))
    shutil.rmtree(tmp_path / "cache")
    result = run_job(on_ray)
    assert "release" in _materialized(result)
    summary = _summary(on_ray, "reference_scores")
    assert summary["shards"] == 1 and summary["tokens_scored"] > 0
    assert _facts(on_ray) == expected  # token scores, tags, detector spans, masks and both views, to the bit
    assert _summary(on_ray, "tagger_spans")["texts_tagged_now"] == 0  # the head ran in the actors' pass
    assert not list((on_ray.parent / ".curation" / "hidden").rglob("*.npy")) or all(
        p.stem in _labeled_shas(on_ray) for p in (on_ray.parent / ".curation" / "hidden").rglob("*.npy")
    )  # no hidden state of the batch came back from the cluster

    # A worker node killed while the batch is scoring: its actor's chunk goes to the head node's actor.
    killed = _project(tmp_path / "killed", _engine(address))
    shutil.rmtree(tmp_path / "cache")
    done = threading.Event()

    def kill_when_scoring() -> None:
        """Once both actors are up and scoring, kill the worker node: its raylet, helpers and actor."""
        import psutil

        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not done.is_set():
            titles = [" ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])]
            actors = [t for t in titles if "ScoringActor" in t]
            # both up (models loaded in their constructors) and chunks being scored
            if len(actors) >= 2 and any("ScoringActor.score" in t for t in actors):
                time.sleep(2.0)
                doomed = set(worker_pids)
                for pid in worker_pids:
                    try:
                        doomed |= {c.pid for c in psutil.Process(pid).children(recursive=True)}
                    except psutil.NoSuchProcess:
                        pass
                kill(doomed)
                killed_at.append(time.monotonic())
                return
            time.sleep(0.2)

    killed_at: list[float] = []
    killer = threading.Thread(target=kill_when_scoring, daemon=True)
    killer.start()
    result = run_job(killed)
    done.set()
    killer.join(timeout=5)
    assert killed_at, "the worker node was never killed: no two scoring actors were seen"
    assert "release" in _materialized(result)
    assert _facts(killed) == expected


def _kept_actors(address: str) -> int:
    """How many kept scoring actors are up on the cluster, asked from a process of its own."""
    import subprocess
    import sys

    code = (
        f"import ray; ray.init(address={address!r}, log_to_driver=False, configure_logging=False); "
        "print(sum(a['name'].startswith('curation-scorer-') for a in ray.util.list_named_actors(all_namespaces=True)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def test_kept_actors_score_the_next_batch_identically_and_exit_when_idle(ray_cluster, tmp_path, monkeypatch):
    address, _ = ray_cluster
    monkeypatch.setenv("CURATION_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CURATION_HMAC_KEY", "ab" * 32)
    # longer than a run's gap between its two scoring steps (the tagger trains in between), even on a busy machine
    engine = _engine(address) + "  keep_actors_s: 900\n"
    first = _project(tmp_path / "first", engine)
    assert "release" in _materialized(run_job(first))
    assert _summary(first, "validation_scores")["actors_reused"] == 0  # the run's first scoring step starts them
    assert _summary(first, "reference_scores")["ray_actors_reused"] == 2  # its second finds them up
    assert _kept_actors(address) == 2  # still up after the run

    second = _project(tmp_path / "second", engine)
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
    assert "release" in _materialized(run_job(second))
    summary = _summary(second, "reference_scores")
    assert summary["ray_actors_reused"] == 2 and summary["ray_actors"] == 2
    assert summary["ray_actor_model_load_seconds"] > 0  # the load the first run paid, reported again
    facts = _facts(second)
    assert facts["token_scores"] and facts == _facts(first)

    # An actor kept for 5 idle seconds exits by itself (another shape, so its own pool: no CPU of its own,
    # since the two kept actors hold both of the cluster's).
    from curation.core.config import EngineConfig
    from curation.score.executor import score_on_ray
    from curation.score.scorer import ScoringConfig

    short = EngineConfig(kind="ray", address=address, actors=1, num_cpus=0, keep_actors_s=5)
    rows = []
    score_on_ray(short, ScoringConfig(), [[("a" * 64, "Call Dana at 555-0100.", True)]], lambda t, _: rows.append(t))
    assert rows and rows[0].num_rows > 0
    assert _kept_actors(address) == 3
    deadline = time.monotonic() + 120
    while _kept_actors(address) > 2 and time.monotonic() < deadline:
        time.sleep(2)
    assert _kept_actors(address) == 2, "the actor kept for 5 idle seconds did not exit"
