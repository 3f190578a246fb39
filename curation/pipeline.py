"""The stages of a curation run as plain functions over the warehouse.

Each stage reads its inputs from DuckDB, writes its outputs back, and returns a small summary of
counts and rates (never private values) that the Dagster layer shows as metadata. The Dagster
assets in ``assets/`` are thin wrappers over these functions; ``curation eval`` and the tests
call them directly.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import numpy as np
import polars as pl

from curation.calibration import (
    AppliedCalibration,
    Calibration,
    ScoredDoc,
    calibrate,
    evaluate,
    finite_or_none,
)
from curation.card import CardInfo
from curation.config import CurationConfig, DetectorSettings
from curation.identities import IdentityReport, mask_name_variants
from curation.ingest import ingest
from curation.labeled import load_labeled, split_records
from curation.masking import combine, propagate_duplicates, redact, surprise_spans
from curation.scoring import ReferenceScorer
from curation.signals import choose_combination, select_sources
from curation.spans import Span, char_mask, merge
from curation.vault import public_id
from curation.warehouse import (
    CALIBRATION_BATCH,
    Warehouse,
    cached_shas,
    insert_frame,
    load_token_scores,
    token_scores_frame,
)
from curation.windows import WindowSpec, build_windows

VALIDATION = "validation"
IDENTITY_PASSES = 4
LABELED = "labeled"  # the tagger's other labeled sets (bundled public sets, user sets by domain)
CORPUS = "corpus"
SCORE_BATCH_DOCS = 64
PROGRESS_EVERY_S = 10.0  # scoring progress lines at most this often


# -- ingestion -------------------------------------------------------------------------------
def ingest_stage(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Load the input into ``documents``; rejects go to ``quarantine``; counts must reconcile."""
    result = ingest(config.input_path, batch_id=config.batch_id)
    if not result.reconciles():
        raise RuntimeError(
            f"ingest of {config.input_path} lost records: {result.n_input} in, "
            f"{result.documents.height} documents + {result.quarantine.height} quarantined"
        )
    batch = [config.batch_id]
    warehouse.replace("documents", result.documents, "batch_id = ?", batch)
    quarantine = result.quarantine.with_columns(pl.lit(config.batch_id).alias("batch_id"))
    warehouse.replace("quarantine", quarantine, "batch_id = ?", batch)
    gold = result.gold_spans.with_columns(pl.lit(CORPUS).alias("dataset"), pl.lit(config.batch_id).alias("batch_id"))
    warehouse.replace("gold_spans", gold, "dataset = ? AND batch_id = ?", [CORPUS, config.batch_id])
    reasons = quarantine.group_by(pl.col("reason").str.split(";").list.first()).len() if quarantine.height else None
    return {
        "records_in": result.n_input,
        "documents": result.documents.height,
        "quarantined": result.quarantine.height,
        "reconciles": True,
        "characters": int(result.documents["n_chars"].sum() or 0),
        "gold_spans": result.gold_spans.height,
        "quarantine_reasons": {r[0]: r[1] for r in reasons.iter_rows()} if reasons is not None else {},
    }


def validation_stage(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Load the labeled validation set (the batch's domain) and the tagger's other labeled sets (each
    with its domain), each split into calibration and held-out parts."""
    sets = [(VALIDATION, config.tagger.domain, config.validation_path)]
    if config.tagger.enabled:
        sets += [(LABELED, domain, path) for domain, path in config.tagger_sets()]
    rows, gold, summary = [], [], {}
    for dataset, domain, path in sets:
        records = load_labeled(path)
        calib, heldout = split_records(records, 1 - config.calibration.heldout_fraction, config.calibration.seed)
        prefix = "" if dataset == VALIDATION else f"{domain}/"
        for split, part in (("calibration", calib), ("heldout", heldout)):
            for r in part:
                doc_id = prefix + r.id
                sha = sha256_text(r.text)
                rows.append((dataset, doc_id, r.scope_id or r.id, r.kind, r.text, sha, len(r.text), split, domain))
                gold.extend((dataset, CALIBRATION_BATCH, doc_id, s.start, s.end, s.label) for s in r.spans)
        entry = {"records": len(records), "calibration_records": len(calib), "heldout_records": len(heldout)}
        if dataset == VALIDATION:
            summary = {"source": str(path.name), "domain": domain, **entry}
        else:
            summary.setdefault("tagger_sets", {})[domain] = {"source": path.name, **entry}
    docs = pl.DataFrame(
        rows,
        schema=["dataset", "doc_id", "scope_id", "kind", "text", "sha256", "n_chars", "split", "domain"],
        orient="row",
    )
    spans = pl.DataFrame(gold, schema=["dataset", "batch_id", "doc_id", "start", "end", "label"], orient="row")
    for dataset in (VALIDATION, LABELED):
        warehouse.replace("validation_docs", docs.filter(pl.col("dataset") == dataset), "dataset = ?", [dataset])
        warehouse.replace("gold_spans", spans.filter(pl.col("dataset") == dataset), "dataset = ?", [dataset])
    summary["gold_spans"] = sum(1 for g in gold if g[0] == VALIDATION)
    return summary


def sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- scoring ---------------------------------------------------------------------------------
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
    """Where the scoring pass leaves each token's hidden state for the tagger (None: tagger off)."""
    if not config.tagger.enabled:
        return None
    from curation.scoring import cache_root
    from curation.tagger import HiddenStateCache

    return HiddenStateCache(cache_root(), model_key)


def score_stage(
    config: CurationConfig, warehouse: Warehouse, scorer: ReferenceScorer, progress=None, dataset: str = CORPUS
) -> dict:
    """Score every text of the batch (or of the validation set) not yet cached for this model key,
    streaming bounded batches into DuckDB; the same pass caches hidden states for the tagger."""
    model_key = scorer.model_key
    wanted = texts_to_score(config, warehouse, dataset)
    calls_before, tokens_before = scorer.stats.model_calls, scorer.stats.tokens_scored
    started = time.perf_counter()
    n_scored = score_missing(
        warehouse,
        scorer,
        list(zip(wanted["sha256"], wanted["text"], strict=True)),
        progress,
        hidden_cache_for(config, model_key),
    )
    elapsed = time.perf_counter() - started
    tokens = scorer.stats.tokens_scored - tokens_before
    summary = {
        "model_key": model_key,
        **scorer.description,
        "texts": wanted.height,
        "texts_scored": n_scored,
        "texts_cached": wanted.height - n_scored,
        "model_calls": scorer.stats.model_calls - calls_before,
        "tokens_scored": tokens,
        "tokens_per_s": round(tokens / elapsed, 1) if elapsed > 0 and tokens else None,
        "model_load_s": round(scorer.stats.load_seconds, 2),
    }
    if dataset == CORPUS:
        record_summary(warehouse, config.batch_id, "reference_scores", summary)
    else:
        record_summary(warehouse, CALIBRATION_BATCH, "validation_scores", summary)
    return summary


def score_missing(
    warehouse: Warehouse, scorer: ReferenceScorer, items: Sequence[tuple[str, str]], progress=None, hidden_cache=None
) -> int:
    """Score the (sha256, text) pairs not yet cached for the scorer's model key, in bounded batches
    written to DuckDB as they finish; returns how many texts were scored.

    With a ``hidden_cache`` (curation.tagger.HiddenStateCache) the same forward pass also stores each
    token's last hidden state, the tagger's input; texts with scores but no states are run once more.
    """
    model_key = scorer.model_key
    todo = pending_texts(warehouse, model_key, items, hidden_cache)
    meter = ScoringProgress(scorer, [text for _, text, _ in todo], progress) if progress and todo else None
    for offset, chunk in zip(range(0, len(todo), SCORE_BATCH_DOCS), scoring_chunks(todo), strict=True):
        frame = score_chunk(scorer, chunk, hidden_cache, meter.chunk(offset) if meter else None)
        if frame.height:
            warehouse.append("token_scores", frame)
        if progress:
            progress(f"scored {min(offset + SCORE_BATCH_DOCS, len(todo))}/{len(todo)} texts")
    return len(todo)


def pending_texts(
    warehouse: Warehouse, model_key: str, items: Sequence[tuple[str, str]], hidden_cache=None
) -> list[tuple[str, str, bool]]:
    """(sha256, text, needs_scores) of the texts to run through the model, sorted by sha256: texts without
    token scores for ``model_key``, and (with a hidden-state cache) texts whose states are missing."""
    done = cached_shas(warehouse, model_key)
    return sorted(
        {
            (sha, text, sha not in done)
            for sha, text in items
            if sha not in done or (hidden_cache is not None and not hidden_cache.has(sha))
        }
    )


def scoring_chunks(todo: Sequence[tuple[str, str, bool]]) -> list[list[tuple[str, str, bool]]]:
    """The texts of one model call of ``score_texts`` each (SCORE_BATCH_DOCS at a time, in order).

    Scores depend on which texts share a padded batch (bf16 kernels round differently per shape), so
    every path, one worker or many shards, cuts the same chunks: the results are identical."""
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


# -- loading documents with their facts ------------------------------------------------------
def load_scored_docs(
    warehouse: Warehouse, model_key: str, dataset: str, *, batch_id: str = "", split: str = ""
) -> list[ScoredDoc]:
    """Documents of a dataset with token scores, gold spans and detector spans attached."""
    if dataset == VALIDATION:
        docs = warehouse.query(
            "SELECT doc_id, text, kind, sha256, scope_id FROM validation_docs WHERE dataset = ?"
            + (" AND split = ?" if split else "")
            + " ORDER BY doc_id",
            [VALIDATION] + ([split] if split else []),
        )
    else:
        docs = warehouse.query(
            "SELECT doc_id, text, kind, sha256, scope_id FROM documents WHERE batch_id = ? ORDER BY doc_id",
            [batch_id],
        )
    scores = load_token_scores(warehouse, model_key, docs["sha256"].to_list())
    owner = CALIBRATION_BATCH if dataset in (VALIDATION, LABELED) else batch_id
    gold = spans_by_doc(warehouse, "gold_spans", dataset, docs["doc_id"].to_list(), owner)
    detected = spans_by_doc(warehouse, "detector_spans", dataset, docs["doc_id"].to_list(), owner)
    out = []
    for row in docs.iter_rows(named=True):
        if row["sha256"] not in scores:
            raise RuntimeError(f"document {row['doc_id']} has no token scores for {model_key}; run scoring first")
        out.append(
            ScoredDoc(
                row["doc_id"],
                row["text"],
                row["kind"],
                scores[row["sha256"]],
                gold.get(row["doc_id"], []),
                detected.get(row["doc_id"], []),
            )
        )
    return out


def spans_by_doc(
    warehouse: Warehouse, table: str, dataset: str, doc_ids: Sequence[str], batch_id: str
) -> dict[str, list[Span]]:
    """Spans of one batch's documents (CALIBRATION_BATCH for the validation set), by doc id."""
    with warehouse.connect() as con:
        con.register("_ids", pl.DataFrame({"doc_id": list(doc_ids)}, schema={"doc_id": pl.String}).to_arrow())
        cols = '"start", "end", label' + (", score, source" if table == "detector_spans" else "")
        frame = con.execute(
            f"SELECT doc_id, {cols} FROM {table} JOIN _ids USING (doc_id) WHERE dataset = ? AND batch_id = ? "
            'ORDER BY doc_id, "start"',
            [dataset, batch_id],
        ).pl()
    out: dict[str, list[Span]] = {}
    for row in frame.iter_rows(named=True):
        out.setdefault(row["doc_id"], []).append(
            Span(row["start"], row["end"], row["label"], row.get("score"), row.get("source") or "gold")
        )
    return out


# -- windows ---------------------------------------------------------------------------------
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


# -- detectors -------------------------------------------------------------------------------
def detector_key(config: CurationConfig, suite) -> str:
    """Identity of the detector results: rule/model versions plus the run's detector settings."""
    payload = json.dumps(
        {"versions": suite.versions, "settings": asdict(config.detectors)}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def detect_stage(
    config: CurationConfig, warehouse: Warehouse, suite, progress=None, datasets: Sequence[str] = (CORPUS, VALIDATION)
) -> dict:
    """Run the detector suite on the batch and/or the validation set; spans are stored as facts.

    Documents already detected with the same detector key (same text, versions, settings) are skipped.
    """
    key = detector_key(config, suite)
    summary = {"detector_key": key}
    sources = {
        CORPUS: (
            "SELECT doc_id, text, kind, sha256 FROM documents WHERE batch_id = ? ORDER BY doc_id",
            [config.batch_id],
        ),
        VALIDATION: (
            "SELECT doc_id, text, kind, sha256 FROM validation_docs WHERE dataset = ? ORDER BY doc_id",
            [VALIDATION],
        ),
    }
    for dataset in datasets:
        sql, params = sources[dataset]
        owner = CALIBRATION_BATCH if dataset in (VALIDATION, LABELED) else config.batch_id
        docs = warehouse.query(sql, params)
        done = warehouse.query(
            "SELECT doc_id, sha256 FROM detector_runs WHERE dataset = ? AND batch_id = ? AND detector_key = ?",
            [dataset, owner, key],
        )
        todo = docs.join(done, on=["doc_id", "sha256"], how="anti")
        started = time.perf_counter()
        found = suite.detect(todo["text"].to_list(), todo["kind"].to_list()) if todo.height else []
        rows = [
            (dataset, owner, doc_id, s.start, s.end, s.label, s.score, s.source)
            for doc_id, spans in zip(todo["doc_id"].to_list(), found, strict=True)
            for s in spans
        ]
        frame = pl.DataFrame(
            rows,
            schema=["dataset", "batch_id", "doc_id", "start", "end", "label", "score", "source"],
            orient="row",
        )
        runs = todo.select("doc_id", "sha256").with_columns(
            pl.lit(dataset).alias("dataset"), pl.lit(owner).alias("batch_id"), pl.lit(key).alias("detector_key")
        )
        with warehouse.transaction() as con:
            con.register("_ids", todo.select("doc_id").to_arrow())
            for table in ("detector_spans", "detector_runs"):
                con.execute(
                    f"DELETE FROM {table} WHERE dataset = ? AND batch_id = ? AND doc_id IN (SELECT doc_id FROM _ids)",
                    [dataset, owner],
                )
            insert_frame(con, "detector_spans", frame)
            insert_frame(con, "detector_runs", runs)
            con.unregister("_ids")
        labels = frame.group_by("label").len().sort("label") if frame.height else None
        summary[dataset] = {
            "documents": docs.height,
            "documents_detected": todo.height,
            "documents_cached": docs.height - todo.height,
            "new_spans": frame.height,
            "seconds": round(time.perf_counter() - started, 2),
            "by_label": {r[0]: r[1] for r in labels.iter_rows()} if labels is not None else {},
        }
        if progress:
            progress(f"detectors: {dataset} {todo.height} of {docs.height} docs detected, {frame.height} spans")
    return summary


# -- learned tagger --------------------------------------------------------------------------
def tagger_config(config: CurationConfig):
    from curation.tagger import TaggerConfig

    return TaggerConfig(encoder=config.tagger.encoder, hidden=config.tagger.hidden, epochs=config.tagger.epochs)


def tagger_stage(config: CurationConfig, warehouse: Warehouse, model_key: str, progress=None) -> dict:
    """Train (or reuse) the tagger on the labeled sets' calibration splits and store its facts for the
    labeled documents; the report (per-domain metrics, thresholds) is the stage summary."""
    if not config.tagger.enabled:
        summary = {"enabled": False}
        record_summary(warehouse, CALIBRATION_BATCH, "pii_tagger", summary)
        return summary
    from curation.scoring import cache_root
    from curation.signals import train_stage

    tagger, report = train_stage(
        warehouse,
        model_key,
        hidden_cache_for(config, model_key),
        (VALIDATION, LABELED),
        tagger_config(config),
        cache_root(),
        progress=progress,
    )
    summary = {
        "enabled": True,
        "tagger_key": tagger.key,
        "digest": tagger.digest,
        "hidden": tagger.config.hidden,
        "encoder": tagger.config.encoder,
        "domain": config.tagger.domain,
        **report,
    }
    record_summary(warehouse, CALIBRATION_BATCH, "pii_tagger", summary)
    return summary


def current_tagger(warehouse: Warehouse):
    """The tagger the last pii_tagger materialization trained (None when the tagger is off)."""
    from curation.scoring import cache_root
    from curation.signals import tagger_path
    from curation.tagger import Tagger

    summary = stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger")
    if not summary.get("enabled"):
        return None
    path = tagger_path(cache_root(), summary["digest"])
    if not path.exists():
        raise RuntimeError(
            f"tagger {summary['tagger_key']} is not in the local cache ({path}); rematerialize pii_tagger"
        )
    return Tagger.load(path)


def tagger_spans_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> dict:
    """The tagger's token probabilities and spans, and CredSweeper's spans, for the batch (facts)."""
    tagger = current_tagger(warehouse) if config.tagger.enabled else None
    if tagger is None:
        return {"enabled": False}
    from curation.signals import tag_corpus_stage

    summary = tag_corpus_stage(
        warehouse, config.batch_id, model_key, hidden_cache_for(config, model_key), tagger, config.tagger.domain
    )
    record_summary(warehouse, config.batch_id, "tagger_spans", summary)
    return summary


# -- calibration -----------------------------------------------------------------------------
@dataclass
class CalibrationOutcome:
    calibration_id: str
    summary: dict
    calibration: Calibration | None = None  # None when a stored calibration was reused
    reused: bool = False


def calibration_input_digest(config: CurationConfig, warehouse: Warehouse, model_key: str) -> str:
    """Everything a calibration depends on; equal digests mean re-calibrating would change nothing."""
    import curation

    h = hashlib.sha256()
    h.update(json.dumps([model_key, asdict(config.calibration), curation.__version__], default=str).encode())
    for row in warehouse.query("SELECT doc_id, sha256, split FROM validation_docs ORDER BY doc_id").iter_rows():
        h.update(repr(row).encode())
    spans = warehouse.query(
        'SELECT doc_id, "start", "end", label FROM detector_spans WHERE dataset = ? ORDER BY ALL', [VALIDATION]
    )
    for row in spans.iter_rows():
        h.update(repr(row).encode())
    return h.hexdigest()


def calibrate_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> CalibrationOutcome:
    """Choose policy, window, consensus and threshold on the calibration split; report held-out.

    A stored calibration with the same input digest is reused (scores, labels, detector spans and
    settings all unchanged), so a re-run does no calibration work.
    """
    digest = calibration_input_digest(config, warehouse, model_key)
    stored = warehouse.query(
        "SELECT calibration_id, summary FROM calibration WHERE input_digest = ? ORDER BY created_at DESC LIMIT 1",
        [digest],
    )
    if stored.height:
        return CalibrationOutcome(stored["calibration_id"][0], json.loads(stored["summary"][0]), reused=True)
    calib_docs = load_scored_docs(warehouse, model_key, VALIDATION, split="calibration")
    heldout_docs = load_scored_docs(warehouse, model_key, VALIDATION, split="heldout")
    combination, combinations = choose_combination(calib_docs)
    for doc in calib_docs + heldout_docs:
        doc.detected = select_sources(len(doc.text), doc.detected, combination)
    cfg = config.calibration
    calibration = calibrate(
        calib_docs,
        policies=cfg.policies,
        objective=cfg.objective,
        collateral_budget=cfg.collateral_budget,
        coverage_target=cfg.coverage_target,
        min_kind_docs=cfg.min_kind_docs,
    )
    calibration_id = f"cal-{datetime.now(UTC):%Y%m%dT%H%M%S%f}"
    validation = evaluate(calib_docs, calibration)
    heldout = evaluate(heldout_docs, calibration)
    per_policy = best_per_policy(calibration)
    summary = {
        **calibration.to_dict(),
        "validation": validation,
        "heldout": heldout,
        "per_policy": per_policy,
        "model_key": model_key,
        "domain": config.tagger.domain,
        "detector_combination": list(combination),
        "detector_combinations": combinations,
    }
    point = calibration.point
    warehouse.append(
        "calibration",
        pl.DataFrame(
            {
                "calibration_id": [calibration_id],
                "created_at": [datetime.now(UTC).replace(tzinfo=None)],
                "model_key": [model_key],
                "policy": [calibration.policy],
                "params": [json.dumps(calibration.params.to_dict())],
                "threshold": [finite_or_none(point.threshold)],
                "objective": [point.objective],
                "summary": [json.dumps(summary, default=str)],
                "input_digest": [digest],
            }
        ),
    )
    rows = [c.to_row() for c in calibration.candidates]
    warehouse.append(
        "calibration_candidates",
        pl.DataFrame(
            [
                (
                    calibration_id,
                    r["policy"],
                    r["params"],
                    r["threshold"],
                    r["tpr"],
                    r["fpr"],
                    r["precision"],
                    r["f1"],
                    r["surprise_auroc"],
                )
                for r in rows
            ],
            schema=[
                "calibration_id",
                "policy",
                "params",
                "threshold",
                "tpr",
                "fpr",
                "precision",
                "f1",
                "surprise_auroc",
            ],
            orient="row",
        ),
    )
    s = calibration.best_sweep
    keep = np.unique(np.linspace(0, max(len(s.thresholds) - 1, 0), num=min(len(s.thresholds), 400)).astype(int))
    warehouse.append(
        "roc_points",
        pl.DataFrame(
            {
                "calibration_id": [calibration_id] * len(keep),
                "threshold": [finite_or_none(v) for v in s.thresholds[keep]],
                "tpr": s.tpr[keep],
                "fpr": s.fpr[keep],
                "precision": s.precision[keep],
            }
        ),
    )
    return CalibrationOutcome(calibration_id, summary, calibration)


def best_per_policy(calibration: Calibration) -> list[dict]:
    """The best candidate of each policy (for the 'where surprise helps' comparison)."""
    best: dict[str, dict] = {}
    for candidate in calibration.candidates:
        row = candidate.to_row()
        if candidate.policy not in best or row["f1"] > best[candidate.policy]["f1"]:
            best[candidate.policy] = row
    return [best[p] for p in sorted(best)]


def current_calibration(
    config: CurationConfig, warehouse: Warehouse, model_key: str
) -> tuple[str, AppliedCalibration, dict]:
    """The stored calibration made from exactly the current inputs (validation, scores, detectors)."""
    frame = warehouse.query(
        "SELECT calibration_id, summary FROM calibration WHERE model_key = ? AND input_digest = ? "
        "ORDER BY created_at DESC LIMIT 1",
        [model_key, calibration_input_digest(config, warehouse, model_key)],
    )
    if frame.height == 0:
        raise RuntimeError(
            f"no calibration matches the current validation data, detector spans and settings for {model_key}; "
            "materialize threshold_calibration first"
        )
    summary = json.loads(frame["summary"][0])
    return frame["calibration_id"][0], Calibration.applied(summary), summary


# -- masking and views -----------------------------------------------------------------------
def propagate_mentions(
    texts: dict[str, str],
    selected: dict[str, list[Span]],
    scope_of: dict[str, str],
    *,
    scope: str,
    min_chars: int,
    name_variants: bool = True,
) -> tuple[dict[str, list[Span]], IdentityReport]:
    """The masking step after selection: every other occurrence of a masked value in its scope, then
    the variants of every masked person ("Dana Whitfield" -> "Ms Whitfield", "D. Whitfield").

    Variants are found wherever a copy of the name now is and propagated in turn (the leak gate checks
    every masked value batch-wide); a variant next to a masked word can merge into a longer name, so
    this repeats until nothing changes (two passes, most). ``curation eval`` applies the same step, so
    its numbers are the pipeline's."""
    propagate = functools.partial(propagate_duplicates, texts, scope_of=scope_of, scope=scope, min_chars=min_chars)
    masked = propagate(selected)
    identities = IdentityReport()
    if name_variants:
        identity_scope = scope_of if scope != "document" else {d: d for d in texts}
        for _ in range(IDENTITY_PASSES):
            masked, found = mask_name_variants(texts, masked, identity_scope)
            identities = identities.add(found)
            if not (found.variant_spans or found.relabeled_as_person):
                break
            masked = propagate(masked)
    return masked, identities


def mask_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> dict:
    """Apply the stored calibration to the batch: surprise + detector spans, then propagation."""
    calibration_id, applied, stored_summary = current_calibration(config, warehouse, model_key)
    docs = load_scored_docs(warehouse, model_key, CORPUS, batch_id=config.batch_id)
    combination = stored_summary.get("detector_combination")
    if combination:
        for doc in docs:
            doc.detected = select_sources(len(doc.text), doc.detected, combination)
    scope_rows = warehouse.query("SELECT doc_id, scope_id FROM documents WHERE batch_id = ?", [config.batch_id])
    scope_of = dict(scope_rows.iter_rows())
    texts = {d.doc_id: d.text for d in docs}
    selected = {d.doc_id: combine(applied.policy, d.detected, surprise_spans(d, applied)) for d in docs}
    automatic_recall = supplied_label_recall(docs, selected)
    if config.masking.mask_supplied_labels:
        selected = {
            d.doc_id: merge(
                selected[d.doc_id] + [Span(s.start, s.end, s.label, None, "supplied_label") for s in d.gold]
            )
            for d in docs
        }
    masked, identities = propagate_mentions(
        texts,
        selected,
        scope_of,
        scope=config.masking.propagation_scope,
        min_chars=config.masking.min_propagation_chars,
        name_variants=config.masking.name_variants,
    )
    rows = [
        (config.batch_id, doc_id, s.start, s.end, s.label, s.score, s.source or "detector", calibration_id)
        for doc_id, spans in masked.items()
        for s in spans
    ]
    frame = pl.DataFrame(
        rows,
        schema=["batch_id", "doc_id", "start", "end", "label", "score", "source", "calibration_id"],
        orient="row",
    )
    warehouse.replace("mask_spans", frame, "batch_id = ?", [config.batch_id])
    total = sum(len(t) for t in texts.values())
    masked_chars = int(sum(e - s for _, _, s, e, *_ in rows))
    summary = {
        "calibration_id": calibration_id,
        "policy": applied.policy,
        "documents": len(docs),
        "mask_spans": len(rows),
        "masked_chars": masked_chars,
        "masked_fraction": round(masked_chars / total, 4) if total else None,
        "automatic_recall_on_supplied_labels": automatic_recall,
        "supplied_labels_masked": config.masking.mask_supplied_labels,
        "name_variants": identities.to_dict(),
        "by_source": _count(frame, "source"),
        "by_label": _count(frame, "label"),
    }
    record_summary(warehouse, config.batch_id, "mask_spans", summary)
    return summary


def record_summary(warehouse: Warehouse, batch_id: str, stage: str, summary: dict) -> None:
    frame = pl.DataFrame(
        {
            "batch_id": [batch_id],
            "stage": [stage],
            "summary": [json.dumps(summary, default=str)],
            "created_at": [datetime.now(UTC).replace(tzinfo=None)],
        }
    )
    warehouse.replace("stage_summaries", frame, "batch_id = ? AND stage = ?", [batch_id, stage])


def stage_summary(warehouse: Warehouse, batch_id: str, stage: str) -> dict:
    frame = warehouse.query("SELECT summary FROM stage_summaries WHERE batch_id = ? AND stage = ?", [batch_id, stage])
    return json.loads(frame["summary"][0]) if frame.height else {}


def supplied_label_recall(docs: Sequence[ScoredDoc], selected: dict[str, list[Span]]) -> float | None:
    """Share of supplied-label characters that detectors + surprise masked on their own."""
    total = hit = 0
    for doc in docs:
        mask = char_mask(selected[doc.doc_id], len(doc.text))
        for s in doc.gold:
            total += s.length
            hit += sum(mask[s.start : s.end])
    return round(hit / total, 4) if total else None


def _count(frame: pl.DataFrame, column: str) -> dict:
    if frame.height == 0:
        return {}
    return {r[0]: r[1] for r in frame.group_by(column).len().sort(column).iter_rows()}


def mask_spans_by_doc(warehouse: Warehouse, batch_id: str) -> dict[str, list[Span]]:
    frame = warehouse.query(
        'SELECT doc_id, "start", "end", label, score, source FROM mask_spans '
        'WHERE batch_id = ? ORDER BY doc_id, "start"',
        [batch_id],
    )
    out: dict[str, list[Span]] = {}
    for doc_id, start, end, label, score, source in frame.iter_rows():
        out.setdefault(doc_id, []).append(Span(start, end, label, score, source))
    return out


def batch_documents(warehouse: Warehouse, batch_id: str) -> pl.DataFrame:
    return warehouse.query(
        "SELECT doc_id, scope_id, kind, text FROM documents WHERE batch_id = ? ORDER BY doc_id", [batch_id]
    )


def training_view_stage(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Original text plus loss-mask spans: masked tokens stay in context but carry no loss."""
    docs = batch_documents(warehouse, config.batch_id)
    spans = mask_spans_by_doc(warehouse, config.batch_id)
    rows = [
        (
            config.batch_id,
            doc_id,
            scope_id,
            kind,
            text,
            json.dumps([[s.start, s.end, s.label] for s in spans.get(doc_id, [])]),
        )
        for doc_id, scope_id, kind, text in docs.iter_rows()
    ]
    frame = pl.DataFrame(rows, schema=[*VIEW_COLUMNS, "loss_mask_spans"], orient="row")
    warehouse.replace("training_view", frame, "batch_id = ?", [config.batch_id])
    masked = sum(s.length for doc_spans in spans.values() for s in doc_spans)
    return {"documents": docs.height, "documents_with_masks": len(spans), "loss_masked_chars": masked}


def redacted_view_stage(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Every masked span replaced by a typed tag such as ``[EMAIL_ADDRESS]``."""
    docs = batch_documents(warehouse, config.batch_id)
    spans = mask_spans_by_doc(warehouse, config.batch_id)
    rows = [
        (config.batch_id, doc_id, scope_id, kind, redact(text, spans.get(doc_id, [])))
        for doc_id, scope_id, kind, text in docs.iter_rows()
    ]
    frame = pl.DataFrame(rows, schema=VIEW_COLUMNS, orient="row")
    warehouse.replace("redacted_view", frame, "batch_id = ?", [config.batch_id])
    return {"documents": docs.height, "tags": sum(len(v) for v in spans.values())}


VIEW_COLUMNS = ["batch_id", "doc_id", "scope_id", "kind", "text"]


def surrogate_stage(config: CurationConfig, warehouse: Warehouse, engine, vault, rewriter=None) -> dict:
    """Rewrite masked spans per the redaction convention; the surrogate map goes to the vault only.

    With `rewriting.enabled`, chunks holding masked spans are first offered to a local instruct model;
    an output is kept only if it passes verification, else the chunk gets the deterministic surrogates.
    Which chunks were rewritten is recorded in `rewrite_chunks` (offsets and labels, never values).
    """

    from curation.gates import original_values

    docs = batch_documents(warehouse, config.batch_id)
    spans = mask_spans_by_doc(warehouse, config.batch_id)
    # Every original the release gates check against (masked values and gold values of the batch), so no
    # surrogate equals one of them.
    engine.register_originals(value for _, value in original_values(warehouse, config.batch_id))
    texts, ranges, audit_rows, chunk_rows, summary = _rewrite_batch(config, docs, spans, engine, rewriter)
    frame = pl.DataFrame(
        {
            "batch_id": [config.batch_id] * docs.height,
            "doc_id": docs["doc_id"],
            "scope_id": docs["scope_id"],
            "kind": docs["kind"],
            "text": texts,
            "n_replacements": [len(r) for r in ranges],
            # Where the text is ours (surrogates): audits skip these ranges. Internal, never released.
            "replaced_ranges": [json.dumps(r) for r in ranges],
        },
        schema_overrides={"n_replacements": pl.Int64},
    )
    warehouse.replace("surrogate_view", frame, "batch_id = ?", [config.batch_id])
    chunks = pl.DataFrame(
        chunk_rows,
        schema=["batch_id", "doc_id", "chunk_index", "start", "end", "action", "reason", "labels", "model"],
        orient="row",
    )
    warehouse.replace("rewrite_chunks", chunks, "batch_id = ?", [config.batch_id])
    stored = vault.upsert(engine.records())
    batch_records = vault.replace_batch_records(config.batch_id, engine.batch_records())
    vault.replace_audit_copy(config.batch_id, audit_rows)  # reviewers' indexed-tag copy, vault only
    vault.replace_release_ids(config.batch_id, release_id_map(engine, config.batch_id, docs), engine.key_id)
    return {
        "documents": docs.height,
        **summary,
        "vault_records": stored,
        "batch_surrogate_records": batch_records,
        "audit_copy_documents": len(audit_rows),
        "key_id": engine.key_id,
    }


def _rewrite_batch(config: CurationConfig, docs: pl.DataFrame, spans: dict[str, list[Span]], engine, rewriter):
    """Per document: the release text, the ranges of it that are ours, the reviewers' audit copy and the
    LM-rewriting chunk records."""
    from curation.surrogates import Scope

    rows = list(docs.select("doc_id", "scope_id", "text").iter_rows())
    scopes = {doc_id: Scope(doc_id, scope_id) for doc_id, scope_id, _ in rows}
    engine.prepare_documents((text, spans.get(doc_id, []), scopes[doc_id]) for doc_id, _, text in rows)
    audit_rows = [(d, engine.audit_copy(t, spans.get(d, []), scopes[d]).text) for d, _, t in rows]
    if not config.rewriting.enabled:
        results = [engine.apply(t, spans.get(d, []), scopes[d]) for d, _, t in rows]
        texts = [r.text for r in results]
        ranges = [[[x.new_start, x.new_end] for x in r.replacements] for r in results]
        return texts, ranges, audit_rows, [], {"replacements": sum(len(r) for r in ranges), "rewriting": False}

    from curation.rewriting import Rewriter, surrogate_fallback

    rewriter = rewriter or Rewriter(config.rewriting)
    jobs = [(t, spans.get(d, []), surrogate_fallback(engine, scopes[d], t, spans.get(d, []))) for d, _, t in rows]
    results = rewriter.rewrite_documents(jobs)
    model = rewriter.model_id
    chunk_rows = [
        (config.batch_id, d, c.index, c.start, c.end, c.action, c.reason, json.dumps(list(c.labels)), model)
        for (d, _, _), result in zip(rows, results, strict=True)
        for c in result.chunks
    ]
    counts = {action: sum(r.counts().get(action, 0) for r in results) for action in ("kept", "rewritten", "fallback")}
    # Rewritten chunks are scanned in full by the leak audit: no range of them is treated as ours.
    ranges: list[list] = [[] for _ in results]
    summary = {"rewriting": True, "rewrite_model": model, "chunks": counts, "replacements": counts["rewritten"]}
    return [r.text for r in results], ranges, audit_rows, chunk_rows, summary


# -- dataset card and release ----------------------------------------------------------------
def card_info(
    config: CurationConfig,
    warehouse: Warehouse,
    model_key: str,
    *,
    versions: dict,
    key_id: str,
    is_dev_key: bool,
    gates: dict[str, dict],
    convention_yaml: str,
    plots: dict[str, str],
) -> CardInfo:
    """Everything the dataset card prints, from the warehouse (counts, metrics, gates; no values)."""
    from curation.card import CardInfo

    batch = config.batch_id
    counts = warehouse.query(
        "SELECT (SELECT count(*) FROM documents WHERE batch_id = $1) AS docs,"
        " (SELECT count(*) FROM quarantine WHERE batch_id = $1) AS quarantined,"
        " (SELECT coalesce(sum(n_chars), 0) FROM documents WHERE batch_id = $1) AS chars,"
        ' (SELECT coalesce(sum("end" - "start"), 0) FROM mask_spans WHERE batch_id = $1) AS masked',
        [batch],
    ).row(0, named=True)
    labels = warehouse.query(
        "SELECT label, count(*) AS n FROM mask_spans WHERE batch_id = ? GROUP BY 1 ORDER BY 1", [batch]
    )
    _, applied, summary = current_calibration(config, warehouse, model_key)
    validation = summary["validation"]
    heldout = summary["heldout"]
    residual = gates.get("residual_detector_audit")
    mask_summary = stage_summary(warehouse, batch, "mask_spans")
    leak = gates.get("residual_leak_scan", {})
    limitations = []
    if is_dev_key:
        limitations.append("Surrogates were made with a generated DEV key: this build is not a real delivery.")
    return CardInfo(
        pretty_name=config.release.pretty_name,
        summary=(
            "Privacy-sanitized text/code corpus produced by `curation`: detector and surprise-masking spans, "
            "rewritten with consistent fictional surrogates (and a typed-tag redacted view)."
        ),
        license=config.release.license,
        tags=["privacy", "pii-redaction", "surprise-masking"],
        source_batches=[batch],
        documents=counts["docs"],
        quarantined=counts["quarantined"],
        masked_chars=int(counts["masked"]),
        total_chars=int(counts["chars"]),
        spans_per_label=dict(labels.iter_rows()),
        convention_yaml=convention_yaml,
        key_id=key_id,
        detectors=versions,
        reference_model={"model_key": model_key, "scoring": config.scoring.cache_fields()},
        thresholds={
            "policy": applied.policy,
            "params": applied.params.name,
            "threshold": finite_or_none(applied.threshold),
            "per_kind_thresholds": {k: finite_or_none(v) for k, v in applied.per_kind_thresholds.items()},
            "objective": config.calibration.objective,
            "collateral_budget": config.calibration.collateral_budget,
        },
        validation_metrics={**(validation["metrics"] or {}), "auroc": validation["auroc"]},
        held_out_metrics={**(heldout["metrics"] or {}), "auroc": heldout["auroc"]},
        plots=plots,
        collateral={
            "heldout_collateral_rate": (heldout["metrics"] or {}).get("fpr"),
            "heldout_coverage": (heldout["metrics"] or {}).get("tpr"),
            "batch_masked_fraction": round(counts["masked"] / counts["chars"], 4) if counts["chars"] else None,
            "automatic_recall_on_supplied_labels": mask_summary.get("automatic_recall_on_supplied_labels"),
            "supplied_labels_masked": mask_summary.get("supplied_labels_masked"),
            "name_variant_spans": (mask_summary.get("name_variants") or {}).get("variant_spans"),
        },
        residual_audit=residual,
        independent_audit=gates.get("residual_independent_audit"),
        known_value_findings=leak.get("findings"),
        gates=gates,
        limitations=limitations,
        contact=config.release.contact,
        tagger={
            **{k: v for k, v in stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger").items() if k != "enabled"},
            "detector_combination": summary.get("detector_combination"),
        }
        if config.tagger.enabled
        else {},
        # the views the release ships, so the card's `configs:` lets `datasets` load the folder as is
        tables={name: frame.height for name, frame in internal_release_tables(config, warehouse).items()},
    )


RELEASE_ID_COLUMNS = {"doc_id": "doc", "scope_id": "scope"}


def release_id_map(engine, batch_id: str, docs: pl.DataFrame) -> list[tuple[str, str, str]]:
    """(id kind, original id, public id) of every doc and scope id of the batch (kept in the vault)."""
    return [
        (column, original, engine.public_id(batch_id, column, original, prefix))
        for column, prefix in RELEASE_ID_COLUMNS.items()
        for original in sorted(set(docs[column].drop_nulls().to_list()))
    ]


def rekey_ids(frame: pl.DataFrame, key: bytes, batch_id: str) -> pl.DataFrame:
    """Replace record and scope ids by their public ids (an id may itself be private: an email, a
    ticket number), ordered by the public id so the original order does not show either."""
    out = frame
    for column, prefix in RELEASE_ID_COLUMNS.items():
        if column in out.columns:
            mapping = {v: public_id(key, batch_id, column, v, prefix) for v in out[column].drop_nulls().unique()}
            out = out.with_columns(pl.col(column).replace_strict(mapping, default=None, return_dtype=pl.String))
    return out.sort("doc_id") if "doc_id" in out.columns else out


def release_tables(config: CurationConfig, warehouse: Warehouse) -> dict[str, pl.DataFrame]:
    """The tables a release ships: the configured views with public ids (:func:`rekey_ids`, the run's
    HMAC key), never the vault or raw text by default."""
    from curation.vault import configured_key

    key = configured_key(config).key
    tables = internal_release_tables(config, warehouse)
    return {name: rekey_ids(frame, key, config.batch_id) for name, frame in tables.items()}


def internal_release_tables(config: CurationConfig, warehouse: Warehouse) -> dict[str, pl.DataFrame]:
    """The release tables with the warehouse's own ids (what the gates judged)."""
    batch = [config.batch_id]
    tables = {}
    if "surrogate" in config.release.views:
        tables["surrogate"] = warehouse.query(
            "SELECT doc_id, scope_id, kind, text FROM surrogate_view WHERE batch_id = ? ORDER BY doc_id", batch
        )
    if "redacted" in config.release.views:
        tables["redacted"] = warehouse.query(
            "SELECT doc_id, scope_id, kind, text FROM redacted_view WHERE batch_id = ? ORDER BY doc_id", batch
        )
    if config.release.include_training_view:
        tables["training"] = warehouse.query(
            "SELECT doc_id, scope_id, kind, text, loss_mask_spans FROM training_view "
            "WHERE batch_id = ? ORDER BY doc_id",
            batch,
        )
    return tables


@functools.lru_cache(maxsize=4)
def detector_suite(settings: DetectorSettings):
    """The detector suite for a run's detector settings, once per process (engines load lazily)."""
    from curation.detectors import DetectorConfig, DetectorSuite

    kwargs: dict = {"deny_list": list(settings.deny_list), "allow_list": list(settings.allow_list)}
    if settings.score_threshold is not None:
        kwargs["score_threshold"] = settings.score_threshold
    if settings.use_credsweeper is not None:
        kwargs["use_credsweeper"] = settings.use_credsweeper
    return DetectorSuite(DetectorConfig(**kwargs))
