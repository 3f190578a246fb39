"""Read raw inputs into documents, gold spans and a quarantine that accounts for every record.

Every record seen becomes either a document or a quarantine row whose reason says what is wrong and
what to do, so ``n_input == documents + quarantine`` and nothing disappears silently. Quarantine
rows keep a sha256 of the raw input, never the raw text: rejected records may hold exactly the
private data this pipeline exists to remove.

Locators are relative to the ingested path (``file.jsonl:12``, ``sub/file.csv:row 5``,
``file.parquet:row 3``, ``src/app.py``) so that generated doc ids do not depend on where the
input happens to live on disk.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from curation.core.spans import Span, validate_spans
from curation.ingest.formats import (
    EXPECTED_INPUT,
    SKIP_DIRS,
    TEXT_SUFFIXES,
    decompression_errors,
    open_binary,
    record_format,
)
from curation.labels.label_map import UnknownLabelError, map_label, unknown_label_message

KINDS = frozenset({"text", "code", "chat"})
# Marker and metadata files that Spark / Hadoop / pyarrow write beside Parquet parts: not content.
DATASET_MARKERS = frozenset({"_SUCCESS", "_metadata", "_common_metadata"})
DATASET_MARKER_PREFIXES = ("_committed_", "_started_")

DOCUMENT_SCHEMA = {
    "doc_id": pl.String,
    "batch_id": pl.String,
    "scope_id": pl.String,
    "kind": pl.String,
    "source": pl.String,
    "locator": pl.String,
    "text": pl.String,
    "sha256": pl.String,
    "n_chars": pl.Int64,
    "metadata": pl.String,
}
GOLD_SCHEMA = {"doc_id": pl.String, "start": pl.Int64, "end": pl.Int64, "label": pl.String}
QUARANTINE_SCHEMA = {
    "source": pl.String,
    "locator": pl.String,
    "record_id": pl.String,
    "reason": pl.String,
    "raw_excerpt_hash": pl.String,
}

_SURROGATES = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of invalid UTF-8 bytes


class IngestError(Exception):
    """The input as a whole cannot be ingested (missing path, unknown format)."""


@dataclass(frozen=True)
class FieldMap:
    """Names of the input fields, so differently shaped sources need no pre-processing."""

    id: str = "id"
    text: str = "text"
    scope_id: str = "scope_id"
    kind: str = "kind"
    spans: str = "spans"
    turns: str = "turns"
    metadata: str = "metadata"

    def remap(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record under canonical field names (absent fields are left out)."""
        names = {
            "id": self.id,
            "text": self.text,
            "scope_id": self.scope_id,
            "kind": self.kind,
            "spans": self.spans,
            "turns": self.turns,
            "metadata": self.metadata,
        }
        out = {canon: record[name] for canon, name in names.items() if name in record}
        out["_fields"] = sorted(str(k) for k in record)
        return out


@dataclass(frozen=True)
class IngestResult:
    """Documents, gold spans and quarantine of one ingest, plus the number of records seen."""

    documents: pl.DataFrame
    gold_spans: pl.DataFrame
    quarantine: pl.DataFrame
    n_input: int

    def reconciles(self) -> bool:
        """True when every record seen is accounted for as a document or a quarantine row."""
        return self.n_input == self.documents.height + self.quarantine.height


@dataclass
class _Raw:
    """One input record before validation: canonical fields, or why it could not be parsed."""

    source: str
    locator: str
    raw_hash: str
    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    default_kind: str = "text"


class _Reject(Exception):
    """A record fails validation; the message is the quarantine reason."""


def ingest(
    path: Path,
    *,
    batch_id: str,
    field_map: FieldMap | None = None,
    max_chars: int = 200_000,
    label_map: Mapping[str, str] | None = None,
) -> IngestResult:
    """Ingest a JSONL/Parquet/CSV file or a folder into documents, gold spans and quarantine; gold labels go
    through ``label_map`` (default: the bundled one)."""
    path = Path(path)
    check_input_path(path)
    fmap = field_map or FieldMap()
    collector = _Collector(batch_id, max_chars, label_map)
    if path.is_dir():
        raws = _read_folder(path, fmap, max_chars)
    else:
        raws = _read_records(path, path.name, fmap)
    for raw in raws:
        collector.add(raw)
    return collector.result()


def ingest_unlabeled(path: Path, *, batch_id: str) -> IngestResult:
    """Ingest texts whose labels, if any, are not read (a pool to pick from or to self-train on): the
    spans field is mapped to a name no record has, so a record with malformed spans is still a text."""
    return ingest(path, batch_id=batch_id, field_map=FieldMap(spans="\x00labels ignored"))


def check_input_path(path: Path) -> None:
    """Raise IngestError when ``path`` is not something ingest can read (missing, or an unknown format)."""
    path = Path(path)
    expected = EXPECTED_INPUT
    if not path.exists():
        raise IngestError(f"input {path} does not exist; expected {expected}")
    if not path.is_dir() and record_format(path) is None:
        shown = "".join(path.suffixes[-2:]) or "(no suffix)"
        raise IngestError(
            f"input {path} has unknown format {shown!r}; expected {expected} "
            "(single text or code files are ingested by passing their folder)"
        )


# --- readers: turn files into _Raw records, never raising on bad content ---------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _read_records(path: Path, rel: str, fmap: FieldMap) -> Iterator[_Raw]:
    found = record_format(path)
    if found is None:
        raise IngestError(f"{path} is not a record file")
    fmt, compression = found
    if fmt == "parquet":
        return _read_parquet(path, rel, fmap)
    reader = {"jsonl": _read_jsonl, "json": _read_json, "csv": _read_csv}[fmt]
    return _guard_decompression(reader(path, rel, fmap, compression), path, rel) if compression else reader(
        path, rel, fmap
    )


def _guard_decompression(records: Iterator[_Raw], path: Path, rel: str) -> Iterator[_Raw]:
    """Turn a corrupt or truncated compressed stream into one quarantine row after the last good record,
    instead of an exception that would lose the batch."""
    last = None
    try:
        for record in records:
            last = record.locator
            yield record
    except decompression_errors() as exc:
        where = f"{rel} after {last}" if last else rel
        reason = (
            f"compressed data is corrupt or truncated ({type(exc).__name__}: {exc}); the records before it were "
            "read; re-compress or re-copy the file"
        )
        yield _Raw(str(path), where, _hash_file(path), error=reason)


def _read_jsonl(path: Path, rel: str, fmap: FieldMap, compression: str | None = None) -> Iterator[_Raw]:
    """One record per non-blank line, streamed so large files never sit in memory as one string."""
    with open_binary(path, compression) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            raw = line.rstrip(b"\r\n")
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            yield _parse_json_line(raw, str(path), f"{rel}:{lineno}", fmap)


def _read_json(path: Path, rel: str, fmap: FieldMap, compression: str | None = None) -> Iterator[_Raw]:
    """A ``.json`` file: a JSON array of record objects (``rel:record N``), or JSON Lines under that name."""
    with open_binary(path, compression) as fh:
        data = fh.read()
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not body.lstrip().startswith(b"["):
        yield from _read_jsonl(path, rel, fmap, compression)
        return
    try:
        items = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start}; re-encode the file as UTF-8"
        yield _Raw(str(path), rel, _sha256(data), error=reason)
        return
    except json.JSONDecodeError as exc:
        yield _Raw(
            str(path),
            f"{rel}:{exc.lineno}",
            _sha256(data),
            error=f"malformed JSON array ({exc.msg} at line {exc.lineno} column {exc.colno}); fix it, or write one "
            "object per line as .jsonl",
        )
        return
    for number, item in enumerate(items, 1):
        raw = json.dumps(item, sort_keys=True, ensure_ascii=False).encode("utf-8")
        rec = _Raw(str(path), f"{rel}:record {number}", _sha256(raw))
        if isinstance(item, dict):
            rec.fields = fmap.remap(item)
        else:
            rec.error = f"array element is a JSON {type(item).__name__}, not an object; make each record {{...}}"
        yield rec


def _parse_json_line(raw: bytes, source: str, locator: str, fmap: FieldMap) -> _Raw:
    rec = _Raw(source, locator, _sha256(raw))
    if b"\x00" in raw:
        rec.error = "line contains NUL bytes (binary data); remove or re-export the line as UTF-8 JSON"
        return rec
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        rec.error = f"invalid UTF-8 at byte {exc.start} of the line; re-encode the file as UTF-8"
        return rec
    except json.JSONDecodeError as exc:
        rec.error = f"malformed JSON ({exc.msg} at column {exc.colno}); fix the line so it is one JSON object"
        return rec
    if not isinstance(obj, dict):
        rec.error = f"line is a JSON {type(obj).__name__}, not an object; wrap the record in {{...}}"
        return rec
    rec.fields = fmap.remap(obj)
    return rec


def _read_csv(path: Path, rel: str, fmap: FieldMap, compression: str | None = None) -> Iterator[_Raw]:
    """Rows streamed with their raw bytes kept, so bad rows hash exactly what is on disk.

    A quoted field may span lines, but a row that spans lines and is then malformed (an unclosed or stray
    quote) would swallow the records after it: only its first line is quarantined, naming the line, and
    the lines after it are read again as rows of their own.
    """
    # Process-wide setting: the default 128 KiB cell limit is below max_chars, and oversize cells
    # should reach the max_chars check (an actionable reason) rather than a csv.Error.
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 28))
    header: list[str] | None = None
    row_no = 0
    with open_binary(path, compression) as fh:
        lines = _Lines(fh)
        while (parsed := _next_csv_row(lines)) is not None:
            first_line, consumed, cells, parse_error = parsed
            if cells == [] and parse_error is None:  # a blank line
                continue
            if header is None and cells is not None and parse_error is None:
                header = [c.lstrip("\ufeff") for c in cells]
                continue
            error = parse_error or _csv_row_error(cells or [], header or [])
            if error and len(consumed) > 1:  # a broken quote ran on over later lines: keep only its first
                last_line = consumed[-1][0]
                lines.push_back(consumed[1:])
                consumed = consumed[:1]
                error = (
                    f"broken quoting at line {first_line} of {rel} ({parse_error or 'wrong number of cells'}): "
                    f"the row ran on over lines {first_line + 1}-{last_line}; quarantined line {first_line} only "
                    'and read the lines after it as rows of their own; close the quote or escape it as ""'
                )
            elif parse_error:
                error = f"unparseable CSV row at line {first_line} ({parse_error}); check quoting around this row"
            row_no += 1
            raw = b"".join(line for _, line in consumed)
            rec = _Raw(str(path), f"{rel}:row {row_no}", _sha256(raw.rstrip(b"\r\n")))
            rec.error = error
            if rec.error is None:
                rec.fields = fmap.remap(dict(zip(header or [], cells or [], strict=True)))
            yield rec


class _Lines:
    """Physical lines of a file, numbered, with push-back (so lines swallowed by a broken row are re-read)."""

    def __init__(self, handle) -> None:
        self._handle = handle
        self._pending: list[tuple[int, bytes]] = []
        self._next_no = 1

    def push_back(self, lines: list[tuple[int, bytes]]) -> None:
        self._pending[:0] = lines

    def next(self) -> tuple[int, bytes] | None:
        if self._pending:
            return self._pending.pop(0)
        line = self._handle.readline()
        if not line:
            return None
        self._next_no += 1
        return self._next_no - 1, line


def _next_csv_row(lines: _Lines) -> tuple[int, list[tuple[int, bytes]], list[str] | None, str | None] | None:
    """(first line number, the numbered lines consumed, cells or None, parse error) of the next row."""
    consumed: list[tuple[int, bytes]] = []

    def feed() -> Iterator[str]:
        while (item := lines.next()) is not None:
            consumed.append(item)
            yield item[1].decode("utf-8", "surrogateescape")

    # strict: a quote followed by anything but a delimiter is an error, not silently merged text
    reader = csv.reader(feed(), strict=True)
    try:
        cells, error = next(reader), None
    except StopIteration:
        if not consumed:
            return None
        cells, error = None, "unexpected end of file inside a quoted field"
    except csv.Error as exc:
        cells, error = None, str(exc)
    return consumed[0][0], consumed, cells, error


def _csv_row_error(cells: list[str], header: list[str]) -> str | None:
    if any(_SURROGATES.search(c) for c in cells):
        return "invalid UTF-8 in CSV row; re-save the file as UTF-8"
    if any("\x00" in c for c in cells):
        return "CSV row contains NUL bytes (binary data); remove the row or re-export it as text"
    if len(cells) != len(header):
        return (
            f"CSV row has {len(cells)} cells but the header has {len(header)}; "
            "quote fields that contain commas or newlines"
        )
    return None


def _read_parquet(path: Path, rel: str, fmap: FieldMap) -> Iterator[_Raw]:
    """Rows streamed batch by batch; an unreadable file becomes one quarantine row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    row_no = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
            for row in batch.to_pylist():
                row_no += 1
                raw = json.dumps(row, sort_keys=True, default=str).encode("utf-8")
                rec = _Raw(str(path), f"{rel}:row {row_no}", _sha256(raw))
                rec.fields = fmap.remap(row)
                yield rec
    except (pa.ArrowException, OSError) as exc:
        where = f"{rel}:row {row_no + 1}" if row_no else rel
        reason = f"cannot read Parquet data ({type(exc).__name__}: {exc}); re-export the file"
        yield _Raw(str(path), where, _hash_file(path), error=reason)


def _walk(root: Path) -> Iterator[tuple[Path, str | None]]:
    """Every entry under ``root`` in a deterministic order, with the reason it cannot be read as content
    (None for a regular file, or a symlink to one inside ``root``, which is followed)."""
    inside = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        kept = []
        for name in sorted(d for d in dirnames if d not in SKIP_DIRS):
            folder = Path(dirpath) / name
            if folder.is_symlink():  # never walked: it may loop, or lead out of the delivery
                yield folder, (
                    "symlink to a folder, not followed (it may loop or lead outside the input); "
                    "copy the folder into the input if it belongs to the delivery"
                )
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name == "_READY" or _dataset_marker(name, filenames):  # completeness / metadata markers
                continue
            file = Path(dirpath) / name
            yield file, _entry_problem(file, inside)


def _dataset_marker(name: str, siblings: list[str]) -> bool:
    """Spark / Hadoop / pyarrow bookkeeping beside Parquet parts (``_SUCCESS``, ``.part-0.parquet.crc``)."""
    if name in DATASET_MARKERS or name.startswith(DATASET_MARKER_PREFIXES):
        return True
    return name.startswith(".") and name.endswith(".crc") and (name[1:-4] in siblings or name[1:-4] == "_SUCCESS")


def _entry_problem(file: Path, inside: Path) -> str | None:
    """Why a folder entry is not readable content, or None."""
    if file.is_symlink():
        target = file.resolve()
        if not target.exists():
            return "dangling symlink (its target does not exist); remove it or copy the file in"
        if not target.is_relative_to(inside):
            return (
                "symlink to a file outside the input folder, not followed (a delivery must not pull in files "
                "from elsewhere); copy the file into the input if it belongs to the delivery"
            )
        if not target.is_file():
            return "symlink to something that is not a regular file; replace it with the file itself"
        return None
    if not file.is_file():
        return "not a regular file (a FIFO, socket or device); remove it from the input folder"
    return None


def _read_folder(root: Path, fmap: FieldMap, max_chars: int) -> Iterator[_Raw]:
    for file, problem in _walk(root):
        rel = file.relative_to(root).as_posix()
        if problem is not None:
            link = os.readlink(file) if file.is_symlink() else rel
            yield _Raw(str(file), rel, _sha256(link.encode("utf-8", "surrogateescape")), error=problem)
        elif record_format(file) is not None:
            yield from _read_records(file, rel, fmap)
        else:
            yield _read_text_file(file, rel, max_chars)


def _read_text_file(path: Path, rel: str, max_chars: int) -> _Raw:
    """A whole text/code file as one record with id = relative path."""
    kind = "text" if path.suffix.lower() in TEXT_SUFFIXES else "code"
    rec = _Raw(str(path), rel, "", default_kind=kind)
    if path.stat().st_size > 4 * max_chars + 3:  # cannot fit in max_chars even at 4 bytes/char
        rec.raw_hash = _hash_file(path)
        rec.error = f"file is larger than max_chars={max_chars}; split it or raise max_chars"
        return rec
    data = path.read_bytes()
    rec.raw_hash = _sha256(data)
    if b"\x00" in data:
        rec.error = "binary file (contains NUL bytes); remove it from the input folder if it is not text"
        return rec
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        rec.error = f"invalid UTF-8 at byte {exc.start}; re-encode the file as UTF-8"
        return rec
    rec.fields = {"id": rel, "text": text, "metadata": {"path": rel}}
    return rec


# --- validation: fields -> document row and gold spans, or a _Reject reason -------------------


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _as_id(value: Any, name: str) -> str | None:
    if _blank(value):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Reject(f"'{name}' must be a string or integer, got {type(value).__name__}; fix the field")
    return str(value)


def _json_cell(value: Any, name: str) -> Any:
    """CSV and Parquet cells carry nested fields as JSON strings; decode those."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise _Reject(f"'{name}' is a string but not valid JSON ({exc.msg}); store it as JSON") from None


def _render_turns(value: Any) -> tuple[str, list[list[Any]]]:
    """Chat turns as ``role: content`` lines, with each line's ``[start, end, role]``."""
    turns = _json_cell(value, "turns")
    if not isinstance(turns, list) or not turns:
        raise _Reject("'turns' must be a non-empty list of {role, content} objects; fix the record")
    lines: list[str] = []
    ranges: list[list[Any]] = []
    pos = 0
    for i, turn in enumerate(turns):
        ok = isinstance(turn, dict) and isinstance(turn.get("role"), str)
        if not ok or not isinstance(turn.get("content"), str):
            raise _Reject(f"turn {i} is malformed: need string 'role' and 'content'; fix the turn")
        line = f"{turn['role']}: {turn['content']}"
        ranges.append([pos, pos + len(line), turn["role"]])
        lines.append(line)
        pos += len(line) + 1
    return "\n".join(lines), ranges


def _text_of(fields: dict[str, Any], default_kind: str) -> tuple[str, str, list[list[Any]] | None]:
    """The text, default kind and turn ranges of a record (turns only when text is absent)."""
    text = fields.get("text")
    if _blank(text) and not _blank(fields.get("turns")):
        rendered, ranges = _render_turns(fields["turns"])
        return rendered, "chat", ranges
    if text is None:
        present = ", ".join(fields["_fields"]) if "_fields" in fields else "none"
        raise _Reject(
            f"record has no text (and no turns); fields present: {present}; "
            "add a 'text' field or map yours with FieldMap(text=...)"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise _Reject("text bytes are invalid UTF-8; re-encode the text as UTF-8") from None
    if not isinstance(text, str):
        raise _Reject(f"text must be a string, got {type(text).__name__}; store the text as a string")
    if not text.strip():
        raise _Reject("text is empty or whitespace only; drop the record or fill in its text")
    return text, default_kind, None


def _kind_of(value: Any, default: str) -> str:
    if _blank(value):
        return default
    if not isinstance(value, str) or value not in KINDS:
        shown = repr(value)[:40]
        raise _Reject(f"kind {shown} is not one of {', '.join(sorted(KINDS))}; fix the 'kind' field")
    return value


def _gold_spans(value: Any, n_chars: int, label_map: Mapping[str, str] | None = None) -> list[Span]:
    """Labeled spans on the record, checked against the text so gold data is usable as is."""
    value = None if _blank(value) else _json_cell(value, "spans")
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Reject("'spans' must be a list of {start, end, label} objects; fix the record")
    spans = []
    for i, item in enumerate(value):
        ok = isinstance(item, dict) and isinstance(item.get("label"), str) and item["label"]
        ints = ok and all(type(item.get(k)) is int for k in ("start", "end"))
        if not ints:
            raise _Reject(f"span {i} is malformed: need integer 'start', 'end' and a string 'label'")
        try:
            spans.append(Span(item["start"], item["end"], item["label"], source="gold"))
        except ValueError as exc:
            raise _Reject(f"span {i}: {exc}; fix the offsets") from None
    problems = validate_spans(spans, n_chars)
    if problems:
        raise _Reject("; ".join(problems[:3]) + "; offsets are characters into the text, end exclusive")
    mapped = []
    for i, span in enumerate(spans):  # onto the convention's labels; an unknown one never ships as a tag
        try:
            mapped.append(Span(span.start, span.end, map_label(span.label, label_map), source="gold"))
        except UnknownLabelError:
            raise _Reject(unknown_label_message(span.label, f"span {i}", label_map)) from None
    return mapped


def _metadata_of(value: Any) -> dict[str, Any]:
    value = None if _blank(value) else _json_cell(value, "metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Reject(f"'metadata' must be an object, got {type(value).__name__}; wrap it in {{...}}")
    return dict(value)


@dataclass
class _Collector:
    """Validates records in input order and accumulates rows; first occurrence wins."""

    batch_id: str
    max_chars: int
    label_map: Mapping[str, str] | None = None
    n_input: int = 0
    docs: list[dict[str, Any]] = field(default_factory=list)
    gold: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    by_id: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc_id -> (sha256, locator)
    by_sha: dict[str, tuple[str, str]] = field(default_factory=dict)  # sha256 -> (doc_id, locator)

    def add(self, raw: _Raw) -> None:
        self.n_input += 1
        record_id = None
        try:
            if raw.error:
                raise _Reject(raw.error)
            record_id = _as_id(raw.fields.get("id"), "id")
            doc, spans = self._build(raw, record_id)
            self._check_duplicate(doc)
        except _Reject as exc:
            self.rejected.append(
                {
                    "source": raw.source,
                    "locator": raw.locator,
                    "record_id": record_id,
                    "reason": str(exc),
                    "raw_excerpt_hash": raw.raw_hash,
                }
            )
            return
        self.by_id[doc["doc_id"]] = (doc["sha256"], raw.locator)
        self.by_sha[doc["sha256"]] = (doc["doc_id"], raw.locator)
        self.docs.append(doc)
        self.gold.extend({"doc_id": doc["doc_id"], "start": s.start, "end": s.end, "label": s.label} for s in spans)

    def _build(self, raw: _Raw, record_id: str | None) -> tuple[dict[str, Any], list[Span]]:
        fields = raw.fields
        text, default_kind, turn_ranges = _text_of(fields, raw.default_kind)
        if "\x00" in text:
            raise _Reject("text contains NUL characters (binary data); remove them or drop the record")
        if len(text) > self.max_chars:
            raise _Reject(f"text has {len(text)} chars, over max_chars={self.max_chars}; split the record")
        kind = _kind_of(fields.get("kind"), default_kind)
        spans = _gold_spans(fields.get("spans"), len(text), self.label_map)
        metadata = _metadata_of(fields.get("metadata"))
        if turn_ranges is not None:
            metadata["turns"] = turn_ranges
        sha = _sha256(text.encode("utf-8"))
        doc_id = record_id or _sha256(f"{raw.locator}\n{text}".encode())[:16]
        scope_id = _as_id(fields.get("scope_id"), "scope_id") or doc_id
        doc = {
            "doc_id": doc_id,
            "batch_id": self.batch_id,
            "scope_id": scope_id,
            "kind": kind,
            "source": raw.source,
            "locator": raw.locator,
            "text": text,
            "sha256": sha,
            "n_chars": len(text),
            "metadata": json.dumps(metadata, sort_keys=True, ensure_ascii=False, default=str),
        }
        return doc, spans

    def _check_duplicate(self, doc: dict[str, Any]) -> None:
        seen = self.by_id.get(doc["doc_id"])
        if seen is not None and seen[0] != doc["sha256"]:
            raise _Reject(
                f"duplicate id {doc['doc_id']!r} with different text, first seen at {seen[1]}; give records unique ids"
            )
        first = self.by_sha.get(doc["sha256"])
        if first is not None:
            raise _Reject(
                f"duplicate of doc_id {first[0]} (same sha256), first seen at {first[1]}; kept the first copy only"
            )

    def result(self) -> IngestResult:
        return IngestResult(
            documents=pl.DataFrame(self.docs, schema=DOCUMENT_SCHEMA, orient="row"),
            gold_spans=pl.DataFrame(self.gold, schema=GOLD_SCHEMA, orient="row"),
            quarantine=pl.DataFrame(self.rejected, schema=QUARANTINE_SCHEMA, orient="row"),
            n_input=self.n_input,
        )
