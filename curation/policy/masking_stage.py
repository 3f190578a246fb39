"""Masking: the stored calibration applied to the batch (``mask_spans``), and the two views made from the
mask spans alone: the training view (loss-mask spans) and the redacted view (typed tags)."""

from __future__ import annotations

import json

import polars as pl

from curation.core.config import CurationConfig
from curation.core.spans import Span, merge
from curation.core.warehouse import CORPUS, Warehouse, record_summary
from curation.detect.combination import dropped_spans, dropped_summary, select_sources
from curation.policy.documents import batch_documents, load_scored_docs, mask_spans_by_doc
from curation.policy.extents import masked_whole, structured_targets
from curation.policy.identity_types import misfiled_names, one_type_per_identity
from curation.policy.masking import (
    checked_detector_transfer,
    checked_transfer,
    combine,
    redact,
    supplied_label_recall,
    surprise_spans,
)
from curation.policy.propagation import propagate_mentions
from curation.policy.stored import current_calibration


def _store_masks(
    warehouse: Warehouse, batch: str, masked: dict[str, list[Span]], calibration_id: str
) -> tuple[list[tuple], pl.DataFrame]:
    """The batch's mask spans as rows of ``mask_spans`` (replacing the batch's previous ones)."""
    rows = [
        (batch, doc_id, s.start, s.end, s.label, s.score, s.source or "detector", calibration_id)
        for doc_id, spans in masked.items()
        for s in spans
    ]
    frame = pl.DataFrame(
        rows,
        schema=["batch_id", "doc_id", "start", "end", "label", "score", "source", "calibration_id"],
        orient="row",
    )
    warehouse.replace("mask_spans", frame, "batch_id = ?", [batch])
    return rows, frame


def mask_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> dict:
    """Apply the stored calibration to the batch: surprise + detector spans, then propagation."""
    calibration_id, applied, stored_summary = current_calibration(config, warehouse, model_key)
    docs = load_scored_docs(warehouse, model_key, CORPUS, batch_id=config.batch_id)
    combination = stored_summary.get("detector_combination")
    found = {d.doc_id: list(d.detected) for d in docs}  # every signal's spans, before the combination picks
    if combination:
        for doc in docs:
            doc.detected = select_sources(len(doc.text), doc.detected, combination)
    scope_rows = warehouse.query("SELECT doc_id, scope_id FROM documents WHERE batch_id = ?", [config.batch_id])
    scope_of = dict(scope_rows.iter_rows())
    texts = {d.doc_id: d.text for d in docs}
    # once: the transfer check and the masks use them; the detectors policy uses neither
    surprising = {d.doc_id: surprise_spans(d, applied) if applied.policy != "detectors" else [] for d in docs}
    budget = config.calibration.collateral_budget
    detectors_held = checked_detector_transfer(stored_summary, docs, budget)  # the chosen detectors' share
    applied, transfer = checked_transfer(applied, stored_summary, docs, budget, surprising)
    # a span found is masked whole (no mask ends inside an e-mail, URL, phone number or word), before
    # propagation (which then finds whole values) and after it (a propagated name inside an e-mail)
    targets = {d.doc_id: structured_targets(d.text, found[d.doc_id]) for d in docs}
    titled = stored_summary.get("honorifics", {}).get("masked", True)  # a calibration from before: masked
    selected = {
        d.doc_id: masked_whole(
            d.text, combine(applied.policy, d.detected, surprising[d.doc_id]), targets[d.doc_id], titled
        )
        for d in docs
    }
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
    scope = config.masking.propagation_scope
    identity_scope = {d: (d if scope == "document" else "*" if scope == "batch" else scope_of.get(d, d)) for d in texts}
    masked, misfiled = misfiled_names(texts, masked)
    masked, relabeled = one_type_per_identity(texts, masked, identity_scope)
    masked = {
        doc_id: masked_whole(texts[doc_id], spans, targets.get(doc_id, []), titled) for doc_id, spans in masked.items()
    }
    rows, frame = _store_masks(warehouse, config.batch_id, masked, calibration_id)
    total = sum(len(t) for t in texts.values())
    dropped = [
        s for doc_id, text in texts.items() for s in dropped_spans(len(text), found[doc_id], masked.get(doc_id, []))
    ]
    masked_chars = int(sum(e - s for _, _, s, e, *_ in rows))
    summary = {
        "calibration_id": calibration_id,
        "policy": applied.policy,
        "honorifics_masked": titled,
        "surprise_transfer": transfer,
        "detector_transfer": detectors_held,
        "documents": len(docs),
        "mask_spans": len(rows),
        "masked_chars": masked_chars,
        "masked_fraction": round(masked_chars / total, 4) if total else None,
        "automatic_recall_on_supplied_labels": automatic_recall,
        "supplied_labels_masked": config.masking.mask_supplied_labels,
        "name_variants": identities.to_dict(),
        "relabeled_misfiled_names": misfiled,
        "relabeled_one_type_per_identity": relabeled,
        "by_source": _count(frame, "source"),
        "by_label": _count(frame, "label"),
        "detector_combination": list(combination or []),
        "dropped_by_combination": dropped_summary(dropped),
    }
    record_summary(warehouse, config.batch_id, "mask_spans", summary)
    return summary


def _count(frame: pl.DataFrame, column: str) -> dict:
    if frame.height == 0:
        return {}
    return {r[0]: r[1] for r in frame.group_by(column).len().sort(column).iter_rows()}


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
