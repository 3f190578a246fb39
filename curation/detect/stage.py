"""Detection: the detector suite's spans of the batch and of the validation set (``detector_spans``),
cached per document by the detector key (``detector_runs``)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, CORPUS, LABELED, VALIDATION, Warehouse, insert_frame
from curation.detect.suite import detector_key

DETECT_BATCH_DOCS = 32  # documents per detector call, on every engine (the same batches: the same spans)


def detect_documents(config: CurationConfig, suite, texts: list[str], kinds: list[str]) -> list[list]:
    """The suite's spans per text, in batches of DETECT_BATCH_DOCS: in this process, or as Ray tasks on
    the cluster (`engine.kind: ray`; a task lost with its node is retried by Ray)."""
    step = DETECT_BATCH_DOCS
    batches = [(texts[i : i + step], kinds[i : i + step]) for i in range(0, len(texts), step)]
    if config.engine.kind == "ray" and batches:
        from curation.score.executor import detect_on_ray

        parts = detect_on_ray(config.engine, config.detectors, batches)
    else:
        parts = [suite.detect(t, k) for t, k in batches]
    return [spans for part in parts for spans in part]


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
        found = detect_documents(config, suite, todo["text"].to_list(), todo["kind"].to_list())
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
