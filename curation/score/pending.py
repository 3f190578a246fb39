"""What the reference model still has to score for a model key, and scoring it in the chunks every
engine cuts the same way (one worker, shards or Ray), so scores never depend on how the work is split."""

from __future__ import annotations

import time
from collections.abc import Sequence

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import (
    CALIBRATION_BATCH,
    CORPUS,
    VALIDATION,
    Warehouse,
    cached_shas,
    token_scores_frame,
)
from curation.score.scorer import ReferenceScorer

SCORE_BATCH_DOCS = 64
PROGRESS_EVERY_S = 10.0  # scoring progress lines at most this often


def texts_to_score(config: CurationConfig, warehouse: Warehouse, dataset: str = CORPUS) -> pl.DataFrame:
    """Distinct (sha256, text) of the batch's documents (CORPUS) or of the validation set (VALIDATION)."""
    if dataset == VALIDATION:
        sql, params = "SELECT sha256, text, n_chars FROM validation_docs", []
    else:
        sql, params = "SELECT sha256, text, n_chars FROM documents WHERE batch_id = ?", [config.batch_id]
    return warehouse.query(
        f"SELECT sha256, any_value(text) AS text, any_value(n_chars) AS n_chars FROM ({sql}) "
        "GROUP BY sha256 ORDER BY sha256",
        params,
    )


def hidden_cache_for(config: CurationConfig, model_key: str):
    """Where the scoring pass leaves each token's hidden state for the tagger (None: tagger off): in the
    warehouse's private state folder (0700, files 0600), never in a shared cache: hidden states can be
    inverted back to text. Corpus texts' states are deleted once tagged; the labeled sets' stay (to retrain
    the head) within `tagger.hidden_cache_max_mb` and `tagger.hidden_cache_max_days`."""
    if not config.tagger.enabled:
        return None
    from curation.core.private import private_dir
    from curation.tagger.model import HiddenStateCache

    return HiddenStateCache(private_dir(config.warehouse_path.parent), model_key)


def current_tagger_key(config: CurationConfig, warehouse: Warehouse) -> str | None:
    """The key of the head the last pii_tagger trained (None: none yet, or the tagger is off)."""
    from curation.core.warehouse import stage_summary

    if not config.tagger.enabled:
        return None
    return stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger").get("tagger_key")


def score_missing(
    warehouse: Warehouse,
    scorer: ReferenceScorer,
    items: Sequence[tuple[str, str]],
    progress=None,
    hidden_cache=None,
    engine=None,
    engine_summary: dict | None = None,
    tagger_key: str | None = None,
) -> int:
    """Score the (sha256, text) pairs not yet cached for the scorer's model key, in bounded batches
    written to DuckDB as they finish; returns how many texts were scored.

    With a ``hidden_cache`` (curation.tagger.model.HiddenStateCache) the same forward pass also stores each
    token's last hidden state, the tagger's input; texts with scores but no states are run once more.
    With ``engine.kind: ray`` the chunks are scored by model actors on the cluster (``curation.score.executor``)
    and written here as they come back, so a rerun after a lost cluster scores only what never came back.
    Texts the head ``tagger_key`` has tagged already need no hidden states (they are not re-run for them).
    """
    model_key = scorer.model_key
    todo = pending_texts(warehouse, model_key, items, hidden_cache, tagger_key)
    if engine is not None and engine.kind == "ray":
        return _score_missing_on_ray(warehouse, scorer, todo, progress, hidden_cache, engine, engine_summary)
    meter = ScoringProgress(scorer, [text for _, text, _ in todo], progress) if progress and todo else None
    for offset, chunk in zip(range(0, len(todo), SCORE_BATCH_DOCS), scoring_chunks(todo), strict=True):
        frame = score_chunk(scorer, chunk, hidden_cache, meter.chunk(offset) if meter else None)
        if frame.height:
            warehouse.append("token_scores", frame)
        if progress:
            progress(f"scored {min(offset + SCORE_BATCH_DOCS, len(todo))}/{len(todo)} texts")
    return len(todo)


def _score_missing_on_ray(warehouse, scorer, todo, progress, hidden_cache, engine, engine_summary) -> int:
    import pyarrow as pa

    from curation.score.executor import score_on_ray

    tokens = [0]

    def write(table: pa.Table, extras: dict) -> None:
        frame = pl.from_arrow(table)
        if frame.height:
            warehouse.append("token_scores", frame)
        tokens[0] += frame.height
        if hidden_cache is not None:
            for sha, states in extras.get("hidden", []):
                hidden_cache.put(sha, states)

    summary = score_on_ray(
        engine, scorer.config, scoring_chunks(todo), write, with_hidden=hidden_cache is not None, progress=progress
    )
    if engine_summary is not None:
        engine_summary.update({**summary, "tokens_scored": tokens[0]})
    return len(todo)


def pending_texts(
    warehouse: Warehouse,
    model_key: str,
    items: Sequence[tuple[str, str]],
    hidden_cache=None,
    tagger_key: str | None = None,
) -> list[tuple[str, str, bool]]:
    """(sha256, text, needs_scores) of the texts to run through the model, sorted by sha256: texts without
    token scores for ``model_key``, and (with a hidden-state cache) texts whose states are missing and
    that the head ``tagger_key`` has not tagged yet."""
    from curation.tagger.store import tagged_shas

    done = cached_shas(warehouse, model_key)
    tagged = tagged_shas(warehouse, tagger_key) if hidden_cache is not None else set()
    return sorted(
        {
            (sha, text, sha not in done)
            for sha, text in items
            if sha not in done or (hidden_cache is not None and sha not in tagged and not hidden_cache.has(sha))
        }
    )


def scoring_chunks(todo: Sequence[tuple[str, str, bool]]) -> list[list[tuple[str, str, bool]]]:
    """The texts of one ``score_texts`` call each (SCORE_BATCH_DOCS at a time, in order): bounded memory
    per call. Scores do not depend on the cut (every model call's shape is fixed by its own chunks of
    text), but every path, one worker, shards or Ray, cuts these same chunks anyway."""
    return [list(todo[i : i + SCORE_BATCH_DOCS]) for i in range(0, len(todo), SCORE_BATCH_DOCS)]


def score_chunk(scorer: ReferenceScorer, chunk: Sequence[tuple[str, str, bool]], hidden_cache=None, progress=None):
    """Score one chunk: its new token scores as a frame (texts that need them), hidden states into the cache."""
    scored = scorer.score_texts([text for _, text, _ in chunk], progress=progress, with_hidden=hidden_cache is not None)
    new = [(sha, s) for (sha, _, needs_scores), s in zip(chunk, scored, strict=True) if needs_scores]
    if hidden_cache is not None:
        for (sha, _, _), s in zip(chunk, scored, strict=True):
            hidden_cache.put(sha, s.hidden)
    return token_scores_frame(scorer.model_key, [sha for sha, _ in new], [s for _, s in new])


class ScoringProgress:
    """Tokens scored / total across the whole stage, reported at most every PROGRESS_EVERY_S seconds, so a
    long stage, even one very long record, is never silent."""

    def __init__(self, scorer: ReferenceScorer, texts: Sequence[str], report) -> None:
        passes = 2 if scorer.config.contrast_prompt else 1
        self.total = passes * sum(len(scorer.tokenize(text)[0]) for text in texts)
        self.n_texts = len(texts)
        self.report, self.every_s = report, PROGRESS_EVERY_S
        self.before = 0  # tokens of the chunks already finished
        self.started = self.last = time.monotonic()

    def chunk(self, offset: int):
        """The callback for the chunk of texts starting at ``offset`` (score_texts reports per call)."""
        base = self.before
        first = offset + 1

        def on_progress(done: int, total: int) -> None:
            now = time.monotonic()
            if done == total:
                self.before = base + total
            if now - self.last < self.every_s and not (done == total and now - self.started >= self.every_s):
                return
            self.last = now
            tokens = base + done
            rate = tokens / max(now - self.started, 1e-9)
            left = f", ~{(self.total - tokens) / rate / 60:.1f} min left" if rate > 0 and tokens < self.total else ""
            last = min(offset + SCORE_BATCH_DOCS, self.n_texts)
            self.report(
                f"scoring: {tokens:,}/{self.total:,} tokens ({100 * tokens / max(self.total, 1):.0f}%), "
                f"texts {first}-{last} of {self.n_texts}, {rate:.0f} tokens/s{left}"
            )

        return on_progress
