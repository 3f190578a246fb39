"""A batch's scoring split across shards merges to exactly the single-worker result (real model, real DuckDB)."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from curation.core.config import ConfigError, CurationConfig, ShardingConfig, load_config
from curation.core.warehouse import Warehouse, sha256_text
from curation.score import pending
from curation.score.scorer import ReferenceScorer, ScoringConfig
from curation.score.shards import merge_shards, plan_shards, score_shard, work_folder
from curation.tagger.model import HiddenStateCache
from tests.helpers import run_job

TEXTS = [
    "Hi, this is Maria Lopez; my card ending 4242 was charged twice on 3 March.",
    "def connect():\n    return psycopg.connect('postgresql://admin:s3cr3t@db.internal:5432/prod')\n",
    "Patient reviewed in clinic. Follow-up in two weeks with Dr. Okafor.",
    "The quarterly report is attached. Revenue grew modestly while costs stayed flat.",
    "agent: Could you confirm the email on file?\ncustomer: it's j.smith@example.org",
    "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Short.",
    " ".join(f"Line {i}: the committee approved item {i} after a short review." for i in range(40)),
]


def _warehouse_with_batch(root: Path, texts: list[str]) -> tuple[CurationConfig, Warehouse]:
    config = CurationConfig(base_dir=str(root), batch_id="b1")
    warehouse = Warehouse(config.warehouse_path)
    docs = pl.DataFrame(
        {
            "doc_id": [f"d{i}" for i in range(len(texts))],
            "batch_id": ["b1"] * len(texts),
            "kind": ["text"] * len(texts),
            "text": texts,
            "sha256": [sha256_text(t) for t in texts],
            "n_chars": [len(t) for t in texts],
        }
    )
    warehouse.replace("documents", docs, "batch_id = ?", ["b1"])
    return config, warehouse


def _token_rows(warehouse: Warehouse) -> list[tuple]:
    with warehouse.connect(read_only=True) as con:
        return con.execute(
            "SELECT model_key, doc_sha256, token_idx, char_start, char_end, nll FROM token_scores "
            "ORDER BY doc_sha256, token_idx"
        ).fetchall()


@pytest.fixture(scope="module")
def small_batch_scorer() -> ReferenceScorer:
    scorer = ReferenceScorer(ScoringConfig(max_length=48, min_context=16, batch_tokens=192))
    scorer.load()
    return scorer


def test_shards_merge_to_the_single_worker_result(small_batch_scorer, tmp_path, monkeypatch):
    """Three shards scored out of order merge to the same rows, bytes and hidden states as one worker; the
    private work folder is 0700 with 0600 files while it exists, and is gone after the merge."""
    monkeypatch.setattr(pending, "SCORE_BATCH_DOCS", 3)  # 8 texts -> 3 chunks -> 3 shards
    key = small_batch_scorer.model_key
    single_config, single = _warehouse_with_batch(tmp_path / "single", TEXTS)
    single_cache = HiddenStateCache(tmp_path / "cache-single", key)
    items = pending.texts_to_score(single_config, single)
    pairs = list(zip(items["sha256"], items["text"], strict=True))
    pending.score_missing(single, small_batch_scorer, pairs, None, single_cache)

    config, sharded = _warehouse_with_batch(tmp_path / "sharded", TEXTS)
    cache = HiddenStateCache(tmp_path / "cache-sharded", key)
    folder = work_folder(config, "run-1")
    plans, counts = plan_shards(config, sharded, key, folder, workers=4, hidden_cache=cache)
    assert [p.n_chunks for p in plans] == [1, 1, 1] and sum(p.n_texts for p in plans) == len(TEXTS)
    assert counts == {"texts": len(TEXTS), "texts_scored": len(TEXTS), "texts_cached": 0}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    results = [score_shard(plan, small_batch_scorer, cache) for plan in reversed(plans)]
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    assert merge_shards(sharded, key, results, folder) == len(_token_rows(single))
    assert not folder.exists()

    assert _token_rows(sharded) == _token_rows(single)
    for sha in items["sha256"]:
        assert np.array_equal(cache.get(sha), single_cache.get(sha))

    # Nothing left to score: one empty shard, merged as zero rows (the merge step always runs).
    again, counts = plan_shards(config, sharded, key, work_folder(config, "run-2"), workers=4, hidden_cache=cache)
    assert len(again) == 1 and again[0].n_texts == 0 and counts["texts_cached"] == len(TEXTS)
    result = score_shard(again[0], small_batch_scorer, cache)
    assert result["model_calls"] == 0
    assert merge_shards(sharded, key, [result], Path(again[0].scores_path).parent) == 0


def test_workers_must_be_positive(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("sharding:\n  workers: 0\n")
    with pytest.raises(ConfigError, match=r"sharding\.workers"):
        load_config(path)
    assert ShardingConfig().workers == 1


def _batch_facts(root: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(root / ".curation" / "warehouse.duckdb"), read_only=True)
    try:
        return {
            "token_scores": con.execute(
                "SELECT doc_sha256, token_idx, char_start, char_end, nll FROM token_scores "
                "WHERE doc_sha256 IN (SELECT sha256 FROM documents WHERE batch_id = 'tiny') ORDER BY ALL"
            ).fetchall(),
            "detector_spans": con.execute(
                "SELECT doc_id, \"start\", \"end\", label, score, source FROM detector_spans "
                "WHERE batch_id = 'tiny' ORDER BY ALL"
            ).fetchall(),
            "mask_spans": con.execute(
                "SELECT doc_id, \"start\", \"end\", label, source FROM mask_spans WHERE batch_id = 'tiny' ORDER BY ALL"
            ).fetchall(),
            "surrogate_view": con.execute(
                "SELECT doc_id, text FROM surrogate_view WHERE batch_id = 'tiny' ORDER BY ALL"
            ).fetchall(),
        }
    finally:
        con.close()


@pytest.mark.heavy
def test_three_workers_match_one_worker_end_to_end(scored_copy, tmp_path, monkeypatch):
    """The whole job on one worker and on three shards (in-process executor, same model chunks): the same
    token scores, detector and tagger spans, mask spans and surrogate texts."""
    monkeypatch.setattr(pending, "SCORE_BATCH_DOCS", 2)  # every 2 texts one model call: >= 3 chunks for 3 shards
    facts, metadata = {}, {}
    for workers in (1, 3):
        root = tmp_path / f"workers-{workers}"
        shutil.copytree(scored_copy, root)
        config_file = root / "curation.yaml"
        config_file.write_text(config_file.read_text() + f"sharding:\n  workers: {workers}\n")
        con = duckdb.connect(str(root / ".curation" / "warehouse.duckdb"))
        con.execute(
            "DELETE FROM token_scores WHERE doc_sha256 IN (SELECT sha256 FROM documents WHERE batch_id = 'tiny')"
        )
        con.close()
        result = run_job(config_file, base_dir=str(root))
        assert result.success
        metadata[workers] = next(
            e.event_specific_data.materialization.metadata
            for e in result.all_events
            if e.event_type_value == "ASSET_MATERIALIZATION"
            and e.event_specific_data.materialization.asset_key.to_user_string() == "reference_scores"
        )
        facts[workers] = _batch_facts(root)
        assert not any((root / ".curation" / "shards").iterdir())  # merged: no private shard files left
    assert metadata[1]["shards"].value == 1 and metadata[3]["shards"].value == 3
    assert metadata[1]["texts_scored"].value == metadata[3]["texts_scored"].value >= 6
    assert all(facts[1][table] for table in facts[1]), {t: len(v) for t, v in facts[1].items()}
    for table in facts[1]:
        assert facts[3][table] == facts[1][table], table
    assert json.dumps(facts[3]["token_scores"]) == json.dumps(facts[1]["token_scores"])
