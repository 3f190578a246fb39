"""A batch's scoring split across workers: plan shards, score each shard to Parquet, merge with one writer.

The planner (one step, reads DuckDB) cuts the texts still to score into the same model-call chunks the
single-worker path uses (`stages.scoring.scoring_chunks`: scores depend on which texts share a padded batch) and
deals whole chunks to shards, writing each shard's texts as a Parquet file in a private work folder. A
shard step (any process, any machine that sees the folder) scores its chunks and writes their token scores
as Parquet; hidden states go to the per-text hidden-state cache as in the single-worker path. One merge step
inserts every shard's rows into DuckDB in one transaction (DuckDB has one writer) and deletes the folder.
Shards never open the warehouse, so they can run as Kubernetes pods or Dagster Pipes sessions on GPU nodes.

Shard files hold private text and its token scores: folders 0700, files 0600, deleted after the merge;
folders of runs that ended without a merge are removed by the next plan of any batch.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl

from curation.core.config import CurationConfig
from curation.core.private import private_dir, private_file
from curation.core.warehouse import Warehouse
from curation.score.scorer import ReferenceScorer

SHARDS_DIR = "shards"  # under the warehouse's private state folder


@dataclass(frozen=True)
class ShardPlan:
    """One shard of a batch's scoring: its input (texts) and output (token scores) files."""

    shard: int
    n_shards: int
    texts_path: str
    scores_path: str
    n_texts: int
    n_chunks: int
    n_chars: int

    def to_dict(self) -> dict:
        return asdict(self)


def work_folder(config: CurationConfig, run_id: str) -> Path:
    """The run's private shard folder (next to the warehouse, in its 0700 state folder)."""
    root = private_dir(config.warehouse_path.parent / SHARDS_DIR)
    return private_dir(root / run_id)


def remove_stale_folders(config: CurationConfig, is_finished: Callable[[str], bool]) -> int:
    """Delete the shard folders of runs that ended without merging (a failed or killed run)."""
    root = config.warehouse_path.parent / SHARDS_DIR
    removed = 0
    if root.is_dir():
        for folder in root.iterdir():
            if folder.is_dir() and is_finished(folder.name):
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
    return removed


def plan_shards(
    config: CurationConfig, warehouse: Warehouse, model_key: str, folder: Path, workers: int, hidden_cache=None
) -> tuple[list[ShardPlan], dict]:
    """Deal the batch's pending scoring chunks to at most ``workers`` shards (at least one, maybe empty, so
    the merge always runs), largest chunk first onto the lightest shard; returns the plans and counts."""
    from curation.score.pending import current_tagger_key, pending_texts, scoring_chunks, texts_to_score

    wanted = texts_to_score(config, warehouse)
    items = list(zip(wanted["sha256"], wanted["text"], strict=True))
    todo = pending_texts(warehouse, model_key, items, hidden_cache, current_tagger_key(config, warehouse))
    chunks = scoring_chunks(todo)
    n_shards = max(1, min(workers, len(chunks)))
    loads = [0] * n_shards
    dealt: list[list[int]] = [[] for _ in range(n_shards)]
    sizes = [sum(len(text) for _, text, _ in chunk) for chunk in chunks]
    for index in sorted(range(len(chunks)), key=lambda i: (-sizes[i], i)):
        target = min(range(n_shards), key=lambda s: (loads[s], s))
        dealt[target].append(index)
        loads[target] += sizes[index]
    plans = []
    for shard, indices in enumerate(dealt):
        rows = [(i, sha, text, needs) for i in sorted(indices) for sha, text, needs in chunks[i]]
        frame = pl.DataFrame(
            rows,
            schema={"chunk": pl.Int32, "sha256": pl.String, "text": pl.String, "needs_scores": pl.Boolean},
            orient="row",
        )
        texts_path = folder / f"texts-{shard:04d}.parquet"
        _write_private(frame, texts_path)
        plans.append(
            ShardPlan(
                shard,
                n_shards,
                str(texts_path),
                str(folder / f"scores-{shard:04d}.parquet"),
                len(rows),
                len(indices),
                loads[shard],
            )
        )
    counts = {"texts": wanted.height, "texts_scored": len(todo), "texts_cached": wanted.height - len(todo)}
    return plans, counts


def score_shard(plan: ShardPlan, scorer: ReferenceScorer, hidden_cache=None, progress=None) -> dict:
    """Score one shard's chunks (each one model call of the single-worker path) into its Parquet file;
    returns its counters."""
    import pyarrow.parquet as pq

    from curation.core.warehouse import token_scores_frame
    from curation.score.pending import ScoringProgress, score_chunk

    started = time.perf_counter()
    texts = pl.read_parquet(plan.texts_path)
    calls, tokens = scorer.stats.model_calls, scorer.stats.tokens_scored
    chunks = [
        list(zip(part["sha256"], part["text"], part["needs_scores"], strict=True))
        for _, part in texts.group_by("chunk", maintain_order=True)
    ]
    meter = ScoringProgress(scorer, texts["text"].to_list(), progress) if progress and texts.height else None
    schema = token_scores_frame(scorer.model_key, [], []).to_arrow().schema
    tmp = Path(f"{plan.scores_path}.{os.getpid()}.tmp")
    offset = 0
    with pq.ParquetWriter(tmp, schema) as writer:
        private_file(tmp)
        for chunk in chunks:
            frame = score_chunk(scorer, chunk, hidden_cache, meter.chunk(offset) if meter else None)
            offset += len(chunk)
            if frame.height:
                writer.write_table(frame.to_arrow().cast(schema))
    os.replace(tmp, plan.scores_path)
    private_file(Path(plan.scores_path))
    return {
        "shard": plan.shard,
        "scores_path": plan.scores_path,
        "texts": plan.n_texts,
        "model_calls": scorer.stats.model_calls - calls,
        "tokens_scored": scorer.stats.tokens_scored - tokens,
        "seconds": round(time.perf_counter() - started, 3),
        "model_load_s": round(scorer.stats.load_seconds, 2),
    }


def score_shard_on_ray(
    plan: ShardPlan,
    scorer: ReferenceScorer,
    engine,
    warehouse: Warehouse,
    hidden_cache=None,
    progress=None,
    tagger=None,
) -> dict:
    """The shard's chunks scored by model actors on a Ray cluster (``curation.score.executor``); this step is the
    one writer: each chunk's rows go into DuckDB as they come back (so a rerun after a lost cluster scores
    only what never came back), and the shard's output file is left empty for the merge. With the current
    ``tagger`` the head runs in the actors' pass: their tag probabilities are stored, no hidden state
    leaves an actor."""
    from curation.core.warehouse import token_scores_frame
    from curation.score.executor import EngineError, score_on_ray

    started = time.perf_counter()
    texts = pl.read_parquet(plan.texts_path)
    chunks = [
        list(zip(part["sha256"], part["text"], part["needs_scores"], strict=True))
        for _, part in texts.group_by("chunk", maintain_order=True)
    ]
    model_key = scorer.model_key
    rows = [0]

    def write(table, extras: dict) -> None:
        frame = pl.from_arrow(table)
        if frame.height:
            keys = set(frame["model_key"].unique().to_list())
            if keys != {model_key}:
                raise EngineError(
                    f"a Ray actor scored under model key {sorted(keys)}, this step under {model_key}: the nodes "
                    "resolve another dtype or device; set scoring.dtype and scoring.device explicitly"
                )
            with warehouse.transaction() as con:
                con.register("_chunk", frame.to_arrow())
                con.execute(
                    "INSERT INTO token_scores (model_key, doc_sha256, token_idx, char_start, char_end, nll) "
                    "SELECT model_key, doc_sha256, token_idx, char_start, char_end, nll FROM _chunk WHERE doc_sha256 "
                    "NOT IN (SELECT DISTINCT doc_sha256 FROM token_scores WHERE model_key = ?) "
                    "ORDER BY doc_sha256, token_idx",
                    [model_key],
                )
        rows[0] += frame.height
        if extras.get("probs"):
            from curation.tagger.store import write_token_tags

            write_token_tags(warehouse, tagger.key, extras["probs"])
        if hidden_cache is not None:
            for sha, states in extras.get("hidden", []):
                hidden_cache.put(sha, states)

    in_pass = tagger if hidden_cache is not None else None
    summary = score_on_ray(engine, scorer.config, chunks, write, hidden_cache is not None, progress, in_pass)
    _write_private(token_scores_frame(model_key, [], []), Path(plan.scores_path))
    seconds = time.perf_counter() - started
    return {
        "shard": plan.shard,
        "scores_path": plan.scores_path,
        "texts": plan.n_texts,
        "model_calls": 0,
        "tokens_scored": rows[0],
        "seconds": round(seconds, 3),
        "model_load_s": 0.0,
        **{f"ray_{k}": v for k, v in summary.items() if k != "engine"},
    }


def merge_shards(warehouse: Warehouse, model_key: str, shard_results: list[dict], folder: Path | None) -> int:
    """Insert every shard's token scores in one transaction (rows a concurrent run already stored for the
    same text are skipped), in the order the single-worker path writes them; then delete the work folder."""
    paths = [r["scores_path"] for r in sorted(shard_results, key=lambda r: r["shard"])]
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise RuntimeError(f"shard output missing: {missing}; re-run reference_scores for the batch")
    with warehouse.transaction() as con:
        (before,) = con.execute("SELECT count(*) FROM token_scores").fetchone()
        con.execute(
            "INSERT INTO token_scores (model_key, doc_sha256, token_idx, char_start, char_end, nll) "
            "SELECT s.model_key, s.doc_sha256, s.token_idx, s.char_start, s.char_end, s.nll "
            "FROM read_parquet(?) s WHERE s.model_key = ? AND s.doc_sha256 NOT IN "
            "(SELECT DISTINCT doc_sha256 FROM token_scores WHERE model_key = ?) "
            "ORDER BY s.doc_sha256, s.token_idx",
            [paths, model_key, model_key],
        )
        (after,) = con.execute("SELECT count(*) FROM token_scores").fetchone()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    return int(after - before)


def _write_private(frame: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.touch(mode=0o600)
    private_file(tmp)
    frame.write_parquet(tmp)
    os.replace(tmp, path)
    private_file(path)
