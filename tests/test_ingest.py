"""Ingest: every format reads, every rejection is quarantined with a reason, counts reconcile."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest.readers import (
    DOCUMENT_SCHEMA,
    GOLD_SCHEMA,
    QUARANTINE_SCHEMA,
    FieldMap,
    IngestError,
    IngestResult,
    ingest,
)

SECRET = "hunter2-Very-Private"


def _write_jsonl(path: Path, rows: list[object]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _assert_consistent(result: IngestResult) -> None:
    assert result.reconciles()
    assert result.n_input == result.documents.height + result.quarantine.height
    assert dict(result.documents.schema) == DOCUMENT_SCHEMA
    assert dict(result.gold_spans.schema) == GOLD_SCHEMA
    assert dict(result.quarantine.schema) == QUARANTINE_SCHEMA


def _only_reason(result: IngestResult) -> str:
    assert result.quarantine.height == 1, result.quarantine.to_dicts()
    return result.quarantine["reason"][0]


def test_jsonl_ingests_documents_and_gold_spans(tmp_path: Path) -> None:
    src = _write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"id": "a", "text": "Call Ann now", "spans": [{"start": 5, "end": 8, "label": "PERSON"}]},
            {"id": 7, "text": "def f(): pass", "kind": "code", "scope_id": "repo-1", "metadata": {"k": 1}},
        ],
    )
    result = ingest(src, batch_id="b1")
    _assert_consistent(result)
    docs = result.documents.to_dicts()
    assert [d["doc_id"] for d in docs] == ["a", "7"]
    first, second = docs
    assert first["locator"] == "data.jsonl:1" and second["locator"] == "data.jsonl:2"
    assert first["source"] == str(src) and first["batch_id"] == "b1"
    assert first["scope_id"] == "a" and second["scope_id"] == "repo-1"
    assert first["kind"] == "text" and second["kind"] == "code"
    assert first["sha256"] == hashlib.sha256(b"Call Ann now").hexdigest()
    assert first["n_chars"] == 12
    assert json.loads(second["metadata"]) == {"k": 1}
    assert result.gold_spans.to_dicts() == [{"doc_id": "a", "start": 5, "end": 8, "label": "PERSON"}]
    assert result.quarantine.height == 0


def test_blank_lines_are_not_records(tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text('{"id": "a", "text": "x"}\n\n   \n{"id": "b", "text": "y"}\n', encoding="utf-8")
    result = ingest(src, batch_id="b")
    assert result.n_input == 2 and result.documents["locator"].to_list() == ["d.jsonl:1", "d.jsonl:4"]


def test_csv_ingests_with_json_cells(tmp_path: Path) -> None:
    src = tmp_path / "data.csv"
    spans = json.dumps([{"start": 0, "end": 3, "label": "PERSON"}]).replace('"', '""')
    src.write_text(f'id,text,spans,kind\nr1,"Ann, hello",,\nr2,"Bob said\nhi","{spans}",chat\n', encoding="utf-8")
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    docs = result.documents.to_dicts()
    assert [d["locator"] for d in docs] == ["data.csv:row 1", "data.csv:row 2"]
    assert docs[0]["text"] == "Ann, hello" and docs[1]["text"] == "Bob said\nhi"
    assert docs[1]["kind"] == "chat"
    assert result.gold_spans.to_dicts() == [{"doc_id": "r2", "start": 0, "end": 3, "label": "PERSON"}]


def test_parquet_ingests_with_struct_spans(tmp_path: Path) -> None:
    src = tmp_path / "data.parquet"
    table = pa.table(
        {
            "id": ["p1", "p2", "p3"],
            "text": ["Ann here", "no pii", "Bob there"],
            "spans": [
                [{"start": 0, "end": 3, "label": "PERSON"}],
                [],
                [{"start": 0, "end": 3, "label": "PERSON"}],
            ],
        }
    )
    pq.write_table(table, src)
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert result.documents["locator"].to_list() == [
        "data.parquet:row 1",
        "data.parquet:row 2",
        "data.parquet:row 3",
    ]
    assert result.gold_spans["doc_id"].to_list() == ["p1", "p3"]


def test_unreadable_parquet_is_quarantined(tmp_path: Path) -> None:
    src = tmp_path / "broken.parquet"
    src.write_bytes(b"not a parquet file at all")
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert "cannot read Parquet" in _only_reason(result)
    assert result.quarantine["raw_excerpt_hash"][0] == hashlib.sha256(src.read_bytes()).hexdigest()


def test_chat_turns_render_with_ranges(tmp_path: Path) -> None:
    turns = [{"role": "user", "content": "hi, I'm Ann"}, {"role": "assistant", "content": "Hello Ann"}]
    src = _write_jsonl(tmp_path / "chat.jsonl", [{"id": "c1", "turns": turns}])
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    doc = result.documents.row(0, named=True)
    assert doc["text"] == "user: hi, I'm Ann\nassistant: Hello Ann"
    assert doc["kind"] == "chat"
    ranges = json.loads(doc["metadata"])["turns"]
    assert ranges == [[0, 17, "user"], [18, 38, "assistant"]]
    assert [doc["text"][s:e] for s, e, _ in ranges] == doc["text"].split("\n")


def test_field_map_renames_fields(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "d.jsonl", [{"uid": "u1", "body": "hello", "group": "g", "type": "code"}])
    fmap = FieldMap(id="uid", text="body", scope_id="group", kind="type")
    doc = ingest(src, batch_id="b", field_map=fmap).documents.row(0, named=True)
    assert (doc["doc_id"], doc["text"], doc["scope_id"], doc["kind"]) == ("u1", "hello", "g", "code")


REJECTIONS = [
    pytest.param('{"id": "x", "text": "abc"', "malformed JSON", id="malformed-json"),
    pytest.param('["a list"]', "not an object", id="not-object"),
    pytest.param({"id": "x"}, "no text", id="missing-text"),
    pytest.param({"id": "x", "text": "   "}, "empty", id="empty-text"),
    pytest.param({"id": "x", "text": 42}, "must be a string", id="non-string-text"),
    pytest.param({"id": "x", "text": "a\u0000b"}, "NUL", id="nul-in-text"),
    pytest.param({"id": "x", "text": "abc", "kind": "poem"}, "not one of chat, code, text", id="bad-kind"),
    pytest.param(
        {"id": "x", "text": "abc", "spans": [{"start": 1, "end": 9, "label": "P"}]},
        "past the text",
        id="span-oob",
    ),
    pytest.param({"id": "x", "text": "abc", "spans": [{"start": 2, "end": 1, "label": "P"}]}, "span 0", id="span-rev"),
    pytest.param({"id": "x", "text": "abc", "spans": [{"start": 0, "end": 1}]}, "malformed", id="span-no-label"),
    pytest.param(  # never a literal [NOT_A_LABEL] tag in a release: the record is quarantined, naming the label
        {"id": "x", "text": "abc", "spans": [{"start": 0, "end": 1, "label": "NOT_A_LABEL"}]},
        "unknown label 'NOT_A_LABEL'; known labels: ACCOUNT_ID",
        id="span-unknown-label",
    ),
    pytest.param({"id": "x", "text": "abc", "spans": "nope"}, "not valid JSON", id="spans-bad-json"),
    pytest.param({"id": "x", "text": "abc", "spans": 5}, "'spans' must be a list", id="spans-not-list"),
    pytest.param({"id": "x", "text": "abc", "metadata": [1]}, "'metadata' must be an object", id="bad-metadata"),
    pytest.param({"id": ["x"], "text": "abc"}, "'id' must be a string or integer", id="bad-id"),
    pytest.param({"id": "x", "turns": [{"role": "user"}]}, "turn 0 is malformed", id="bad-turn"),
    pytest.param({"id": "x", "text": "y" * 51}, "over max_chars=50", id="oversize"),
]


@pytest.mark.parametrize(("row", "expected"), REJECTIONS)
def test_each_rejection_is_quarantined(tmp_path: Path, row: object, expected: str) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", [{"id": "ok", "text": "fine"}, row])
    result = ingest(src, batch_id="b", max_chars=50)
    _assert_consistent(result)
    assert result.n_input == 2 and result.documents["doc_id"].to_list() == ["ok"]
    reason = _only_reason(result)
    assert expected in reason
    assert result.quarantine["locator"][0] == "in.jsonl:2"
    raw_line = (row if isinstance(row, str) else json.dumps(row)).encode()
    assert result.quarantine["raw_excerpt_hash"][0] == hashlib.sha256(raw_line).hexdigest()


def test_binary_and_invalid_utf8_lines(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff\xfe"}\n{"id": "c", "text": "x\x00"}\n')
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    reasons = result.quarantine["reason"].to_list()
    assert "invalid UTF-8" in reasons[0] and "NUL" in reasons[1]
    assert result.quarantine["locator"].to_list() == ["in.jsonl:2", "in.jsonl:3"]


def test_duplicate_id_with_different_text_keeps_first(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "one"}, {"id": "a", "text": "two"}])
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert result.documents["text"].to_list() == ["one"]
    reason = _only_reason(result)
    assert "duplicate id 'a'" in reason and "first seen at in.jsonl:1" in reason and "unique ids" in reason
    assert result.quarantine["record_id"][0] == "a"


def test_exact_duplicate_text_is_counted_not_dropped(tmp_path: Path) -> None:
    rows = [{"id": "a", "text": "same"}, {"id": "b", "text": "same"}, {"id": "a", "text": "same"}]
    result = ingest(_write_jsonl(tmp_path / "in.jsonl", rows), batch_id="b")
    _assert_consistent(result)
    assert result.documents["doc_id"].to_list() == ["a"]
    assert result.quarantine["record_id"].to_list() == ["b", "a"]
    assert all("duplicate of doc_id a (same sha256)" in r for r in result.quarantine["reason"])


def test_quarantine_never_holds_raw_text(tmp_path: Path) -> None:
    rows = [f'{{"text": "{SECRET}"', {"id": "x", "text": SECRET, "kind": "bad"}, {"text": SECRET * 10}]
    result = ingest(_write_jsonl(tmp_path / "in.jsonl", rows), batch_id="b", max_chars=100)
    assert result.quarantine.height == 3
    for row in result.quarantine.iter_rows():
        assert all(SECRET not in (cell or "") for cell in row)


def test_ids_are_stable_across_runs(tmp_path: Path) -> None:
    rows = [{"text": "no id here"}, {"text": "nor here"}, {"id": "given", "text": "has one"}]
    src = _write_jsonl(tmp_path / "in.jsonl", rows)
    first = ingest(src, batch_id="b1").documents["doc_id"].to_list()
    second = ingest(src, batch_id="b2").documents["doc_id"].to_list()
    assert first == second and first[2] == "given"
    assert len(first[0]) == 16 and first[0] == hashlib.sha256(b"in.jsonl:1\nno id here").hexdigest()[:16]
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    copy = moved / "in.jsonl"
    copy.write_bytes(src.read_bytes())
    assert ingest(copy, batch_id="b3").documents["doc_id"].to_list() == first


def test_folder_ingestion(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".git").mkdir()
    (root / "src" / "app.py").write_text("API_KEY = 'abc'\n", encoding="utf-8")
    (root / ".env").write_text("DB_PASSWORD=pw\n", encoding="utf-8")
    (root / "Dockerfile").write_text("FROM python:3.11\n", encoding="utf-8")
    (root / "docs" / "notes.md").write_text("# Notes\nAnn wrote this.\n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (root / "latin1.txt").write_bytes(b"caf\xe9\n")
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    _write_jsonl(root / "docs" / "records.jsonl", [{"id": "r1", "text": "record text"}, "{oops"])
    result = ingest(root, batch_id="b")
    _assert_consistent(result)
    docs = {d["doc_id"]: d for d in result.documents.to_dicts()}
    assert set(docs) == {".env", "Dockerfile", "docs/notes.md", "src/app.py", "r1"}
    assert docs["src/app.py"]["kind"] == "code" and docs[".env"]["kind"] == "code"
    assert docs["docs/notes.md"]["kind"] == "text"
    assert json.loads(docs["src/app.py"]["metadata"]) == {"path": "src/app.py"}
    assert docs["src/app.py"]["locator"] == "src/app.py"
    assert docs["r1"]["locator"] == "docs/records.jsonl:1"
    quarantine = {q["locator"]: q["reason"] for q in result.quarantine.to_dicts()}
    assert set(quarantine) == {"logo.png", "latin1.txt", "docs/records.jsonl:2"}
    assert "binary file" in quarantine["logo.png"] and "invalid UTF-8" in quarantine["latin1.txt"]


def test_csv_bad_rows_are_quarantined(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_bytes(b"id,text\n1,good\n2,caf\xe9\n3,a\x00b\n4,too,many\n5,\n")
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert result.documents["doc_id"].to_list() == ["1"]
    reasons = dict(zip(result.quarantine["locator"], result.quarantine["reason"], strict=True))
    assert "invalid UTF-8" in reasons["in.csv:row 2"]
    assert "NUL" in reasons["in.csv:row 3"]
    assert "3 cells but the header has 2" in reasons["in.csv:row 4"]
    assert "empty" in reasons["in.csv:row 5"]
    assert result.quarantine["raw_excerpt_hash"][0] == hashlib.sha256(b"2,caf\xe9").hexdigest()


def test_csv_without_text_column_names_the_fix(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("id,body\n1,hello\n", encoding="utf-8")
    reason = _only_reason(ingest(src, batch_id="b"))
    assert "fields present: body, id" in reason and "FieldMap(text=...)" in reason


def test_missing_path_and_unknown_format_raise(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="does not exist"):
        ingest(tmp_path / "nope.jsonl", batch_id="b")
    odd = tmp_path / "data.xlsx"
    odd.write_bytes(b"PK")
    with pytest.raises(IngestError, match=r"unknown format '\.xlsx'.*expected a \.jsonl"):
        ingest(odd, batch_id="b")


def test_large_jsonl_streams(tmp_path: Path) -> None:
    src = tmp_path / "big.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(5000):
            fh.write(json.dumps({"id": f"d{i}", "text": f"record number {i}"}) + "\n")
    result = ingest(src, batch_id="b")
    assert result.documents.height == 5000 and result.reconciles()
    assert isinstance(result.documents, pl.DataFrame)


def test_csv_broken_quote_does_not_swallow_the_next_records(tmp_path: Path) -> None:
    """An unclosed quote would make the parser read the following lines as part of one cell: the broken line
    is quarantined by line number and the good records after it are still documents."""
    src = tmp_path / "in.csv"
    src.write_text('id,text,kind\n1,"broken text,text\n2,good record,text\n3,another good,text\n', encoding="utf-8")
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert result.n_input == 3
    assert result.documents["doc_id"].to_list() == ["2", "3"]
    assert result.documents["text"].to_list() == ["good record", "another good"]
    (reason,) = result.quarantine["reason"].to_list()
    assert "broken quoting at line 2 of in.csv" in reason and "lines 3-4" in reason
    assert result.quarantine["raw_excerpt_hash"][0] == hashlib.sha256(b'1,"broken text,text').hexdigest()


def test_csv_broken_quote_that_closes_later_is_not_merged_silently(tmp_path: Path) -> None:
    """The quote closes on a later line, so the merged row even has the right number of cells: the stray
    quote is still caught (strict parsing) instead of shipping three records as one document."""
    src = tmp_path / "in.csv"
    src.write_text('id,text\n1,"broken\n2,good record\n3,"quoted" word\n4,fine\n', encoding="utf-8")
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert result.documents["doc_id"].to_list() == ["2", "4"]
    reasons = dict(zip(result.quarantine["locator"], result.quarantine["reason"], strict=True))
    assert "broken quoting at line 2" in reasons["in.csv:row 1"]
    assert "line 4" in reasons["in.csv:row 3"]


def test_csv_multiline_quoted_field_is_one_record(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text('id,text\n1,"line one\nline two, with a comma"\n2,next\n', encoding="utf-8")
    result = ingest(src, batch_id="b")
    _assert_consistent(result)
    assert result.documents["text"].to_list() == ["line one\nline two, with a comma", "next"]
    assert result.quarantine.height == 0


def test_folder_symlinks_are_followed_or_quarantined(tmp_path: Path) -> None:
    """A symlink is never dropped: to a file inside the folder it is followed, anything else is quarantined
    with a reason (a delivery must not pull in files from outside itself)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("a private file elsewhere on the machine\n", encoding="utf-8")
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("the original notes\n", encoding="utf-8")
    (root / "sub" / "data.md").write_text("# data\n", encoding="utf-8")
    (root / "alias.md").symlink_to(root / "sub" / "data.md")  # inside: followed
    (root / "escape.txt").symlink_to(outside)
    (root / "dangling.txt").symlink_to(root / "missing.txt")
    (root / "loop").symlink_to(root / "sub", target_is_directory=True)
    result = ingest(root, batch_id="b")
    _assert_consistent(result)
    assert result.n_input == 6
    assert sorted(result.documents["doc_id"]) == ["alias.md", "notes.txt"]
    reasons = dict(zip(result.quarantine["locator"], result.quarantine["reason"], strict=True))
    assert set(reasons) == {"escape.txt", "dangling.txt", "loop", "sub/data.md"}
    assert "outside the input folder" in reasons["escape.txt"]
    assert "dangling symlink" in reasons["dangling.txt"]
    assert "symlink to a folder" in reasons["loop"]
    assert "duplicate of doc_id alias.md" in reasons["sub/data.md"]
    assert "private file" not in " ".join(result.documents["text"])


def test_folder_fifo_is_quarantined_not_opened(tmp_path: Path) -> None:
    import os

    root = tmp_path / "in"
    root.mkdir()
    (root / "a.txt").write_text("text\n", encoding="utf-8")
    os.mkfifo(root / "pipe")
    result = ingest(root, batch_id="b")
    _assert_consistent(result)
    assert result.documents["doc_id"].to_list() == ["a.txt"]
    assert "not a regular file" in result.quarantine["reason"][0]


ROWS = [{"id": f"r{i}", "text": f"Record {i} from Dana at dana{i}@example.org"} for i in range(3)]


def _compress(data: bytes, codec: str) -> bytes:
    import bz2
    import gzip
    import lzma

    import zstandard

    return {
        "gz": gzip.compress,
        "bz2": bz2.compress,
        "xz": lzma.compress,
        "zst": zstandard.ZstdCompressor().compress,
    }[codec](data)


@pytest.mark.parametrize("codec", ["gz", "zst", "bz2", "xz"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_compressed_record_files_read_like_plain_ones(tmp_path: Path, fmt: str, codec: str) -> None:
    plain = tmp_path / f"plain.{fmt}"
    if fmt == "jsonl":
        _write_jsonl(plain, ROWS)
    else:
        pl.DataFrame(ROWS).write_csv(plain)
    packed = tmp_path / f"packed.{fmt}.{codec}"
    packed.write_bytes(_compress(plain.read_bytes(), codec))
    expected, got = ingest(plain, batch_id="b"), ingest(packed, batch_id="b")
    _assert_consistent(got)
    assert got.documents["text"].to_list() == expected.documents["text"].to_list()
    assert got.documents["doc_id"].to_list() == expected.documents["doc_id"].to_list()
    assert got.documents["locator"][1] == f"packed.{fmt}.{codec}:" + ("2" if fmt == "jsonl" else "row 2")


def test_truncated_gzip_keeps_the_records_before_and_quarantines_the_rest(tmp_path: Path) -> None:
    import gzip

    lines = "".join(json.dumps({"id": f"r{i}", "text": f"record number {i} " * 40}) + "\n" for i in range(400))
    data = gzip.compress(lines.encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    result = ingest(cut, batch_id="b")
    _assert_consistent(result)
    assert 0 < result.documents.height < 400
    reason = _only_reason(result)
    assert "corrupt or truncated" in reason and "re-compress" in reason
    assert result.quarantine["locator"][0].startswith("cut.jsonl.gz after cut.jsonl.gz:")


def test_parquet_dataset_folder_skips_its_markers(tmp_path: Path) -> None:
    folder = tmp_path / "corpus.parquet"
    folder.mkdir()
    for part in range(2):
        pl.DataFrame(ROWS[part::2]).write_parquet(folder / f"part-{part:05d}.parquet")
        (folder / f".part-{part:05d}.parquet.crc").write_bytes(b"\x00crc")
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / "._SUCCESS.crc").write_bytes(b"\x00crc")
    result = ingest(folder, batch_id="b")
    _assert_consistent(result)
    assert result.quarantine.height == 0
    assert sorted(result.documents["text"].to_list()) == sorted(r["text"] for r in ROWS)


def test_compressed_parquet_and_unknown_compressed_formats_are_refused(tmp_path: Path) -> None:
    for name in ("rows.parquet.gz", "notes.txt.gz"):
        (tmp_path / name).write_bytes(b"\x1f\x8b")
        with pytest.raises(IngestError, match=r"unknown format .*may be compressed"):
            ingest(tmp_path / name, batch_id="b")


def test_inbox_takes_compressed_batches_under_their_plain_name(tmp_path: Path) -> None:
    from curation.ingest.inbox import scan_inbox
    (tmp_path / "acme-2026-12.jsonl.gz").write_bytes(b"")
    (tmp_path / "rows.csv.zst").write_bytes(b"")
    (tmp_path / "photo.png.gz").write_bytes(b"")
    scan = scan_inbox(tmp_path)
    assert sorted(b.key for b in scan.batches) == ["acme-2026-12", "rows"]
    assert [s.split(":")[0] for s in scan.skipped] == ["photo.png.gz"]


def test_json_array_file_reads_each_element_as_a_record(tmp_path: Path) -> None:
    """The inbox takes NAME.json as a batch, so ingest must read it: an array of records."""
    path = tmp_path / "batch.json"
    path.write_text(json.dumps([*ROWS, "not an object"], indent=2), encoding="utf-8")
    result = ingest(path, batch_id="b")
    _assert_consistent(result)
    assert result.documents["text"].to_list() == [r["text"] for r in ROWS]
    assert result.documents["locator"].to_list() == [f"batch.json:record {i}" for i in (1, 2, 3)]
    assert result.quarantine["locator"].to_list() == ["batch.json:record 4"]
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"id": "a", "text": "x"},\n  {"id": \n]', encoding="utf-8")
    reason = _only_reason(ingest(broken, batch_id="b"))
    assert "malformed JSON array" in reason and "line 4" in reason
    lines = tmp_path / "lines.json"  # JSON Lines under a .json name
    _write_jsonl(lines, ROWS)
    assert ingest(lines, batch_id="b").documents.height == 3


def test_record_count_estimate_decides_the_in_process_path(tmp_path: Path) -> None:
    """`curation run` runs a batch's steps in one process at or below `sharding.in_process_max_docs`: the count
    stops past the limit (a compressed file is decompressed only that far) and says None where it cannot be
    cheap (folders of record files, a corrupt compressed file)."""
    from curation.preflight import count_records_upto

    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "text": "x"}) + "\n\n" for i in range(10)), encoding="utf-8")
    assert count_records_upto(jsonl, 64) == 10
    assert count_records_upto(jsonl, 3) == 4  # stopped past the limit
    csv = tmp_path / "a.csv"
    csv.write_text("id,text\n1,a\n2,b\n", encoding="utf-8")
    assert count_records_upto(csv, 64) == 2
    folder = tmp_path / "files"
    folder.mkdir()
    for i in range(5):
        (folder / f"f{i}.py").write_text("x = 1\n", encoding="utf-8")
    assert count_records_upto(folder, 64) == 5
    (folder / "more.jsonl").write_text("{}\n", encoding="utf-8")
    assert count_records_upto(folder, 64) is None
    import gzip

    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(jsonl.read_bytes()))
    assert count_records_upto(gz, 64) == 10  # decompressed only as far as needed
    assert count_records_upto(gz, 3) == 4
    corrupt = tmp_path / "b.jsonl.gz"
    corrupt.write_bytes(b"\x1f\x8b not gzip")
    assert count_records_upto(corrupt, 64) is None
