"""Labeled (gold) data: one JSONL format, converters into it, and a deterministic split.

Format, one record per line::

    {"id": "...", "text": "...", "spans": [{"start": 0, "end": 5, "label": "PERSON"}],
     "kind": "text", "scope_id": "..."}            # kind and scope_id optional

Evaluation is only as good as its gold offsets, so loading is strict and every error names the
file and line (or record) to fix.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.languages import get_language
from curation.core.spans import Span
from curation.labels.label_map import UnknownLabelError, map_label, unknown_label_message

KINDS = frozenset({"text", "code", "chat"})


class LabeledFormatError(ValueError):
    """Labeled data that cannot be used; the message names the file and line or record."""


@dataclass
class LabeledRecord:
    """A text with its gold spans; ``scope_id`` groups records that must stay together."""

    id: str
    text: str
    spans: list[Span] = field(default_factory=list)
    kind: str = "text"
    scope_id: str | None = None
    language: str | None = None  # a language code (curation.core.languages); None: the domain's

    def to_dict(self) -> dict[str, Any]:
        """The JSONL form; default kind and missing scope are left out to keep files small."""
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "spans": [_span_dict(s) for s in self.spans],
        }
        if self.kind != "text":
            out["kind"] = self.kind
        if self.scope_id is not None:
            out["scope_id"] = self.scope_id
        if self.language is not None:
            out["language"] = self.language
        return out

    @classmethod
    def from_dict(cls, data: Any, label_map: Mapping[str, str] | None = None) -> LabeledRecord:
        """Validate and build a record; labels go through the label map (default: the bundled one for
        TAB, CredData and presidio-research names); raises ValueError/TypeError saying what is wrong."""
        if not isinstance(data, dict):
            raise TypeError(f"expected a JSON object, got {type(data).__name__}")
        rec_id = data.get("id")
        if isinstance(rec_id, bool) or not isinstance(rec_id, str | int) or rec_id == "":
            raise ValueError("'id' must be a non-empty string or integer")
        text = data.get("text")
        if not isinstance(text, str):
            raise TypeError(f"'text' must be a string, got {type(text).__name__}")
        kind = data.get("kind") or "text"
        if kind not in KINDS:
            raise ValueError(f"'kind' {kind!r} is not one of {', '.join(sorted(KINDS))}")
        scope_id = data.get("scope_id")
        if scope_id is not None and not isinstance(scope_id, str | int):
            raise ValueError("'scope_id' must be a string or integer")
        language = data.get("language")
        if language is not None:
            if not isinstance(language, str):
                raise ValueError("'language' must be a language code such as 'en' or 'es'")
            language = get_language(language).code  # LanguageError (a ValueError) names the supported ones
        spans = _parse_spans(data.get("spans"), text, label_map)
        return cls(str(rec_id), text, spans, kind, None if scope_id is None else str(scope_id), language)


def _span_dict(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {"start": span.start, "end": span.end, "label": span.label}
    if span.source.startswith("gold:"):
        out["identifier"] = span.source.split(":", 1)[1]
    return out


def _parse_spans(value: Any, text: str, label_map: Mapping[str, str] | None = None) -> list[Span]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError("'spans' must be a list of {start, end, label} objects")
    spans = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not all(type(item.get(k)) is int for k in ("start", "end")):
            raise ValueError(f"span {i} needs integer 'start' and 'end'")
        label = item.get("label")
        if not isinstance(label, str) or not label:
            raise ValueError(f"span {i} needs a non-empty string 'label'")
        start, end = item["start"], item["end"]
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span {i} [{start}, {end}) is empty or outside the text ({len(text)} chars)")
        identifier = item.get("identifier")
        if identifier == "NO_MASK":  # TAB: a mention the annotators chose not to mask is no target
            continue
        try:
            mapped = map_label(label, label_map)
        except UnknownLabelError:
            raise ValueError(unknown_label_message(label, f"span {i}", label_map)) from None
        # TAB's DIRECT/QUASI decision rides on the source, for entity-level recall per identifier type
        source = f"gold:{identifier}" if isinstance(identifier, str) and identifier else "gold"
        spans.append(Span(start, end, mapped, source=source))
    return spans


def load_labeled(path: Path, label_map: Mapping[str, str] | None = None) -> list[LabeledRecord]:
    """Read labeled JSONL line by line; blank lines are skipped, ids must be unique; labels are mapped
    onto the convention's through ``label_map`` (default: the bundled map; a user's vocabulary comes from
    ``labelmap.load_label_map``). An unknown label is an error naming it, the line and the known labels."""
    path = Path(path)
    records: list[LabeledRecord] = []
    first_line: dict[str, int] = {}
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                rec = LabeledRecord.from_dict(json.loads(raw.decode("utf-8-sig")), label_map)
            except UnicodeDecodeError as exc:
                raise LabeledFormatError(f"{path}:{lineno}: invalid UTF-8 at byte {exc.start}") from None
            except json.JSONDecodeError as exc:
                raise LabeledFormatError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from None
            except (ValueError, TypeError) as exc:
                raise LabeledFormatError(f"{path}:{lineno}: {exc}") from None
            if rec.id in first_line:
                raise LabeledFormatError(
                    f"{path}:{lineno}: duplicate id {rec.id!r} (first at line {first_line[rec.id]})"
                )
            first_line[rec.id] = lineno
            records.append(rec)
    return records


def write_labeled(path: Path, records: Iterable[LabeledRecord]) -> None:
    """Write labeled JSONL via a temporary file, so readers never see a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(json.dumps(rec.to_dict()) + "\n")
    os.replace(tmp, path)


def from_presidio_research_json(path: Path, *, id_prefix: str = "ps-") -> list[LabeledRecord]:
    """Convert a presidio-research dataset (JSON list of ``full_text`` + ``spans``).

    Ids are ``<id_prefix><index>``; entity types are kept as labels, spans sorted by offset.
    """
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise LabeledFormatError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    records = []
    for index, item in enumerate(data):
        try:
            records.append(_presidio_record(item, f"{id_prefix}{index}"))
        except (ValueError, KeyError, TypeError) as exc:
            raise LabeledFormatError(f"{path}: record {index}: {exc}") from None
    return records


def _presidio_record(item: dict[str, Any], rec_id: str) -> LabeledRecord:
    text = item["full_text"]
    if not isinstance(text, str):
        raise TypeError("'full_text' must be a string")
    spans = []
    for i, span in enumerate(item.get("spans") or []):
        start, end = int(span["start_position"]), int(span["end_position"])
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span {i} [{start}, {end}) is empty or outside the text ({len(text)} chars)")
        value = span.get("entity_value")
        if value is not None and text[start:end] != value:
            raise ValueError(f"span {i} [{start}, {end}) does not match its entity_value")
        spans.append(Span(start, end, str(span["entity_type"]), source="gold"))
    return LabeledRecord(rec_id, text, sorted(spans, key=lambda s: (s.start, s.end, s.label)))


def from_brat(txt_path: Path, ann_path: Path, *, record_id: str | None = None) -> LabeledRecord:
    """Convert one BRAT standoff pair; a discontinuous entity gives one span per fragment.

    Only text-bound (``T``) lines are read; relations, events, attributes and notes are ignored.
    The text is read without newline translation because BRAT offsets count ``\\r`` too.
    """
    txt_path, ann_path = Path(txt_path), Path(ann_path)
    with txt_path.open(encoding="utf-8", newline="") as fh:
        text = fh.read()
    spans = []
    with ann_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.startswith("T"):
                continue
            try:
                spans.extend(_brat_spans(line.rstrip("\r\n"), len(text)))
            except ValueError as exc:
                raise LabeledFormatError(f"{ann_path}:{lineno}: {exc}") from None
    spans.sort(key=lambda s: (s.start, s.end, s.label))
    return LabeledRecord(record_id or txt_path.stem, text, spans)


def _brat_spans(line: str, n_chars: int) -> list[Span]:
    parts = line.split("\t")
    if len(parts) < 2 or " " not in parts[1]:
        raise ValueError("expected 'T<n>\\tLABEL start end[;start end]\\ttext'")
    label, offsets = parts[1].split(" ", 1)
    spans = []
    for fragment in offsets.split(";"):
        bounds = fragment.split()
        if len(bounds) != 2 or not all(b.isdigit() for b in bounds):
            raise ValueError(f"bad offsets {fragment!r}; expected 'start end'")
        start, end = int(bounds[0]), int(bounds[1])
        if not start < end <= n_chars:
            raise ValueError(f"fragment [{start}, {end}) is empty or outside the text ({n_chars} chars)")
        spans.append(Span(start, end, label, source="gold"))
    return spans


def split_records(
    records: Sequence[LabeledRecord], fraction: float, seed: int = 0
) -> tuple[list[LabeledRecord], list[LabeledRecord]]:
    """Split into ``(a, b)`` with about ``fraction`` of records in ``a``, the same on every run.

    Records sharing a ``scope_id`` (else their id) stay on one side so near-copies cannot leak
    across the split. Groups are ordered by a seeded hash, so the result does not depend on input
    order; both sides keep the input order.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be within [0, 1], got {fraction}")
    groups: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        groups.setdefault(rec.scope_id or rec.id, []).append(i)

    def rank(key: str) -> str:
        return hashlib.sha256(f"{seed}\x00{key}".encode()).hexdigest()

    target = round(fraction * len(records))
    in_a: set[int] = set()
    for key in sorted(groups, key=rank):
        if len(in_a) >= target:
            break
        in_a.update(groups[key])
    a = [rec for i, rec in enumerate(records) if i in in_a]
    b = [rec for i, rec in enumerate(records) if i not in in_a]
    return a, b
