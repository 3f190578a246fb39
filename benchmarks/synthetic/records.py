"""The checks every generated record must pass, and the record layout: fields, ids, canonical JSONL."""

from __future__ import annotations

import json
import re
from typing import Any

from benchmarks.synthetic.context import Ctx


def record_problems(text: str, spans: list[dict[str, Any]], ctx: Ctx | None = None) -> list[str]:
    """Why a generated record is unusable: bad spans, unlabeled repeats of a labeled value, or leaks."""
    problems = []
    ordered = sorted(spans, key=lambda s: (int(s["start"]), int(s["end"])))
    prev_end = 0
    for span in ordered:
        start, end = int(span["start"]), int(span["end"])
        if not 0 <= start < end <= len(text):
            problems.append(f"bad bounds {span}")
        if start < prev_end:
            problems.append(f"overlap at {start}")
        prev_end = max(prev_end, end)
    covered = [False] * len(text)
    for span in ordered:
        for i in range(int(span["start"]), int(span["end"])):
            covered[i] = True
    values = sorted({text[int(s["start"]) : int(s["end"])] for s in ordered})
    for value in values:
        pattern = re.escape(value) if len(value) >= 4 else rf"\b{re.escape(value)}\b"
        for m in re.finditer(pattern, text):
            if not all(covered[m.start() : m.end()]):
                problems.append(f"unlabeled occurrence of {value!r} at {m.start()}")
                break
    if ctx is not None and not ctx.fresh(values):
        problems.append("labeled value occurs in the forbidden data set")
    return problems


def build_record(
    rid: str, kind: str, scope: str, text: str, spans: list[dict[str, Any]], metadata: dict[str, Any]
) -> dict[str, Any]:
    """Assemble a record dict with spans sorted by start."""
    ordered = sorted(spans, key=lambda s: (int(s["start"]), int(s["end"])))
    return {"id": rid, "kind": kind, "scope_id": scope, "text": text, "spans": ordered, "metadata": metadata}


def assign_ids(records: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """Number ``records`` in order as ``<prefix>-0001``, ..."""
    for i, rec in enumerate(records, 1):
        rec["id"] = f"{prefix}-{i:04d}"
    return records


def to_jsonl(records: list[dict[str, Any]]) -> bytes:
    """Canonical JSONL bytes: sorted keys, compact separators, UTF-8, one record per line."""
    lines = [json.dumps(rec, ensure_ascii=False, sort_keys=True, separators=(",", ":")) for rec in records]
    return ("\n".join(lines) + "\n").encode("utf-8")
