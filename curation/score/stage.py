"""Reference scoring: per-token surprise of every text not yet cached for the model key (``token_scores``),
streamed in bounded chunks, and the window scores built on it (``window_scores``)."""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np
import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import (
    CALIBRATION_BATCH,
    CORPUS,
    VALIDATION,
    Warehouse,
    load_token_scores,
    record_summary,
)
from curation.score.pending import (
    current_tagger_key,
    hidden_cache_for,
    score_missing,
    texts_to_score,
)
from curation.score.scorer import ReferenceScorer
from curation.score.windows import WindowSpec, build_windows


def augmented_texts(config: CurationConfig, warehouse: Warehouse) -> list[tuple[str, str]]:
    """(sha256, text) of the labeled texts' mention-swap variants the tagger will train on (none when
    ``tagger.augment_variants`` is 0): scored in the validation pass so training needs no model."""
    if not config.tagger.enabled or config.tagger.augment_variants <= 0:
        return []
    from curation.core.warehouse import LABELED, sha256_text
    from curation.tagger.store import augment_config, labeled_variants

    variants = labeled_variants(warehouse, (VALIDATION, LABELED), augment_config(config))
    return list({sha256_text(v.text): v.text for _, v in variants}.items())


def score_stage(
    config: CurationConfig, warehouse: Warehouse, scorer: ReferenceScorer, progress=None, dataset: str = CORPUS
) -> dict:
    """Score every text of the batch (or of the validation set) not yet cached for this model key,
    streaming bounded batches into DuckDB; the same pass caches hidden states for the tagger."""
    model_key = scorer.model_key
    wanted = texts_to_score(config, warehouse, dataset)
    variants = augmented_texts(config, warehouse) if dataset == VALIDATION else []
    calls_before, tokens_before = scorer.stats.model_calls, scorer.stats.tokens_scored
    started = time.perf_counter()
    engine_summary: dict = {}
    cache = hidden_cache_for(config, model_key)
    n_scored = score_missing(
        warehouse,
        scorer,
        list(zip(wanted["sha256"], wanted["text"], strict=True)) + variants,
        progress,
        cache,
        engine=config.engine,
        engine_summary=engine_summary,
        tagger_key=current_tagger_key(config, warehouse) if dataset == CORPUS else None,
    )
    pruned = None
    if cache is not None and dataset == VALIDATION:
        keep = set(wanted["sha256"].to_list()) | {sha for sha, _ in variants}
        limits = config.tagger.hidden_cache_max_mb * 2**20, config.tagger.hidden_cache_max_days * 86400
        pruned = cache.prune(keep, *limits)
    elapsed = time.perf_counter() - started
    tokens = scorer.stats.tokens_scored - tokens_before
    summary = {
        "model_key": model_key,
        **scorer.description,
        "texts": wanted.height,
        **({"augmented_texts": len(variants)} if variants else {}),
        "texts_scored": n_scored,
        "texts_cached": wanted.height - n_scored,
        "model_calls": scorer.stats.model_calls - calls_before,
        "tokens_scored": tokens,
        "tokens_per_s": round(tokens / elapsed, 1) if elapsed > 0 and tokens else None,
        "model_load_s": round(scorer.stats.load_seconds, 2),
        "engine": config.engine.kind,
        **engine_summary,
        **({"hidden_states_pruned": pruned, "hidden_state_bytes": cache.bytes()} if pruned is not None else {}),
    }
    if config.engine.kind == "ray":  # the model ran on the cluster: count tokens from the stored rows
        summary["tokens_scored"] = engine_summary.get("tokens_scored")
    if dataset == CORPUS:
        record_summary(warehouse, config.batch_id, "reference_scores", summary)
    else:
        record_summary(warehouse, CALIBRATION_BATCH, "validation_scores", summary)
    return summary


def window_stage(config: CurationConfig, warehouse: Warehouse, model_key: str, specs: Iterable[WindowSpec]) -> dict:
    """Window scores of the batch's documents (facts for browsing lineage and drift checks)."""
    docs = warehouse.query("SELECT DISTINCT sha256, text FROM documents WHERE batch_id = ?", [config.batch_id])
    scores = load_token_scores(warehouse, model_key, docs["sha256"].to_list())
    frames, summary = [], {}
    for spec in specs:
        all_scores = []
        for sha, text in docs.iter_rows():
            windows = build_windows(scores[sha], spec, text)
            n = len(windows)
            all_scores.append(windows.score)
            frames.append(
                pl.DataFrame(
                    {
                        "model_key": [model_key] * n,
                        "doc_sha256": [sha] * n,
                        "spec": [spec.name] * n,
                        "window_idx": np.arange(n, dtype=np.int32),
                        "tok_start": windows.tok_start.astype(np.int32),
                        "tok_end": windows.tok_end.astype(np.int32),
                        "score": windows.score,
                        "valid": windows.valid,
                    }
                )
            )
        flat = np.concatenate(all_scores) if all_scores else np.zeros(0)
        finite = flat[np.isfinite(flat)]
        summary[spec.name] = {
            "windows": int(flat.size),
            "invalid": int(flat.size - finite.size),
            "mean": round(float(finite.mean()), 4) if finite.size else None,
            "p95": round(float(np.quantile(finite, 0.95)), 4) if finite.size else None,
        }
    frame = pl.concat(frames) if frames else pl.DataFrame()
    shas = docs["sha256"].to_list()
    with warehouse.connect() as con:
        con.register("_shas", pl.DataFrame({"sha": shas}, schema={"sha": pl.String}).to_arrow())
        con.execute(
            "DELETE FROM window_scores WHERE model_key = ? AND doc_sha256 IN (SELECT sha FROM _shas)", [model_key]
        )
    warehouse.append("window_scores", frame)
    return summary
