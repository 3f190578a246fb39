"""Reading a dataset's documents back with their facts (token scores, gold and detector spans), for the
stages after scoring and detection."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from curation.core.spans import Span
from curation.core.warehouse import (
    CALIBRATION_BATCH,
    LABELED,
    VALIDATION,
    Warehouse,
    load_token_scores,
)
from curation.policy.calibration import ScoredDoc


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


def batch_documents(warehouse: Warehouse, batch_id: str) -> pl.DataFrame:
    return warehouse.query(
        "SELECT doc_id, scope_id, kind, text FROM documents WHERE batch_id = ? ORDER BY doc_id", [batch_id]
    )


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
