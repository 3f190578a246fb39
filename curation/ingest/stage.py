"""Ingestion: the delivery batch into ``documents`` (rejects into ``quarantine``) and the labeled
validation and tagger sets into ``validation_docs``, each with its gold spans."""

from __future__ import annotations

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import CORPUS, LABELED, VALIDATION, Warehouse
from curation.ingest.readers import ingest
from curation.ingest.validation import validation_rows


def ingest_stage(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Load the input into ``documents``; rejects go to ``quarantine``; counts must reconcile."""
    result = ingest(config.input_path, batch_id=config.batch_id, label_map=config.label_table())
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


DOC_COLUMNS = ["dataset", "doc_id", "scope_id", "kind", "text", "sha256", "n_chars", "split", "domain"]
GOLD_COLUMNS = ["dataset", "batch_id", "doc_id", "start", "end", "label"]


def validation_stage(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Load the labeled validation set (the batch's domain) and the tagger's other labeled sets (each
    with its domain), each split into calibration and held-out parts."""
    rows, gold, summary = validation_rows(config)
    docs = pl.DataFrame(rows, schema=DOC_COLUMNS, orient="row")
    spans = pl.DataFrame(gold, schema=GOLD_COLUMNS, orient="row")
    for dataset in (VALIDATION, LABELED):
        warehouse.replace("validation_docs", docs.filter(pl.col("dataset") == dataset), "dataset = ?", [dataset])
        warehouse.replace("gold_spans", spans.filter(pl.col("dataset") == dataset), "dataset = ?", [dataset])
    return summary
