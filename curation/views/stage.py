"""Surrogates: masked spans rewritten per the redaction convention (``surrogate_view``, optionally by a local
instruct model: ``rewrite_chunks``); the surrogate map and the release-id map go to the vault only."""

from __future__ import annotations

import contextlib
import json

import polars as pl

from curation.core.config import CurationConfig
from curation.core.spans import Span
from curation.core.warehouse import Warehouse
from curation.gates.release_text import original_values
from curation.policy.documents import batch_documents, mask_spans_by_doc
from curation.views.vault import RELEASE_ID_COLUMNS


def surrogate_stage(config: CurationConfig, warehouse: Warehouse, engine, vault, rewriter=None) -> dict:
    """Rewrite masked spans per the redaction convention; the surrogate map goes to the vault only.

    With `rewriting.enabled`, chunks holding masked spans are first offered to a local instruct model;
    an output is kept only if it passes verification, else the chunk gets the deterministic surrogates.
    Which chunks were rewritten is recorded in `rewrite_chunks` (offsets and labels, never values).

    ``vault`` is an open :class:`~curation.views.vault.Vault` or a function that opens one. With a function, the
    stage follows the lock order of ``docs/operations.md``: it never holds the warehouse and the vault at
    once (read the warehouse, compute with neither open, write the vault, then the warehouse), so a
    parallel batch's check that reads the warehouse and then the vault cannot deadlock with it.
    """
    with warehouse.session():  # reads only: one short connection
        docs = batch_documents(warehouse, config.batch_id)
        spans = mask_spans_by_doc(warehouse, config.batch_id)
        # Every original the release gates check against (masked values and gold values of the batch), so no
        # surrogate equals one of them.
        originals = [value for _, value in original_values(warehouse, config.batch_id)]
    engine.register_originals(originals)
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
    chunks = pl.DataFrame(
        chunk_rows,
        schema=["batch_id", "doc_id", "chunk_index", "start", "end", "action", "reason", "labels", "model"],
        orient="row",
    )
    # The map first: a release text never exists without the records that explain it (a crash between the
    # two leaves the previous text, which the next run replaces).
    with vault() if callable(vault) else contextlib.nullcontext(vault) as open_vault:
        stored = open_vault.upsert(engine.records())
        batch_records = open_vault.replace_batch_records(config.batch_id, engine.batch_records())
        open_vault.replace_audit_copy(config.batch_id, audit_rows)  # reviewers' indexed-tag copy, vault only
        open_vault.replace_release_ids(
            config.batch_id, release_id_map(engine, config.batch_id, docs), engine.key_id
        )
    with warehouse.session():  # writes only: one short connection
        warehouse.replace("surrogate_view", frame, "batch_id = ?", [config.batch_id])
        warehouse.replace("rewrite_chunks", chunks, "batch_id = ?", [config.batch_id])
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
    from curation.views.surrogates import Scope

    rows = list(docs.select("doc_id", "scope_id", "text").iter_rows())
    scopes = {doc_id: Scope(doc_id, scope_id) for doc_id, scope_id, _ in rows}
    engine.prepare_documents((text, spans.get(doc_id, []), scopes[doc_id]) for doc_id, _, text in rows)
    audit_rows = [(d, engine.audit_copy(t, spans.get(d, []), scopes[d]).text) for d, _, t in rows]
    if not config.rewriting.enabled:
        results = [engine.apply(t, spans.get(d, []), scopes[d]) for d, _, t in rows]
        texts = [r.text for r in results]
        ranges = [[[x.new_start, x.new_end] for x in r.replacements] for r in results]
        return texts, ranges, audit_rows, [], {"replacements": sum(len(r) for r in ranges), "rewriting": False}

    from curation.views.rewriting import Rewriter, surrogate_fallback

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


def release_id_map(engine, batch_id: str, docs: pl.DataFrame) -> list[tuple[str, str, str]]:
    """(id kind, original id, public id) of every doc and scope id of the batch (kept in the vault)."""
    return [
        (column, original, engine.public_id(batch_id, column, original, prefix))
        for column, prefix in RELEASE_ID_COLUMNS.items()
        for original in sorted(set(docs[column].drop_nulls().to_list()))
    ]
