"""The canary probe's plan and inputs in the warehouse: what was planted where (fabricated values only), the
held-out texts, and the three training sets read back from the pipeline's tables for the probe."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from curation.evaluation.canary import (
    Canary,
    CanaryCorpus,
    ProbeInputs,
    ProbeSettings,
    TrainingDoc,
    canary_mask_coverage,
)

PLAN_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS canary_plans (batch_id VARCHAR, settings VARCHAR, canaries VARCHAR, "
    "placements VARCHAR, heldout VARCHAR, created_at TIMESTAMP)"
)


def record_plan(warehouse, batch_id: str, corpus: CanaryCorpus, settings: ProbeSettings) -> None:
    """Store what was planted where (fabricated values only) and the held-out texts, for the probe asset."""
    from datetime import UTC, datetime

    with warehouse.transaction() as con:
        con.execute(PLAN_SCHEMA)
        con.execute("DELETE FROM canary_plans WHERE batch_id = ?", [batch_id])
        con.execute(
            "INSERT INTO canary_plans VALUES (?, ?, ?, ?, ?, ?)",
            [
                batch_id,
                json.dumps(settings.to_dict()),
                json.dumps([asdict(c) for c in corpus.canaries]),
                json.dumps(corpus.placements),
                json.dumps([{"text": r["text"], "spans": r.get("spans") or []} for r in corpus.heldout]),
                datetime.now(UTC).replace(tzinfo=None),
            ],
        )


def load_plan(warehouse, batch_id: str) -> tuple[ProbeSettings, list[Canary], list[dict]] | None:
    """(settings, canaries, held-out records {text, spans}) of the batch, or None when it has no canaries."""
    with warehouse.connect() as con:
        con.execute(PLAN_SCHEMA)
        row = con.execute(
            "SELECT settings, canaries, heldout FROM canary_plans WHERE batch_id = ? ORDER BY created_at DESC LIMIT 1",
            [batch_id],
        ).fetchone()
    if row is None:
        return None
    settings = ProbeSettings.from_dict(json.loads(row[0]))
    heldout = [r if isinstance(r, dict) else {"text": r, "spans": []} for r in json.loads(row[2])]
    return settings, [Canary(**c) for c in json.loads(row[1])], heldout


def probe_inputs(warehouse, batch_id: str, canaries: Sequence[Canary], heldout: Sequence[dict]) -> ProbeInputs:
    """The three training sets from the pipeline's tables: raw documents, the training view with its loss
    mask, the surrogate view; plus how much of each canary the loss mask covers."""

    def rows(sql: str) -> list[tuple]:
        return list(warehouse.query(sql, [batch_id]).iter_rows())

    raw = rows("SELECT doc_id, text FROM documents WHERE batch_id = ? ORDER BY doc_id")
    training = rows("SELECT doc_id, text, loss_mask_spans FROM training_view WHERE batch_id = ? ORDER BY doc_id")
    surrogate = rows("SELECT doc_id, text FROM surrogate_view WHERE batch_id = ? ORDER BY doc_id")
    if not raw or not training or not surrogate:
        raise ValueError(f"batch {batch_id!r} lacks documents or views: run the pipeline on it first")
    spans = {d: [(int(s[0]), int(s[1])) for s in json.loads(m or "[]")] for d, _, m in training}
    variants = {
        "raw": [TrainingDoc(t) for _, t in raw],
        "training_view": [TrainingDoc(t, spans[d]) for d, t, _ in training],
        "surrogate": [TrainingDoc(t) for _, t in surrogate],
    }
    coverage = canary_mask_coverage(canaries, {d: t for d, t, _ in training}, spans)
    targets = [[(int(s["start"]), int(s["end"])) for s in r.get("spans", [])] for r in heldout]
    return ProbeInputs(variants, [r["text"] for r in heldout], list(canaries), coverage, targets)
