"""The release text of a batch as the gates read it, and the original values it must not contain.

Below the gates and the stages: the surrogate stage registers the same originals the leak gate checks for,
and the residual signals scan the same original-only text as the leak gate.
"""

from __future__ import annotations

import hashlib
import json
import re

from curation.core.spans import blanked
from curation.core.warehouse import Warehouse


def release_texts(warehouse: Warehouse, batch_id: str) -> list[tuple[str, str]]:
    """(doc_id, text) of every view that goes into a release: surrogate and redacted."""
    frame = warehouse.query(
        "SELECT 'surrogate:' || doc_id AS id, text FROM surrogate_view WHERE batch_id = ? "
        "UNION ALL SELECT 'redacted:' || doc_id, text FROM redacted_view WHERE batch_id = ? ORDER BY 1",
        [batch_id, batch_id],
    )
    return list(frame.iter_rows())


TAG = re.compile(r"\[[A-Z][A-Z_]*(?:_\d+)?\]")


def original_text_only(warehouse: Warehouse, batch_id: str) -> list[tuple[str, str]]:
    """Release texts with the parts we wrote (surrogates, typed tags) blanked out, offsets kept.

    A fake name that happens to equal a real name elsewhere in the batch is not a leak; an original
    value left in untouched text is.
    """
    frame = warehouse.query(
        "SELECT 'surrogate:' || doc_id AS id, text, replaced_ranges FROM surrogate_view WHERE batch_id = ? "
        "UNION ALL SELECT 'redacted:' || doc_id, text, '[]' FROM redacted_view WHERE batch_id = ? ORDER BY 1",
        [batch_id, batch_id],
    )
    return [
        (doc_id, blanked(text, [*json.loads(ranges or "[]"), *(m.span() for m in TAG.finditer(text))]))
        for doc_id, text, ranges in frame.iter_rows()
    ]


def content_digest(warehouse: Warehouse, batch_id: str) -> str:
    """Digest of the release text: gate results are valid only for exactly this content."""
    h = hashlib.sha256()
    for doc_id, text in release_texts(warehouse, batch_id):
        h.update(doc_id.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


def original_values(warehouse: Warehouse, batch_id: str) -> list[tuple[str, str]]:
    """(label, value) of every masked span and every gold target value of the batch."""
    frame = warehouse.query(
        'SELECT m.label, substr(d.text, m."start" + 1, m."end" - m."start") AS value FROM mask_spans m '
        "JOIN documents d USING (doc_id) WHERE m.batch_id = ? AND d.batch_id = ? "
        'UNION SELECT g.label, substr(d.text, g."start" + 1, g."end" - g."start") FROM gold_spans g '
        "JOIN documents d USING (doc_id, batch_id) WHERE g.dataset = 'corpus' AND d.batch_id = ?",
        [batch_id, batch_id, batch_id],
    )
    return list(frame.iter_rows())
